// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher/nccl_comm.h"

#include <unistd.h>

#include <chrono>
#include <thread>

namespace crius::launcher {

namespace {
int g_rank = -1;
}

bool gpu_available(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA device visible";
    return false;
  }
  return true;
}

std::string nccl_where(const char* file, int line) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string("host ") + host + " rank " + std::to_string(g_rank) + " " + file + ":" + std::to_string(line);
}

namespace {

Result<void> init_local(NcclComms* self, const Runtime& rt, int device, ncclComm_t* world, ncclComm_t* tp,
                        ncclComm_t* dp, ncclComm_t* pp, cudaStream_t* stream) {
  (void)self;
  CRIUS_CUDA_CHECK(cudaSetDevice(device));
  CRIUS_CUDA_CHECK(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
  ncclUniqueId id;
  if (rt.rank() == 0) CRIUS_NCCL_CHECK(ncclGetUniqueId(&id), nullptr);
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, rt.world());
  CRIUS_NCCL_CHECK(ncclCommInitRank(world, rt.world_size(), id, rt.rank()), *world);
  const RankInfo& me = rt.me();
  const Layout& l = rt.layout();
  CRIUS_NCCL_CHECK(ncclCommSplit(*world, l.tp_group(rt.rank()).front(), me.tp_rank, tp, nullptr), *world);
  CRIUS_NCCL_CHECK(ncclCommSplit(*world, l.dp_group(rt.rank()).front(), me.dp_rank, dp, nullptr), *world);
  int color = rt.pp_comm() == MPI_COMM_NULL ? NCCL_SPLIT_NOCOLOR : l.pp_chain_of(rt.rank());
  CRIUS_NCCL_CHECK(ncclCommSplit(*world, color, me.stage, pp, nullptr), *world);
  return {};
}

}  // namespace

Result<std::unique_ptr<NcclComms>> NcclComms::init(const Runtime& rt, int device) {
  g_rank = rt.rank();
  std::unique_ptr<NcclComms> c(new NcclComms());
  std::string why;
  Result<void> local;
  if (!gpu_available(&why)) local = make_error(nccl_where(__FILE__, __LINE__) + ": " + why);
  // All ranks need a GPU before anyone starts a collective init.
  if (auto r = agree(rt.world(), local); !r) return make_error(r.error());
  local = init_local(c.get(), rt, device, &c->m_world, &c->m_tp, &c->m_dp, &c->m_pp, &c->m_stream);
  if (!local.ok()) c->abort();
  if (auto r = agree(rt.world(), local); !r) return make_error(r.error());
  return c;
}

Result<void> NcclComms::poll() {
  for (ncclComm_t c : {m_world, m_tp, m_dp, m_pp}) {
    if (!c) continue;
    ncclResult_t async = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(c, &async);
    if (r != ncclSuccess || (async != ncclSuccess && async != ncclInProgress)) {
      std::string msg = nccl_where(__FILE__, __LINE__) + ": asynchronous NCCL error: " +
                        ncclGetErrorString(r != ncclSuccess ? r : async) + " (" + ncclGetLastError(c) + ")";
      abort();
      return make_error(msg);
    }
  }
  return {};
}

Result<void> NcclComms::wait(cudaStream_t stream, double timeout_s) {
  auto start = std::chrono::steady_clock::now();
  while (true) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess) return {};
    if (e != cudaErrorNotReady) {
      abort();
      return make_error(nccl_where(__FILE__, __LINE__) + ": cudaStreamQuery: " + cudaGetErrorString(e));
    }
    if (auto r = poll(); !r) return r;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s) {
      abort();
      return make_error(nccl_where(__FILE__, __LINE__) + ": NCCL operation did not finish within " +
                        std::to_string(timeout_s) + " s; communicators aborted");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void NcclComms::abort() {
  if (m_aborted) return;
  m_aborted = true;
  for (ncclComm_t* c : {&m_pp, &m_dp, &m_tp, &m_world})
    if (*c) {
      ncclCommAbort(*c);
      *c = nullptr;
    }
}

NcclComms::~NcclComms() {
  if (!m_aborted) {
    for (ncclComm_t* c : {&m_pp, &m_dp, &m_tp, &m_world})
      if (*c) {
        ncclCommFinalize(*c);
        ncclCommDestroy(*c);
        *c = nullptr;
      }
  }
  if (m_stream) cudaStreamDestroy(m_stream);
}

}  // namespace crius::launcher
