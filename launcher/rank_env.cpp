// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher/rank_env.h"

#include "common/json_reader.h"
#include "common/util.h"
#include "launcher/plan_source.h"

namespace crius::launcher {

nlohmann::json to_json(const LaunchSpec& s) {
  nlohmann::json env = nlohmann::json::array();
  for (const auto& [k, v] : s.job_env) env.push_back({k, v});
  return {{"plan", estimator::to_json(s.plan)}, {"hosts", s.hosts}, {"gpus_per_node", s.gpus_per_node},
          {"master_addr", s.master_addr}, {"master_port", s.master_port}, {"job_env", env},
          {"bind_cpus", s.bind_cpus}};
}

Result<LaunchSpec> launch_spec_from_json(const nlohmann::json& j, const std::string& what) {
  util::JsonObject r(j, what);
  if (auto ok = r.only({"plan", "hosts", "gpus_per_node", "master_addr", "master_port", "job_env", "bind_cpus"}); !ok)
    return make_error(ok.error());
  LaunchSpec s;
  if (!j.contains("plan")) return make_error(what + ": key 'plan' is missing");
  auto plan = estimator::plan_from_json(j["plan"], what + ": plan");
  if (!plan) return make_error(plan.error());
  s.plan = std::move(*plan);
  try {
    s.hosts = j.at("hosts").get<std::vector<std::string>>();
    for (const auto& kv : j.value("job_env", nlohmann::json::array()))
      s.job_env.emplace_back(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
    s.bind_cpus = j.value("bind_cpus", false);
  } catch (const nlohmann::json::exception& e) {
    return make_error(what + ": " + e.what());
  }
  CRIUS_JSON_GET(s.gpus_per_node, r.integer("gpus_per_node", 1, 1 << 20));
  CRIUS_JSON_GET(s.master_addr, r.string("master_addr"));
  CRIUS_JSON_GET(s.master_port, r.integer("master_port", 1, 65535));
  return s;
}

RankEnv rank_env(const Layout& layout, const LaunchSpec& spec, int rank, std::optional<int> local_rank,
                 std::optional<int> local_size) {
  const RankInfo& me = layout.rank(rank);
  const Plan& p = layout.plan();
  const StagePlan& st = p.stages[me.stage];
  RankEnv e;
  e.torchrun = {{"RANK", std::to_string(me.rank)},
                {"LOCAL_RANK", std::to_string(local_rank.value_or(me.local_rank))},
                {"WORLD_SIZE", std::to_string(layout.world_size())},
                {"LOCAL_WORLD_SIZE", std::to_string(local_size.value_or(layout.ranks_on_node(me.node)))},
                {"GROUP_RANK", std::to_string(me.node)},
                {"MASTER_ADDR", spec.master_addr},
                {"MASTER_PORT", std::to_string(spec.master_port)}};
  // The record's variables first: the plan's and the rank's below are the ones it runs.
  e.crius = spec.job_env;
  for (auto& kv : job::plan_env(p)) e.crius.push_back(std::move(kv));
  e.crius.insert(e.crius.end(), {{"CRIUS_TP_SIZE", std::to_string(st.tp)},
                                 {"CRIUS_TP_RANK", std::to_string(me.tp_rank)},
                                 {"CRIUS_DP_SIZE", std::to_string(st.dp)},
                                 {"CRIUS_DP_RANK", std::to_string(me.dp_rank)},
                                 {"CRIUS_CP_SIZE", std::to_string(st.cp)},
                                 {"CRIUS_CP_RANK", std::to_string(me.cp_rank)},
                                 {"CRIUS_PP_RANK", std::to_string(me.stage)},
                                 {"CRIUS_RANK_ORDER", st.cp > 1 ? "tp-cp-dp-pp" : "tp-dp-pp"},
                                 {"CRIUS_PLAN_HASH", util::hex64(estimator::plan_hash(p))},
                                 {"CRIUS_HOST", me.host},
                                 {"CRIUS_NODELIST", util::join(layout.hosts(), ",")},
                                 {"CRIUS_GPUS_PER_NODE", std::to_string(spec.gpus_per_node)}});
  if (p.has_layers())
    e.crius.emplace_back("CRIUS_LAYERS", std::to_string(st.layer_begin) + "-" + std::to_string(st.layer_end - 1));
  return e;
}

std::vector<int> cpu_share(const std::vector<int>& cpus, int local_rank, int local_size) {
  const long n = static_cast<long>(cpus.size());
  if (n == 0 || local_size <= 0 || local_rank < 0 || local_rank >= local_size) return cpus;
  if (local_size >= n) return {cpus[static_cast<size_t>(local_rank * n / local_size)]};
  return std::vector<int>(cpus.begin() + local_rank * n / local_size, cpus.begin() + (local_rank + 1) * n / local_size);
}

}  // namespace crius::launcher
