#include "slurm_plugin/criusd/snapshot.h"

#include <charconv>

namespace crius::slurm {

nlohmann::json to_json(const Snapshot& s) {
  nlohmann::json j;
  j["now"] = s.now;
  j["nodes"] = nlohmann::json::array();
  for (const auto& n : s.nodes)
    j["nodes"].push_back({{"name", n.name}, {"partitions", n.partitions}, {"gpu", n.gpu},
                          {"gpus", n.gpus}, {"gpus_used", n.gpus_used}, {"usable", n.usable}});
  j["jobs"] = nlohmann::json::array();
  for (const auto& b : s.jobs) {
    j["jobs"].push_back({{"id", b.id}, {"name", b.name}, {"state", b.state},
                         {"partition", b.partition}, {"features", b.features},
                         {"tres_per_node", b.tres_per_node}, {"admin_comment", b.admin_comment}, {"comment", b.comment},
                         {"nodes", b.nodes}, {"req_nodes", b.req_nodes}, {"num_nodes", b.num_nodes},
                         {"submit_time", b.submit_time}, {"start_time", b.start_time}, {"end_time", b.end_time},
                         {"restarts", b.restarts}, {"cpus_per_task", b.cpus_per_task}, {"priority", b.priority}, {"reason", b.reason}, {"requeued_held", b.requeued_held},
                         {"begin_time", b.begin_time}, {"batch", b.batch}, {"requeue", b.requeue},
                         {"user", b.user}, {"account", b.account}, {"qos", b.qos},
                         {"eligible_time", b.eligible_time}, {"reservation", b.reservation},
                         {"time_limit_s", b.time_limit_s},
                         {"array_job_id", b.array_job_id}, {"array_tasks", b.array_tasks},
                         {"het_job_id", b.het_job_id}});
    if (b.array_task_id) j["jobs"].back()["array_task_id"] = *b.array_task_id;
  }
  j["reservations"] = nlohmann::json::array();
  for (const auto& r : s.reservations)
    j["reservations"].push_back({{"name", r.name}, {"start_time", r.start_time}, {"end_time", r.end_time},
                                 {"all_nodes", r.all_nodes}, {"nodes", r.nodes}});
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
