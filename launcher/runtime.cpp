// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher/runtime.h"

#include <climits>
#include <cstdio>
#include <cstdlib>

namespace crius::launcher {

Result<void> agree(MPI_Comm comm, const Result<void>& local) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int mine = local.ok() ? INT_MAX : rank, first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return {};
  std::string msg = local.ok() ? std::string() : local.error();
  int len = static_cast<int>(msg.size());
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  msg.resize(static_cast<size_t>(len));
  MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm);
  return make_error("rank " + std::to_string(first) + ": " + msg);
}

Runtime::Runtime(MPI_Comm world, Layout layout, int rank)
    : m_world(world), m_layout(std::move(layout)), m_rank(rank) {}

Runtime::~Runtime() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Comm* c : {&m_tp, &m_dp, &m_pp})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
}

namespace {

Result<Layout> layout_from_env(const Plan& plan) {
  std::vector<std::string> hosts;
  int gpn = 0;
  if (const char* n = std::getenv("CRIUS_NODELIST")) {
    auto h = expand_hostlist(n);
    if (!h) return make_error("CRIUS_NODELIST: " + h.error());
    hosts = *h;
  }
  if (const char* g = std::getenv("CRIUS_GPUS_PER_NODE")) gpn = std::atoi(g);
  if (hosts.empty() || gpn <= 0) {
    hosts.clear();
    gpn = 0;
  }
  return Layout::make(plan, hosts, gpn);
}

}  // namespace

Result<std::unique_ptr<Runtime>> Runtime::finish(MPI_Comm world, Result<Layout> layout, Result<void> local) {
  int rank = 0, size = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  if (local.ok() && !layout.ok()) local = make_error(layout.error());
  if (local.ok() && layout->world_size() != size)
    local = make_error("the plan has " + std::to_string(layout->world_size()) + " ranks but MPI started " +
                       std::to_string(size) + " (" + estimator::plan_text(layout->plan()) + ")");
  if (auto r = agree(world, local); !r) return make_error(r.error());
  // Every rank must run the same plan: compare the hashes.
  std::uint64_t h = estimator::plan_hash(layout->plan()), lo = 0, hi = 0;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, world);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, world);
  if (lo != hi) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "ranks disagree on the plan (hashes %016llx .. %016llx); ", static_cast<unsigned long long>(lo),
                  static_cast<unsigned long long>(hi));
    std::string msg = std::string(buf) + "rank 0 has " + estimator::plan_text(layout->plan());
    int len = static_cast<int>(msg.size());
    MPI_Bcast(&len, 1, MPI_INT, 0, world);
    msg.resize(static_cast<size_t>(len));
    MPI_Bcast(msg.data(), len, MPI_CHAR, 0, world);
    return make_error(msg);
  }
  std::unique_ptr<Runtime> rt(new Runtime(world, std::move(*layout), rank));
  return rt;
}

Result<std::unique_ptr<Runtime>> Runtime::init(MPI_Comm world) {
  Result<void> local;
  Plan plan;
  const char* text = std::getenv("CRIUS_PLAN_JSON");
  if (!text || !*text) {
    local = make_error("no plan in the environment (CRIUS_PLAN_JSON); start the program with crius-launch");
  } else if (auto p = estimator::plan_from_json_text(text, "CRIUS_PLAN_JSON"); !p) {
    local = make_error(p.error());
  } else {
    plan = *p;
  }
  Result<Layout> layout = local.ok() ? layout_from_env(plan) : Result<Layout>(make_error(local.error()));
  auto rt = finish(world, std::move(layout), local);
  if (!rt) return rt;
  if (auto r = agree(world, (*rt)->build_comms()); !r) return make_error(r.error());
  (*rt)->m_hash = estimator::plan_hash((*rt)->plan());
  return rt;
}

Result<std::unique_ptr<Runtime>> Runtime::init(MPI_Comm world, const Plan& plan) {
  auto rt = finish(world, Layout::make(plan, {}, 0), Result<void>());
  if (!rt) return rt;
  if (auto r = agree(world, (*rt)->build_comms()); !r) return make_error(r.error());
  (*rt)->m_hash = estimator::plan_hash((*rt)->plan());
  return rt;
}

Result<void> Runtime::build_comms() {
  const RankInfo& r = me();
  int rc = MPI_Comm_split(m_world, m_layout.tp_group(m_rank).front(), r.tp_rank, &m_tp);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_split(m_world, m_layout.dp_group(m_rank).front(), r.dp_rank, &m_dp);
  // PP communicators exist where the chains partition the ranks (equal stage sizes).
  bool partition = true;
  for (const auto& s : plan().stages) partition = partition && s.gpus() == plan().stages[0].gpus();
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_split(m_world, partition ? m_layout.pp_chain_of(m_rank) : MPI_UNDEFINED, r.stage, &m_pp);
  if (rc != MPI_SUCCESS) {
    char err[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, err, &len);
    return make_error("MPI_Comm_split failed: " + std::string(err, static_cast<size_t>(len)));
  }
  return {};
}

}  // namespace crius::launcher
