// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-train's prediction: the estimator's iteration time for the plan being
// run, on a profile of this machine measured at start.  Every rank measures at
// the same time, so shared or oversubscribed cores are in the figures.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "estimator/estimator.h"
#include "launcher/layout.h"
#include "launcher/train/model.h"

namespace crius::launcher::train {

struct MachineProfile {
  double gemm_gflops = 0;    // per rank, the backend's GEMMs at the model's MLP shapes
  double memory_gbs = 0;     // per rank, a streaming triad
  double allreduce_gbs = 0;  // bus bandwidth of a large all-reduce over all ranks
  double latency_us = 0;     // an 8-byte all-reduce over all ranks
  int nodes = 1, ranks_per_node = 1;
  double memory_gib = 0;     // per rank: physical memory / ranks per node
};

// Collective over `world`; every rank gets the same profile.  `rows` is the
// number of token rows one replica of stage 0 runs per micro-batch.
MachineProfile measure_profile(Backend& backend, const std::string& dtype, const ModelConfig& model, int rows, int tp,
                               MPI_Comm world);

// What crius-profile(1) measured on a machine, as the estimator uses it: the efficiency of
// attention cores (against the GEMM rate) and of memory-bound work (against the triad), and
// the measured collectives (null: bandwidth and latency of the start-up profile).
struct Calibration {
  double attention_efficiency = 1, memory_efficiency = 1;
  // The triad bandwidth memory_efficiency was fitted against (the entry's memory_bw_gbs; 0 =
  // none): it replaces the one measured at start, a noisy figure on a shared machine, so that
  // memory-bound work costs the same effective rate it was calibrated at.
  double memory_gbs = 0;
  std::shared_ptr<const estimator::CommTable> comm;
  std::string source;  // the file
};
// FILE is crius-profile's catalogue entry (TOML, one [gpu.<id>]); its collective table, FILE
// with .csv for .toml, is read when it exists.
Result<Calibration> load_calibration(const std::string& path);
// The collective table beside a calibration: FILE with .csv for .toml (or .csv appended).
std::string calibration_table_path(const std::string& toml_path);
// The mean over the ranks of `world` of a per-rank figure (collective).
double mean_over(MPI_Comm world, double v);

// The estimator's cost of `plan` for crius-train's model on the profile (runtime
// profile megatron, no recompute); an error says why there is none. With a calibration,
// its efficiencies and collectives apply on top of the profile's rates.
Result<estimator::Estimate> predict(const MachineProfile& profile, const ModelConfig& model, const std::string& dtype,
                                    const Plan& plan, int samples, const Calibration* calibration = nullptr);

// One rank's step of crius-train's model, split by where the time went.
struct StepSplit {
  double total_s = 0, gemm_s = 0, attention_s = 0;
};
// crius-profile's fit: the GEMM rate (GFLOP/s) and the attention and memory efficiencies with
// which the estimator's cost of that one-rank step (`plan`, one stage of one GPU) has its GEMM,
// attention and remaining time equal to `split`'s.
struct StepFit {
  double gemm_gflops = 0, attention_efficiency = 0, memory_efficiency = 0;
  double estimated_before_s = 0;  // the step, on the profile alone
};
Result<StepFit> fit_step(const MachineProfile& profile, const ModelConfig& model, const std::string& dtype,
                         const Plan& plan, int samples, const StepSplit& split);

}  // namespace crius::launcher::train
