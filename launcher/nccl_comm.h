// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// NCCL communicators matching the runtime's MPI groups (built only with
// HAVE_NCCL=1). The world communicator comes from one unique id that rank 0
// creates and MPI_Bcast shares; TP, DP and PP communicators from ncclCommSplit,
// called by every rank in the same order. Every call is checked (host, rank,
// file:line, ncclGetLastError); `wait` polls asynchronous errors and aborts the
// communicators instead of hanging.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <string>

#include "estimator/result.h"
#include "launcher/runtime.h"

namespace crius::launcher {

// True when CUDA reports at least one usable device; otherwise `why` says why.
bool gpu_available(std::string* why);

std::string nccl_where(const char* file, int line);  // "host vm rank 3 file.cpp:42"

#define CRIUS_CUDA_CHECK(call)                                                                             \
  do {                                                                                                     \
    cudaError_t crius_e_ = (call);                                                                         \
    if (crius_e_ != cudaSuccess)                                                                           \
      return ::crius::make_error(::crius::launcher::nccl_where(__FILE__, __LINE__) + ": " #call ": " +    \
                                 cudaGetErrorString(crius_e_));                                            \
  } while (0)

#define CRIUS_NCCL_CHECK(call, comm)                                                                       \
  do {                                                                                                     \
    ncclResult_t crius_r_ = (call);                                                                        \
    if (crius_r_ != ncclSuccess && crius_r_ != ncclInProgress)                                             \
      return ::crius::make_error(::crius::launcher::nccl_where(__FILE__, __LINE__) + ": " #call ": " +    \
                                 ncclGetErrorString(crius_r_) + " (" + ncclGetLastError(comm) + ")");      \
  } while (0)

class NcclComms {
 public:
  // Collective over rt.world(): every rank fails together when one fails.
  static Result<std::unique_ptr<NcclComms>> init(const Runtime& rt, int device);
  ~NcclComms();  // ncclCommDestroy, or ncclCommAbort after an error
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;

  ncclComm_t world() const { return m_world; }
  ncclComm_t tp() const { return m_tp; }
  ncclComm_t dp() const { return m_dp; }
  ncclComm_t pp() const { return m_pp; }  // nullptr where the runtime has no PP communicator
  cudaStream_t stream() const { return m_stream; }

  // Asynchronous errors of any communicator; aborts all of them on error.
  Result<void> poll();
  // Waits for `stream` while polling for NCCL errors; aborts after timeout_s.
  Result<void> wait(cudaStream_t stream, double timeout_s = 300.0);
  void abort();

 private:
  NcclComms() = default;
  ncclComm_t m_world = nullptr, m_tp = nullptr, m_dp = nullptr, m_pp = nullptr;
  cudaStream_t m_stream = nullptr;
  bool m_aborted = false;
};

}  // namespace crius::launcher
