// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-train's GPU backend (built with HAVE_CUDA=1): matrix products on cuBLAS
// and, with NCCL, the TP/DP all-reduces on the runtime's NCCL communicators.
// Activations stay in host memory between operations (the trainer's model is
// tiny; this path exists to exercise cuBLAS and NCCL under a real plan).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdlib>

#include "launcher/train/model.h"
#ifdef CRIUS_HAVE_NCCL
#include "launcher/nccl_comm.h"
#endif

namespace crius::launcher::train {

namespace {

class GpuBackend : public Backend {
 public:
  ~GpuBackend() override {
    for (void* p : m_buf)
      if (p) cudaFree(p);
    if (m_handle) cublasDestroy(m_handle);
  }

  // Collective with NCCL: NcclComms::init agrees on GPU availability first, so
  // every rank fails together when one has no GPU.
  bool init(const Runtime& rt, std::string* why) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    const char* lr = std::getenv("LOCAL_RANK");
    m_device = n > 0 ? (lr ? std::atoi(lr) : 0) % n : 0;
#ifdef CRIUS_HAVE_NCCL
    auto c = NcclComms::init(rt, m_device);
    if (!c) {
      *why = c.error();
      return false;
    }
    m_nccl = std::move(*c);
#else
    (void)rt;
    if (e != cudaSuccess || n == 0) {
      *why = e != cudaSuccess ? std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e) : "no CUDA device";
      return false;
    }
#endif
    (void)e;
    if ((e = cudaSetDevice(m_device)) != cudaSuccess) {
      *why = std::string("cudaSetDevice: ") + cudaGetErrorString(e);
      return false;
    }
    if (cublasCreate(&m_handle) != CUBLAS_STATUS_SUCCESS) {
      *why = "cublasCreate failed";
      return false;
    }
    return true;
  }

  void gemm(bool ta, bool tb, int m, int n, int k, const double* a, const double* b, double beta, double* c) override {
    run_gemm(ta, tb, m, n, k, a, b, beta, c);
  }
  void gemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float beta, float* c) override {
    run_gemm(ta, tb, m, n, k, a, b, beta, c);
  }
  void allreduce(double* buf, size_t n, MPI_Comm comm, int group) override { run_allreduce(buf, n, comm, group); }
  void allreduce(float* buf, size_t n, MPI_Comm comm, int group) override { run_allreduce(buf, n, comm, group); }
  std::string name() const override {
#ifdef CRIUS_HAVE_NCCL
    return "gpu (cuBLAS + NCCL)";
#else
    return "gpu (cuBLAS + MPI)";
#endif
  }

 private:
  void* buffer(int i, size_t bytes) {
    if (m_size[i] < bytes) {
      if (m_buf[i]) cudaFree(m_buf[i]);
      check(cudaMalloc(&m_buf[i], bytes), "cudaMalloc");
      m_size[i] = bytes;
    }
    return m_buf[i];
  }
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      std::fprintf(stderr, "crius-train: %s: %s\n", what, cudaGetErrorString(e));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  static void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "crius-train: %s: cuBLAS status %d\n", what, static_cast<int>(s));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }

  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  template <typename T>
  void run_gemm(bool ta, bool tb, int m, int n, int k, const T* a, const T* b, T beta, T* c) {
    size_t sa = static_cast<size_t>(m) * k * sizeof(T), sb = static_cast<size_t>(k) * n * sizeof(T),
           sc = static_cast<size_t>(m) * n * sizeof(T);
    T* da = static_cast<T*>(buffer(0, sa));
    T* db = static_cast<T*>(buffer(1, sb));
    T* dc = static_cast<T*>(buffer(2, sc));
    check(cudaMemcpy(da, a, sa, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(db, b, sb, cudaMemcpyHostToDevice), "cudaMemcpy");
    if (beta != T(0)) check(cudaMemcpy(dc, c, sc, cudaMemcpyHostToDevice), "cudaMemcpy");
    const T one = 1;
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if constexpr (sizeof(T) == 8)
      check(cublasDgemm(m_handle, opb, opa, n, m, k, &one, db, tb ? k : n, da, ta ? m : k, &beta, dc, n), "cublasDgemm");
    else
      check(cublasSgemm(m_handle, opb, opa, n, m, k, &one, db, tb ? k : n, da, ta ? m : k, &beta, dc, n), "cublasSgemm");
    check(cudaMemcpy(c, dc, sc, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }

  template <typename T>
  void run_allreduce(T* buf, size_t n, MPI_Comm comm, int group) {
#ifdef CRIUS_HAVE_NCCL
    (void)comm;
    T* d = static_cast<T*>(buffer(3, n * sizeof(T)));
    check(cudaMemcpy(d, buf, n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    ncclComm_t c = group == 0 ? m_nccl->tp() : m_nccl->dp();
    ncclResult_t r = ncclAllReduce(d, d, n, sizeof(T) == 8 ? ncclDouble : ncclFloat, ncclSum, c, m_nccl->stream());
    if (r != ncclSuccess) {
      std::fprintf(stderr, "crius-train: ncclAllReduce: %s (%s)\n", ncclGetErrorString(r), ncclGetLastError(c));
      m_nccl->abort();
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (auto w = m_nccl->wait(m_nccl->stream()); !w) {
      std::fprintf(stderr, "crius-train: %s\n", w.error().c_str());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    check(cudaMemcpy(buf, d, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
#else
    (void)group;
    MPI_Allreduce(MPI_IN_PLACE, buf, static_cast<int>(n), sizeof(T) == 8 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, comm);
#endif
  }

  int m_device = 0;
  cublasHandle_t m_handle = nullptr;
  void* m_buf[4] = {};
  size_t m_size[4] = {};
#ifdef CRIUS_HAVE_NCCL
  std::unique_ptr<NcclComms> m_nccl;
#endif
};

}  // namespace

std::unique_ptr<Backend> gpu_backend(const Runtime& rt, std::string* why) {
  auto b = std::make_unique<GpuBackend>();
  if (!b->init(rt, why)) return nullptr;
  return b;
}

}  // namespace crius::launcher::train
