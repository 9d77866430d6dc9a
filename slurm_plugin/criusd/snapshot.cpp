// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/criusd/snapshot.h"

#include <charconv>

namespace crius::slurm {

namespace {

nlohmann::json gn_json(const GpusNodes& g) {
  nlohmann::json j = {{"gpus", g.gpus}, {"nodes", g.nodes}};
  if (!g.typed.empty()) j["typed"] = g.typed;
  if (g.cpus >= 0) j["cpus"] = g.cpus;
  if (g.mem_mb >= 0) j["mem_mb"] = g.mem_mb;
  return j;
}
GpusNodes gn_value(const nlohmann::json& v, std::int64_t absent) {
  GpusNodes g;
  g.gpus = v.value("gpus", absent);
  g.nodes = v.value("nodes", absent);
  g.typed = v.value("typed", std::map<std::string, std::int64_t>{});
  g.cpus = v.value("cpus", absent);
  g.mem_mb = v.value("mem_mb", absent);
  return g;
}
GpusNodes gn_from(const nlohmann::json& j, const char* key) {
  return j.contains(key) ? gn_value(j.at(key), -1) : GpusNodes{};
}

}  // namespace

nlohmann::json to_json(const Snapshot& s) {
  nlohmann::json j;
  j["now"] = s.now;
  j["nodes"] = nlohmann::json::array();
  for (const auto& n : s.nodes)
    j["nodes"].push_back({{"name", n.name}, {"partitions", n.partitions}, {"gpu", n.gpu},
                          {"gpus", n.gpus}, {"gpus_used", n.gpus_used}, {"usable", n.usable},
                          {"features", n.features}});
  j["jobs"] = nlohmann::json::array();
  for (const auto& b : s.jobs) {
    j["jobs"].push_back({{"id", b.id}, {"name", b.name}, {"state", b.state},
                         {"partition", b.partition}, {"features", b.features},
                         {"tres_per_node", b.tres_per_node}, {"admin_comment", b.admin_comment}, {"comment", b.comment},
                         {"nodes", b.nodes}, {"req_nodes", b.req_nodes}, {"num_nodes", b.num_nodes},
                         {"submit_time", b.submit_time}, {"start_time", b.start_time}, {"end_time", b.end_time},
                         {"restarts", b.restarts}, {"cpus_per_task", b.cpus_per_task}, {"mem_mb", b.mem_mb}, {"mem_per_cpu", b.mem_per_cpu}, {"priority", b.priority}, {"reason", b.reason}, {"requeued_held", b.requeued_held},
                         {"begin_time", b.begin_time}, {"batch", b.batch}, {"requeue", b.requeue},
                         {"user", b.user}, {"account", b.account}, {"qos", b.qos},
                         {"eligible_time", b.eligible_time}, {"reservation", b.reservation},
                         {"time_limit_s", b.time_limit_s}, {"assoc_id", b.assoc_id},
                         {"user_groups", b.user_groups},
                         {"array_job_id", b.array_job_id}, {"array_tasks", b.array_tasks},
                         {"het_job_id", b.het_job_id}});
    if (b.array_task_id) j["jobs"].back()["array_task_id"] = *b.array_task_id;
  }
  j["reservations"] = nlohmann::json::array();
  for (const auto& r : s.reservations)
    j["reservations"].push_back({{"name", r.name}, {"start_time", r.start_time}, {"end_time", r.end_time},
                                 {"all_nodes", r.all_nodes}, {"nodes", r.nodes}});
  j["partitions"] = nlohmann::json::array();
  for (const auto& p : s.partitions)
    j["partitions"].push_back({{"name", p.name}, {"allow_accounts", p.allow_accounts}, {"deny_accounts", p.deny_accounts},
                               {"allow_qos", p.allow_qos}, {"deny_qos", p.deny_qos}, {"allow_groups", p.allow_groups},
                               {"max_nodes", p.max_nodes}, {"max_time_s", p.max_time_s}, {"qos", p.qos}, {"up", p.up},
                               {"allow_gids", p.allow_gids}, {"allow_uids", p.allow_uids}});
  j["enforce_limits"] = s.enforce_limits;
  j["qos"] = nlohmann::json::array();
  for (const auto& q : s.qos) {
    nlohmann::json by_user = nlohmann::json::object();
    for (const auto& [user, used] : q.used_by_user) by_user[user] = gn_json(used);
    j["qos"].push_back({{"id", q.id}, {"name", q.name}, {"max_per_job", gn_json(q.max_per_job)},
                        {"max_per_node", gn_json(q.max_per_node)}, {"max_per_user", gn_json(q.max_per_user)},
                        {"grp", gn_json(q.grp)}, {"used", gn_json(q.used)}, {"used_by_user", by_user},
                        {"max_wall_s", q.max_wall_s}});
  }
  j["default_accounts"] = nlohmann::json::object();
  for (const auto& [uid, account] : s.default_accounts) j["default_accounts"][std::to_string(uid)] = account;
  j["assocs"] = nlohmann::json::array();
  for (const auto& a : s.assocs)
    j["assocs"].push_back({{"id", a.id}, {"parent_id", a.parent_id}, {"user", a.user}, {"account", a.account},
                           {"uid", a.uid}, {"default_qos_id", a.default_qos_id},
                           {"partition", a.partition}, {"max_per_job", gn_json(a.max_per_job)},
                           {"max_per_node", gn_json(a.max_per_node)}, {"grp", gn_json(a.grp)},
                           {"used", gn_json(a.used)}, {"max_wall_s", a.max_wall_s}});
  return j;
}

std::string slurm_id(const SlurmJob& j) {
  if (j.array_task_id) return std::to_string(j.array_job_id) + "_" + std::to_string(*j.array_task_id);
  return std::to_string(j.id);
}

Result<Snapshot> snapshot_from_json(const nlohmann::json& j, const std::string& source) {
  try {
    Snapshot s;
    s.now = j.at("now").get<std::int64_t>();
    for (const auto& n : j.at("nodes")) {
      SlurmNode node;
      node.name = n.at("name").get<std::string>();
      node.partitions = n.at("partitions").get<std::vector<std::string>>();
      node.gpu = n.at("gpu").get<std::string>();
      node.gpus = n.at("gpus").get<int>();
      node.gpus_used = n.value("gpus_used", 0);
      node.usable = n.value("usable", true);
      node.features = n.value("features", std::vector<std::string>{});
      s.nodes.push_back(std::move(node));
    }
    for (const auto& b : j.at("jobs")) {
      SlurmJob job;
      job.id = b.at("id").get<std::uint32_t>();
      job.name = b.value("name", "");
      job.state = b.at("state").get<std::string>();
      job.partition = b.value("partition", "");
      job.features = b.value("features", "");
      job.tres_per_node = b.value("tres_per_node", "");
      job.admin_comment = b.value("admin_comment", "");
      job.comment = b.value("comment", "");
      job.nodes = b.value("nodes", std::vector<std::string>{});
      job.req_nodes = b.value("req_nodes", std::vector<std::string>{});
      job.num_nodes = b.value("num_nodes", 0);
      job.submit_time = b.value("submit_time", std::int64_t{0});
      job.start_time = b.value("start_time", std::int64_t{0});
      job.end_time = b.value("end_time", std::int64_t{0});
      job.restarts = b.value("restarts", 0);
      job.cpus_per_task = b.value("cpus_per_task", std::uint16_t{1});
      job.mem_mb = b.value("mem_mb", std::int64_t{0});
      job.mem_per_cpu = b.value("mem_per_cpu", false);
      job.priority = b.value("priority", std::uint32_t{1});
      job.reason = b.value("reason", "None");
      job.requeued_held = b.value("requeued_held", false);
      job.begin_time = b.value("begin_time", std::int64_t{0});
      job.batch = b.value("batch", true);
      job.requeue = b.value("requeue", true);
      job.user = b.value("user", "");
      job.account = b.value("account", "");
      job.qos = b.value("qos", "");
      job.eligible_time = b.value("eligible_time", job.submit_time);
      job.reservation = b.value("reservation", "");
      job.time_limit_s = b.value("time_limit_s", std::int64_t{0});
      job.array_job_id = b.value("array_job_id", std::uint32_t{0});
      if (b.contains("array_task_id")) job.array_task_id = b.at("array_task_id").get<std::uint32_t>();
      job.array_tasks = b.value("array_tasks", "");
      job.het_job_id = b.value("het_job_id", std::uint32_t{0});
      job.assoc_id = b.value("assoc_id", std::uint32_t{0});
      job.user_groups = b.value("user_groups", std::vector<std::string>{});
      s.jobs.push_back(std::move(job));
    }
    for (const auto& r : j.value("reservations", nlohmann::json::array())) {
      SlurmReservation resv;
      resv.name = r.at("name").get<std::string>();
      resv.start_time = r.at("start_time").get<std::int64_t>();
      resv.end_time = r.at("end_time").get<std::int64_t>();
      resv.all_nodes = r.value("all_nodes", false);
      resv.nodes = r.value("nodes", std::vector<std::string>{});
      s.reservations.push_back(std::move(resv));
    }
    for (const auto& p : j.value("partitions", nlohmann::json::array())) {
      SlurmPartition part;
      part.name = p.at("name").get<std::string>();
      using names = std::vector<std::string>;
      part.allow_accounts = p.value("allow_accounts", names{});
      part.deny_accounts = p.value("deny_accounts", names{});
      part.allow_qos = p.value("allow_qos", names{});
      part.deny_qos = p.value("deny_qos", names{});
      part.allow_groups = p.value("allow_groups", names{});
      part.max_nodes = p.value("max_nodes", 0);
      part.max_time_s = p.value("max_time_s", std::int64_t{0});
      part.qos = p.value("qos", "");
      part.up = p.value("up", true);
      part.allow_gids = p.value("allow_gids", std::vector<std::uint32_t>{});
      part.allow_uids = p.value("allow_uids", std::vector<std::uint32_t>{});
      s.partitions.push_back(std::move(part));
    }
    s.enforce_limits = j.value("enforce_limits", false);
    for (const auto& q : j.value("qos", nlohmann::json::array())) {
      SlurmQos qos;
      qos.id = q.value("id", std::uint32_t{0});
      qos.name = q.at("name").get<std::string>();
      qos.max_per_job = gn_from(q, "max_per_job");
      qos.max_per_node = gn_from(q, "max_per_node");
      qos.max_per_user = gn_from(q, "max_per_user");
      qos.grp = gn_from(q, "grp");
      qos.used = gn_from(q, "used");
      qos.max_wall_s = q.value("max_wall_s", std::int64_t{-1});
      for (const auto& [user, used] : q.value("used_by_user", nlohmann::json::object()).items())
        qos.used_by_user[user] = gn_value(used, 0);
      s.qos.push_back(std::move(qos));
    }
    for (const auto& [uid, account] : j.value("default_accounts", nlohmann::json::object()).items())
      s.default_accounts[static_cast<std::uint32_t>(std::stoul(uid))] = account.get<std::string>();
    for (const auto& a : j.value("assocs", nlohmann::json::array())) {
      SlurmAssoc assoc;
      assoc.id = a.at("id").get<std::uint32_t>();
      assoc.parent_id = a.value("parent_id", std::uint32_t{0});
      assoc.user = a.value("user", "");
      assoc.account = a.value("account", "");
      assoc.partition = a.value("partition", "");
      assoc.uid = a.value("uid", std::uint32_t{0});
      assoc.default_qos_id = a.value("default_qos_id", std::uint32_t{0});
      assoc.max_per_job = gn_from(a, "max_per_job");
      assoc.max_per_node = gn_from(a, "max_per_node");
      assoc.grp = gn_from(a, "grp");
      assoc.used = gn_from(a, "used");
      assoc.max_wall_s = a.value("max_wall_s", std::int64_t{-1});
      s.assocs.push_back(std::move(assoc));
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    return make_error(source + ": not a criusd state snapshot: " + e.what());
  }
}

int gpus_per_node_of(const std::string& tres_per_node) {
  // Entries are ';' or ',' separated; the GPU entry is "gres:gpu[:type]:N" or "gres/gpu..."
  size_t pos = 0;
  while (pos <= tres_per_node.size()) {
    size_t end = tres_per_node.find_first_of(",;", pos);
    if (end == std::string::npos) end = tres_per_node.size();
    std::string item = tres_per_node.substr(pos, end - pos);
    if (item.rfind("gres:gpu", 0) == 0 || item.rfind("gres/gpu", 0) == 0 || item.rfind("gpu", 0) == 0) {
      size_t colon = item.rfind(':');
      if (colon != std::string::npos) {
        int n = 0;
        auto [p, ec] = std::from_chars(item.data() + colon + 1, item.data() + item.size(), n);
        if (ec == std::errc() && p == item.data() + item.size()) return n;
      }
    }
    pos = end + 1;
  }
  return 0;
}

}  // namespace crius::slurm
