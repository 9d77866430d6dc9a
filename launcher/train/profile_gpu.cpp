// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher/train/profile_gpu.h"

#include "launcher/train/predict.h"

#include <algorithm>
#include <cstdlib>

#ifdef CRIUS_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif
#ifdef CRIUS_HAVE_NCCL
#include <nccl.h>
#endif

namespace crius::launcher::train {

namespace {

// The same verdict on every rank: the first failure anywhere stops everyone.
Result<void> agree(MPI_Comm world, const std::string& local_error) {
  int bad = local_error.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, world);
  if (!any) return {};
  return make_error(local_error.empty() ? std::string("another rank's GPU failed") : local_error);
}

}  // namespace

#ifdef CRIUS_HAVE_CUDA

bool gpu_path_built() { return true; }

namespace {

std::string cuda_error(const char* what, cudaError_t e) { return std::string(what) + ": " + cudaGetErrorString(e); }

int local_device() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return -1;
  const char* lr = std::getenv("LOCAL_RANK");
  return (lr ? std::atoi(lr) : 0) % n;
}

// Seconds per call of `f` on the current stream, over `calls` calls after one warm-up.
template <typename F>
double timed(F&& f, int calls) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();
  cudaEventRecord(a);
  for (int i = 0; i < calls; ++i) f();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / 1e3 / calls;
}

}  // namespace

Result<GpuMeasurement> measure_gpu(const std::vector<std::string>& dtypes, const std::vector<int>& hidden, int tokens,
                                   MPI_Comm world) {
  GpuMeasurement out;
  std::string error;
  const int dev = local_device();
  cublasHandle_t handle = nullptr;
  if (dev < 0) error = "no CUDA device";
  else if (cudaError_t e = cudaSetDevice(dev); e != cudaSuccess) error = cuda_error("cudaSetDevice", e);
  else if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) error = "cublasCreate failed";
  if (auto ok = agree(world, error); !ok) return make_error(ok.error());

  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, dev);
  out.device = prop.name;
  out.memory_gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024 * 1024);

  // Buffers for the largest GEMM (4-byte elements cover every type).
  size_t most = 0;
  for (int h : hidden)
    most = std::max({most, static_cast<size_t>(tokens) * 4 * h, static_cast<size_t>(4) * h * h});
  void *a = nullptr, *b = nullptr, *c = nullptr;
  const size_t bytes = most * 4;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
      cudaMalloc(&c, bytes) != cudaSuccess)
    error = "cudaMalloc of " + std::to_string(3 * bytes) + " bytes failed";
  else {
    cudaMemset(a, 0, bytes);
    cudaMemset(b, 0, bytes);
  }
  if (auto ok = agree(world, error); !ok) {
    cudaFree(a), cudaFree(b), cudaFree(c);
    if (handle) cublasDestroy(handle);
    return make_error(ok.error());
  }

  // Device memory bandwidth: a device-to-device copy of the buffer, read + write.
  MPI_Barrier(world);
  const double copy = timed([&] { cudaMemcpyAsync(c, a, bytes, cudaMemcpyDeviceToDevice); }, 20);
  out.memory_gbs = mean_over(world, 2.0 * static_cast<double>(bytes) / copy / 1e9);

  for (const std::string& d : dtypes) {
    const cudaDataType_t type = d == "fp16" ? CUDA_R_16F : d == "bf16" ? CUDA_R_16BF : CUDA_R_32F;
    for (int h : hidden)
      for (auto [n, k] : {std::pair{h, h}, std::pair{4 * h, h}, std::pair{h, 4 * h}}) {
        const int m = tokens;
        const float one = 1.0f, zero = 0.0f;
        cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
        auto gemm = [&] {
          // Column-major C(n x m) = B(n x k) A(k x m): the row-major m x n product.
          st = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, type, n, a, type, k, &zero, c, type, n,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        };
        MPI_Barrier(world);
        const double s = timed(gemm, 10);
        if (auto ok = agree(world, st == CUBLAS_STATUS_SUCCESS ? "" : "cublasGemmEx (" + d + ") failed"); !ok) {
          cudaFree(a), cudaFree(b), cudaFree(c);
          cublasDestroy(handle);
          return make_error(ok.error());
        }
        out.gemm.push_back({d, m, n, k, mean_over(world, 2.0 * m * n * k / s / 1e12)});
      }
  }
  cudaFree(a), cudaFree(b), cudaFree(c);
  cublasDestroy(handle);
  return out;
}

