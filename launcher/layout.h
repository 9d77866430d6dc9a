// Rank layout of a training plan: which global rank runs which pipeline stage,
// data-parallel replica and tensor-parallel slice, the TP/DP/PP groups, and on
// which host every rank sits. Pure C++ (no MPI): crius-launch, the runtime and
// the tests share it.
//
// Rank order (DESIGN.md): every pipeline stage owns a contiguous block of ranks;
// inside a stage TP varies fastest, then DP. With equal stages this is
// Megatron-LM's "tp-dp-pp" order: rank = tp_rank + tp*(dp_rank + dp*pp_rank).
//
// PP groups ("pipeline chains"). Let size_s = tp_s*dp_s and G = max_s size_s.
// Chain g (0 <= g < G) holds, for every stage s, the rank with stage-local index
// floor(g*size_s/G). With equal stage sizes (every Cell plan) the chains
// partition the ranks and equal Megatron's PP groups; where a stage is smaller,
// its ranks sit in several chains and a rank's own pp_group is the lowest chain
// holding it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimator/result.h"

namespace crius::launcher {

struct StagePlan {
  int first_layer = -1;  // inclusive; -1 when the plan names no layers
  int last_layer = -1;   // inclusive
  int tp = 1;
  int dp = 1;
  int size() const { return tp * dp; }
};

struct Plan {
  std::vector<StagePlan> stages;
  int micro_batches = 1;
  int micro_batch_size = 1;
  std::string schedule = "1f1b";  // gpipe | 1f1b | interleaved:V
  std::string recompute = "none";  // none | selective | full
  bool sequence_parallel = false;
  int zero = 0;

  int pp() const { return static_cast<int>(stages.size()); }
  int world_size() const;
  bool has_layers() const { return !stages.empty() && stages[0].first_layer >= 0; }
  int num_layers() const;  // 0 without layer ranges
  bool uniform() const;    // all stages share tp and dp
};

// Canonical text of a plan ("pp=2;stages=0-11:tp2:dp2,12-23:tp2:dp2;mb=8;mbs=1;..."),
// the same on every rank for the same plan; its FNV-1a hash is the plan hash.
std::string canonical(const Plan& plan);
std::uint64_t plan_hash(const Plan& plan);

// Checks a plan: positive sizes, contiguous layer ranges from 0, known schedule
// and recompute. `what` names the source in messages ("--plan plan.json").
Result<void> validate(const Plan& plan, const std::string& what);

// Plan sources.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_env();
// From the CRIUS_* submission environment. Returns an empty optional (no error)
// when neither CRIUS_PLAN_JSON nor CRIUS_PP_SIZE/CRIUS_STAGE_TP is set.
Result<std::optional<Plan>> plan_from_env(const EnvLookup& env);
// From a crius-estimate JSON document: {"cells":[{..."plan":{...}}]} (the first
// feasible cell), one cell object, {"plan":{...}} or the plan object itself.
Result<Plan> plan_from_json(const nlohmann::json& doc, const std::string& what);
Result<Plan> plan_from_json_text(std::string_view text, const std::string& what);
nlohmann::json to_json(const Plan& plan);
// From --tp/--pp/--dp flags: each a single value or a comma list per stage;
// stage_layers like "0-11,12-23" (optional); layers = total (optional, splits evenly).
Result<Plan> plan_from_shape(const std::string& tp, int pp, const std::string& dp,
                             const std::string& stage_layers, int layers);

// Parsers shared with the environment reader.
Result<std::vector<int>> parse_int_list(std::string_view text, const std::string& what);
Result<std::vector<std::pair<int, int>>> parse_layer_ranges(std::string_view text,
                                                            const std::string& what);
std::string format_layer_ranges(const Plan& plan);  // "0-11,12-23"
std::string format_int_list(const std::vector<int>& values);

// Slurm host lists: "a100-[1-2],v100-1,n[01-03,7]" -> names.
Result<std::vector<std::string>> expand_hostlist(std::string_view list);

struct RankInfo {
  int rank = 0;
  int stage = 0;
  int dp_rank = 0;
  int tp_rank = 0;
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
  int rank_of(int stage, int dp_rank, int tp_rank) const;  // -1 when out of range
  int ranks_on_node(int node) const;
  const std::vector<std::string>& hosts() const { return m_hosts; }

  std::vector<int> tp_group(int r) const;
  std::vector<int> dp_group(int r) const;
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

// Megatron-LM flags for a plan (--print-megatron-args); an error where
// Megatron-LM cannot express the plan (per-stage TP/DP shapes).
Result<std::vector<std::string>> megatron_args(const Plan& plan);

}  // namespace crius::launcher
