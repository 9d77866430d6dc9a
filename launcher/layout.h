// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Rank layout of a training plan (estimator::Plan): which global rank runs which
// pipeline stage, data-parallel replica and tensor-parallel slice, the TP/DP/PP
// groups, and on which host every rank sits. Pure C++ (no MPI): crius-launch, the
// runtime and the tests share it.  Where a plan comes from: launcher/plan_source.h.
//
// Rank order (DESIGN.md): every pipeline stage owns a contiguous block of ranks;
// inside a stage TP varies fastest, then CP (context parallelism), then DP. With equal stages
// this is Megatron-LM's "tp-cp-dp-pp" order: rank = tp_rank + tp*(cp_rank + cp*(dp_rank + dp*pp_rank))
// ("tp-dp-pp" where cp is 1).
//
// PP groups ("pipeline chains"). Let size_s = tp_s*dp_s and G = max_s size_s.
// Chain g (0 <= g < G) holds, for every stage s, the rank with stage-local index
// floor(g*size_s/G). With equal stage sizes (every Cell plan) the chains
// partition the ranks and equal Megatron's PP groups; where a stage is smaller,
// its ranks sit in several chains and a rank's own pp_group is the lowest chain
// holding it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimator/plan.h"
#include "estimator/result.h"

namespace crius::launcher {

using estimator::Plan;
using estimator::StagePlan;

// Slurm host lists: "a100-[1-2],v100-1,n[01-03,7]" -> names.
Result<std::vector<std::string>> expand_hostlist(std::string_view list);

struct RankInfo {
  int rank = 0;
  int stage = 0;
  int dp_rank = 0;
  int tp_rank = 0;
  int cp_rank = 0;
  int node = 0;        // index into the host list
  int local_rank = 0;  // rank on its node
  std::string host;
};

class Layout {
 public:
  // hosts: the nodes in order; gpus_per_node: ranks per node (block placement).
  // An empty host list means one local host named `local_host`.
  static Result<Layout> make(const Plan& plan, std::vector<std::string> hosts, int gpus_per_node);

  const Plan& plan() const { return m_plan; }
  int world_size() const { return m_world; }
  const RankInfo& rank(int r) const { return m_ranks.at(r); }
  const std::vector<RankInfo>& ranks() const { return m_ranks; }
  int stage_base(int stage) const { return m_base.at(stage); }
  int rank_of(int stage, int dp_rank, int tp_rank, int cp_rank = 0) const;  // -1 when out of range
  int ranks_on_node(int node) const;
  const std::vector<std::string>& hosts() const { return m_hosts; }

  std::vector<int> tp_group(int r) const;
  std::vector<int> dp_group(int r) const;  // same stage, TP and CP rank
  std::vector<int> cp_group(int r) const;  // same stage, TP and DP rank: the ring sharing a sequence
  std::vector<int> pp_group(int r) const;  // the rank's own chain
  int pp_chain_of(int r) const;            // index of that chain
  std::vector<std::vector<int>> tp_groups() const;
  std::vector<std::vector<int>> dp_groups() const;
  std::vector<std::vector<int>> pp_groups() const;  // all chains (see top of file)

  nlohmann::json to_json() const;  // {"ranks":[...]}
  std::string table() const;       // the --dry-run table

 private:
  Plan m_plan;
  int m_world = 0;
  int m_gpus_per_node = 0;
  std::vector<int> m_base;
  std::vector<std::string> m_hosts;
  std::vector<RankInfo> m_ranks;
};

}  // namespace crius::launcher
