// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius runtime: what a C++ training program linked with libcrius_runtime.a
// gets from `crius-launch`: the plan and this rank's place in it, checked
// collectively, and MPI communicators for its TP, DP and PP groups. With NCCL
// (launcher/nccl_comm.h) the matching NCCL communicators.
//
//   MPI_Init(&argc, &argv);
//   auto rt = crius::launcher::Runtime::init(MPI_COMM_WORLD);   // collective
//   if (!rt) { /* every rank gets the same message */ }
//   MPI_Allreduce(..., rt->tp_comm());
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "estimator/result.h"
#include "launcher/layout.h"

namespace crius::launcher {

// Fails every rank with the same message when any rank fails: `local` is this
// rank's result; the message of the lowest failing rank wins.
Result<void> agree(MPI_Comm comm, const Result<void>& local);

class Runtime {
 public:
  // Reads the plan from the environment crius-launch set (CRIUS_PLAN_JSON), checks that all ranks hold the same plan (hash) and
  // that the world size matches, then builds the group communicators.
  static Result<std::unique_ptr<Runtime>> init(MPI_Comm world = MPI_COMM_WORLD);
  // The same from an explicit plan (tests, crius-train --verify on MPI_COMM_SELF).
  static Result<std::unique_ptr<Runtime>> init(MPI_Comm world, const Plan& plan);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const Plan& plan() const { return m_layout.plan(); }
  const Layout& layout() const { return m_layout; }
  const RankInfo& me() const { return m_layout.rank(m_rank); }
  int rank() const { return m_rank; }
  int world_size() const { return m_layout.world_size(); }
  std::uint64_t plan_hash() const { return m_hash; }

  MPI_Comm world() const { return m_world; }
  MPI_Comm tp_comm() const { return m_tp; }  // ranks ordered by tp_rank
  MPI_Comm dp_comm() const { return m_dp; }  // ranks ordered by dp_rank
  MPI_Comm pp_comm() const { return m_pp; }  // this rank's chain, ordered by stage

 private:
  Runtime(MPI_Comm world, Layout layout, int rank);
  static Result<std::unique_ptr<Runtime>> finish(MPI_Comm world, Result<Layout> layout, Result<void> local);
  Result<void> build_comms();

  MPI_Comm m_world;
  Layout m_layout;
  int m_rank;
  std::uint64_t m_hash = 0;
  MPI_Comm m_tp = MPI_COMM_NULL, m_dp = MPI_COMM_NULL, m_pp = MPI_COMM_NULL;
};

}  // namespace crius::launcher