#ifdef CRIUS_HAVE_NCCL
Result<GpuCollectives> measure_gpu_collectives(double max_bytes, MPI_Comm world) {
  int rank = 0, size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  GpuCollectives out;
  std::vector<GpuCommPoint>& rows = out.points;
  if (size < 2) return out;
  ncclUniqueId id;
  if (rank == 0) ncclGetUniqueId(&id);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world);
  std::string error;
  ncclComm_t comm = nullptr;
  const int dev = local_device();
  if (dev < 0) error = "no CUDA device";
  else if (cudaSetDevice(dev) != cudaSuccess) error = "cudaSetDevice failed";
  else if (ncclResult_t r = ncclCommInitRank(&comm, size, id, rank); r != ncclSuccess)
    error = std::string("ncclCommInitRank: ") + ncclGetErrorString(r);
  if (auto ok = agree(world, error); !ok) return make_error(ok.error());
  // Ranks per node, for the nodes a group spans (groups are consecutive ranks).
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int per_node = 1;
  MPI_Comm_size(node, &per_node);
  MPI_Comm_free(&node);
  MPI_Allreduce(MPI_IN_PLACE, &per_node, 1, MPI_INT, MPI_MIN, world);
  out.ranks_per_node = per_node;
  void *a = nullptr, *b = nullptr;
  cudaMalloc(&a, static_cast<size_t>(max_bytes));
  cudaMalloc(&b, static_cast<size_t>(max_bytes));
  // Groups of 2, 4, ... consecutive ranks, every group at once (ncclCommSplit), then send
  // between the two ranks of each pair.
  for (int g = 2; g <= size; g *= 2) {
    if (size % g != 0) continue;
    ncclComm_t sub = nullptr;
    ncclResult_t sr = g == size ? ncclSuccess : ncclCommSplit(comm, rank / g, rank, &sub, nullptr);
    if (auto ok = agree(world, sr == ncclSuccess ? "" : std::string("ncclCommSplit: ") + ncclGetErrorString(sr)); !ok) {
      ncclCommDestroy(comm);
      return make_error(ok.error());
    }
    ncclComm_t c = g == size ? comm : sub;
    const int me = rank % g, spans = std::max(1, (g + per_node - 1) / per_node);
    for (const char* op : {"all-reduce", "all-gather", "reduce-scatter", "send"}) {
      const std::string o = op;
      if (o == "send" && g != 2) continue;
      for (double bytes = 8; bytes <= max_bytes; bytes *= 4) {
        const size_t count = static_cast<size_t>(bytes / 4), part = std::max<size_t>(1, count / g);
        ncclResult_t r = ncclSuccess;
        auto run = [&] {
          if (o == "all-reduce") r = ncclAllReduce(a, b, count, ncclFloat, ncclSum, c, nullptr);
          else if (o == "all-gather") r = ncclAllGather(a, b, part, ncclFloat, c, nullptr);
          else if (o == "reduce-scatter") r = ncclReduceScatter(a, b, part, ncclFloat, ncclSum, c, nullptr);
          else if (me == 0) r = ncclSend(a, count, ncclFloat, 1, c, nullptr);
          else r = ncclRecv(b, count, ncclFloat, 0, c, nullptr);
        };
        MPI_Barrier(world);
        double t = timed(run, 20);
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, world);
        if (auto ok = agree(world, r == ncclSuccess ? "" : o + ": " + ncclGetErrorString(r)); !ok) {
          if (sub) ncclCommDestroy(sub);
          ncclCommDestroy(comm);
          return make_error(ok.error());
        }
        const double recorded = o == "all-reduce" || o == "send" ? bytes : static_cast<double>(part) * g * 4;
        rows.push_back({o, g, spans, recorded, t});
      }
    }
    if (sub) ncclCommDestroy(sub);
  }
  cudaFree(a), cudaFree(b);
  ncclCommDestroy(comm);
  return out;
}
#else
Result<GpuCollectives> measure_gpu_collectives(double, MPI_Comm) {
  return make_error("this crius-profile was built without NCCL");
}
#endif

#else  // no CUDA

bool gpu_path_built() { return false; }

Result<GpuMeasurement> measure_gpu(const std::vector<std::string>&, const std::vector<int>&, int, MPI_Comm world) {
  (void)agree;
  (void)world;
  return make_error("this crius-profile was built without CUDA (HAVE_CUDA=0)");
}

Result<GpuCollectives> measure_gpu_collectives(double, MPI_Comm) {
  return make_error("this crius-profile was built without CUDA (HAVE_CUDA=0)");
}

#endif

}  // namespace crius::launcher::train
