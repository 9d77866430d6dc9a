// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-profile's GPU path (built with HAVE_CUDA=1): cuBLAS GEMMs at transformer shapes for
// each math type and device memory bandwidth on this rank's GPU, timed with CUDA events; with
// NCCL, collectives over all ranks' GPUs.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "estimator/result.h"

namespace crius::launcher::train {

struct GpuGemmPoint {
  std::string dtype;  // fp16, bf16, fp32
  int m = 0, n = 0, k = 0;
  double tflops = 0;  // mean over ranks
};

struct GpuMeasurement {
  std::string device;       // the CUDA device name, as nvidia-smi prints it
  double memory_gib = 0;    // total device memory
  double memory_gbs = 0;    // device-to-device copy: bytes read + written per second
  std::vector<GpuGemmPoint> gemm;
};

// Every rank measures its own GPU (LOCAL_RANK modulo the devices it sees) at the same time.
// `hidden`: transformer widths; each gives the GEMMs (tokens x h x h, tokens x 4h x h,
// tokens x h x 4h). An error (no CUDA device, a failing call) is the same on every rank.
Result<GpuMeasurement> measure_gpu(const std::vector<std::string>& dtypes, const std::vector<int>& hidden,
                                   int tokens, MPI_Comm world);

struct GpuCommPoint {
  std::string op;  // all-reduce, all-gather, reduce-scatter, send
  int group = 0, nodes_per_group = 1;
  double bytes = 0, time_s = 0;
};
// NCCL all-reduce, all-gather and reduce-scatter over groups of 2, 4, ... consecutive ranks
// (every group at once) and send within pairs, 8 bytes to `max_bytes`, x4 apart; the slowest
// rank's time. An error without NCCL.
struct GpuCollectives {
  int ranks_per_node = 1;
  std::vector<GpuCommPoint> points;
};
Result<GpuCollectives> measure_gpu_collectives(double max_bytes, MPI_Comm world);

// Built with CUDA (the GPU path exists in this binary).
bool gpu_path_built();

}  // namespace crius::launcher::train
