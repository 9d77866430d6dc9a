// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Test helper for tests/mpi and tests/gpu: initialises the crius runtime under
// crius-launch and prints, per rank, one line
//   RANKINFO {"rank":..,"env":{...},"tp_group":[..],"dp_group":[..],"pp_group":[..]}
// where the groups are the world ranks found *inside* the MPI communicators.
//   --perturb-rank R   rank R changes its plan first (collective validation test)
//   --nccl             also build the NCCL communicators and all-reduce over them
//                      (exit 77 on every rank when no GPU is usable)
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "launcher/runtime.h"
#ifdef CRIUS_HAVE_NCCL
#include "launcher/nccl_comm.h"
#endif

using namespace crius::launcher;

static std::vector<int> members(MPI_Comm comm, int world_rank) {
  if (comm == MPI_COMM_NULL) return {};
  int n = 0;
  MPI_Comm_size(comm, &n);
  std::vector<int> out(static_cast<size_t>(n));
  MPI_Allgather(&world_rank, 1, MPI_INT, out.data(), 1, MPI_INT, comm);
  return out;
}

int main(int argc, char** argv) {
  int perturb = -1;
  bool nccl = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--perturb-rank") && i + 1 < argc) perturb = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--nccl")) nccl = true;
  }
  MPI_Init(&argc, &argv);
  int wr = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  if (wr == perturb) {
    const char* text = std::getenv("CRIUS_PLAN_JSON");
    auto p = crius::estimator::plan_from_json_text(text ? text : "", "CRIUS_PLAN_JSON");
    if (p) {
      Plan changed = *p;
      changed.micro_batches += 1;
      setenv("CRIUS_PLAN_JSON", crius::estimator::plan_text(changed).c_str(), 1);
    }
  }
  auto rt = Runtime::init(MPI_COMM_WORLD);
  if (!rt) {
    std::string msg = "crius-rankinfo: rank " + std::to_string(wr) + ": " + rt.error() + "\n";
    std::fputs(msg.c_str(), stderr);  // one write: ranks share the terminal
    MPI_Finalize();
    return 3;
  }
  const Runtime& r = **rt;
  nlohmann::json j;
  j["rank"] = r.rank();
  nlohmann::json env;
  for (const char* k : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
                        "CRIUS_TP_SIZE", "CRIUS_TP_RANK", "CRIUS_DP_SIZE", "CRIUS_DP_RANK", "CRIUS_STAGES",
                        "CRIUS_PP_RANK", "CRIUS_STAGE_LAYERS", "CRIUS_LAYERS", "CRIUS_MICRO_BATCHES", "CRIUS_RANK_ORDER",
                        "CRIUS_PLAN_HASH", "CRIUS_HOST", "CRIUS_CELL", "CRIUS_PLAN_JSON", "SLURMD_NODENAME"})
    if (const char* v = std::getenv(k)) env[k] = v;
  j["env"] = env;
  j["tp_group"] = members(r.tp_comm(), r.rank());
  j["dp_group"] = members(r.dp_comm(), r.rank());
  j["pp_group"] = members(r.pp_comm(), r.rank());
  // A real collective per group: the sum of world ranks over the TP group.
  int sum = 0;
  MPI_Allreduce(&wr, &sum, 1, MPI_INT, MPI_SUM, r.tp_comm());
  j["tp_rank_sum"] = sum;
  int rc = 0;
  if (nccl) {
#ifdef CRIUS_HAVE_NCCL
    std::string why;
    int local_ok = gpu_available(&why) ? 1 : 0, all_ok = 0;
    MPI_Allreduce(&local_ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
      if (wr == 0) std::cout << "SKIP: no usable GPU (" << (why.empty() ? "on another rank" : why) << ")" << std::endl;
      MPI_Finalize();
      return 77;
    }
    int ndev = 1;
    cudaGetDeviceCount(&ndev);
    const char* lr = std::getenv("LOCAL_RANK");
    auto comms = NcclComms::init(r, (lr ? std::atoi(lr) : 0) % ndev);
    if (!comms) {
      std::cerr << "crius-rankinfo: " << comms.error() << "\n";
      MPI_Finalize();
      return 4;
    }
    float* d = nullptr;
    float h = static_cast<float>(wr), out = 0;
    cudaMalloc(&d, sizeof(float));
    cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
    ncclAllReduce(d, d, 1, ncclFloat, ncclSum, (*comms)->tp(), (*comms)->stream());
    if (auto w = (*comms)->wait((*comms)->stream(), 60); !w) {
      std::cerr << "crius-rankinfo: " << w.error() << "\n";
      rc = 4;
    }
    cudaMemcpy(&out, d, sizeof out, cudaMemcpyDeviceToHost);
    cudaFree(d);
    j["nccl_tp_rank_sum"] = static_cast<int>(out);
#else
    if (wr == 0) std::cout << "SKIP: built without NCCL (HAVE_NCCL=0)" << std::endl;
    MPI_Finalize();
    return 77;
#endif
  }
  std::cout << "RANKINFO " << j.dump() << std::endl;
  MPI_Finalize();
  return rc;
}
