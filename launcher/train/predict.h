// crius-train's prediction: the estimator's iteration time for the plan being
// run, on a profile of this machine measured at start.  Every rank measures at
// the same time, so shared or oversubscribed cores are in the figures.
#pragma once

#include <mpi.h>

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

// The estimator's cost of `plan` for crius-train's model on the profile (runtime
// profile megatron, no recompute); an error says why there is none.
Result<estimator::Estimate> predict(const MachineProfile& profile, const ModelConfig& model, const std::string& dtype,
                                    const Plan& plan, int samples);

}  // namespace crius::launcher::train
