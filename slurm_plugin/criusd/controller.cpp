// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/criusd/controller.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <csignal>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "common/util.h"
#include "job/progress.h"
#include "scheduler/estimator_throughput.h"
#include "scheduler/scheduler.h"
#include "slurm_plugin/apply_cell.h"
#include "slurm_plugin/criusd/description.h"
#include "slurm_plugin/criusd/limits.h"

namespace crius::slurm {
namespace sch = crius::scheduler;

namespace {

bool is_active(const std::string& state) {
  return state == "PENDING" || state == "RUNNING" || state == "CONFIGURING";
}

// The Cell-optimal plan for the record's new Cell (the policy decides shapes, not
// plans): sets the stage count, the plan and its estimate; false when the Cell has
// no feasible plan, and then the record is left as it was.
bool replan(const estimator::Cluster& cluster, job::Record& rec, const estimator::Cell& to) {
  auto model = cluster.models.resolve(rec.request.model);
  if (!model) return false;
  estimator::Request req;
  req.model = *model;
  req.global_batch = rec.request.global_batch;
  req.runtime = rec.request.runtime;
  req.framework = rec.request.framework;
  estimator::Estimate e = estimator::best_for_allocation(req, cluster, to.gpu, to.nodes, to.gpus_per_node);
  if (!e.feasible) return false;
  rec.cell = to;
  rec.cell.stages = e.cell.stages;
  rec.plan = e.plan;
  rec.iter_time_s = e.iter_time_s;
  rec.samples_per_s = e.samples_per_s;
  rec.memory_gib = e.memory_gib;
  rec.by = "criusd";
  rec.partial = false;
  rec.top.clear();  // the ranking at submission no longer describes the job
  return true;
}

bool same_nodes(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

int signal_number(const std::string& name) {
  static const std::map<std::string, int> names = {
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"INT", SIGINT},
      {"HUP", SIGHUP},   {"CONT", SIGCONT}, {"URG", SIGURG}};
  std::string n = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  auto it = names.find(n);
  return it == names.end() ? -1 : it->second;
}

// Slurm's pending reasons that say the job's Cell is over a limit (slurm_job_reason_string): a
// Cell within the limits could run.
bool over_a_limit(const std::string& reason) {
  static const std::set<std::string> reasons = {
      "PartitionNodeLimit", "QOSMaxGRESPerJob", "AssocMaxGRESPerJob", "QOSMaxGRESPerNode",
      "AssocMaxGRESPerNode", "QOSMaxNodePerJobLimit", "AssocMaxNodePerJobLimit", "QOSMaxCpuPerJobLimit",
      "AssocMaxCpuPerJobLimit", "QOSMaxGRESPerUser", "QOSMaxNodePerUserLimit", "QOSGrpGRES",
      "AssocGrpGRES", "QOSGrpNodeLimit", "AssocGrpNodeLimit", "QOSGrpCpuLimit", "AssocGrpCpuLimit",
      "QOSMaxCpuPerNode", "AssocMaxCpuPerNode", "QOSMaxCpuPerUserLimit", "QOSMaxMemoryPerJob", "AssocMaxMemPerJob",
      "QOSMaxMemoryPerNode", "AssocMaxMemPerNode", "QOSGrpMemLimit", "AssocGrpMemLimit", "QOSMaxMemoryPerUser"};
  return reasons.count(reason) > 0;
}

// Slurm's pending reasons that say the job's time limit is over a limit: one crius set, the
// round sets again within it (crius_time_limit).
bool over_a_time_limit(const std::string& reason) {
  return reason == "PartitionTimeLimit" || reason == "QOSMaxWallDurationPerJobLimit" ||
         reason == "AssocMaxWallDurationPerJobLimit";
}

// An action on one job: its ids and what its new Cell's CPUs are counted from.
Action action_for(const SlurmJob& sj) {
  Action a;
  a.job = sj.id;
  a.slurm_id = slurm_id(sj);
  a.cpus_per_task = sj.cpus_per_task;
  a.admin_comment = sj.admin_comment;
  if (auto gres = split_tres(sj.tres_per_node.c_str())) a.other_gres = gres->others;
  return a;
}

// crius set the job's time limit (job_submit_crius(8), TIME LIMITS) and sets it with each Cell.
bool crius_sets_time_limit(const job::Record& rec) {
  return rec.time_limit_factor > 0 && rec.request.iters && rec.iter_time_s > 0;
}

// The time limit of a job whose limit crius set, in the Cell of `rec`'s estimate: for the
// iterations it has still to run (all, without a progress report; Slurm counts a requeued job's
// limit from its new start), at most the longest Slurm lets the job have there (limits.h); kept
// in `rec`. 0 where crius did not set it: the user's limit, or Slurm's default, stands. A limit
// someone changed since crius set it (its owner, an admin) is theirs: `rec` forgets crius's, and 0.
std::int64_t crius_time_limit(job::Record& rec, const SlurmJob& sj, const Snapshot& snap) {
  if (!crius_sets_time_limit(rec)) return 0;
  if (sj.time_limit_s != rec.time_limit_min * 60) {
    rec.time_limit_factor = 0;
    rec.time_limit_min = 0;
    return 0;
  }
  double left = static_cast<double>(*rec.request.iters);
  if (auto p = job::parse_progress_comment(sj.comment)) left -= std::min(static_cast<double>(p->done), left);
  SlurmPartition unknown;  // not read: the QOS's and association's limits still bind
  unknown.name = rec.cell.partition;
  const SlurmPartition* where = &unknown;
  for (const SlurmPartition& p : snap.partitions)
    if (p.name == rec.cell.partition) where = &p;
  rec.time_limit_min = job::time_limit_minutes(left, rec.iter_time_s, rec.time_limit_factor,
                                               longest_time_limit_s(snap, sj, *where));
  return rec.time_limit_min;
}

// A job that criusd signalled may save its checkpoint and exit (crius-train does): it ends
// COMPLETED or FAILED after the move began. Slurm can requeue a finished batch job, so the
// move goes on: requeued held, then the new Cell. A job cancelled or timed out stays ended,
// and so does one whose program reported its last iteration (it finished its training within
// the grace time; a requeue would run it again).
std::optional<Action> requeue_after_checkpoint_exit(const SlurmJob& sj) {
  if (sj.state != "COMPLETED" && sj.state != "FAILED") return std::nullopt;
  if (auto p = job::parse_progress_comment(sj.comment); p && p->done >= p->total) return std::nullopt;
  auto parsed = job::parse_record(sj.admin_comment);
  if (!parsed || !*parsed || !parsed->value().move) return std::nullopt;
  job::Record rec = std::move(parsed->value());
  const std::string phase = rec.move->phase;
  if (phase != "signalling" && phase != "signalled" && phase != "requeuing") return std::nullopt;
  if (sj.end_time < rec.move->since) return std::nullopt;
  Action a = action_for(sj);
  a.kind = Action::Kind::requeue;
  a.from = rec.cell;
  a.to = rec.move->target;
  a.reason = rec.move->reason + "; it ended after the checkpoint signal";
  a.nodes = rec.move->nodes;  // where it goes
  job::Record dropped = rec;
  dropped.move.reset();
  dropped.log_move_end("abandoned: the requeue after the checkpoint failed", sj.end_time);
  a.abandon = job::to_text(dropped);
  // Slurm refuses updates to a finished job: no record before the requeue. A criusd killed
  // right after it finds the job requeued held with the move still "signalled".
  rec.move->phase = "requeued";
  a.after = job::to_text(rec);
  return a;
}

}  // namespace

const char* to_string(Action::Kind k) {
  switch (k) {
    case Action::Kind::update_pending: return "update_pending";
    case Action::Kind::checkpoint: return "checkpoint";
    case Action::Kind::requeue: return "requeue";
    case Action::Kind::finish_move: return "finish_move";
  }
  return "?";
}

const std::vector<std::string>& controller_option_keys() {
  static const std::vector<std::string> keys = {
      "interval_s",     "policy",         "max_moves_per_round", "checkpoint_signal",         "checkpoint_grace_s",
      "restart_cost_s", "default_iterations", "skip_users",      "skip_accounts",             "skip_partitions",
      "skip_qos",       "min_runtime_s",  "max_moves_per_job_per_hour", "max_moves_per_user_per_hour", "lock_file",
      "metrics_file",   "rate_window_s",  "move_resume_limit_s", "max_checkpoint_grace_s"};
  return keys;
}

double checkpoint_grace(const job::Record& rec, const ControllerOptions& o) {
  if (!rec.request.checkpoint_grace_s) return o.checkpoint_grace_s;
  return std::min<double>(*rec.request.checkpoint_grace_s, o.max_checkpoint_grace_s);
}

Result<ControllerOptions> load_controller_options(const estimator::Cluster& cluster) {
  ControllerOptions o;
  if (const toml::node* m = cluster.table["job_submit"]["max_gpus"].node()) {  // job_submit_crius(8) owns it
    auto v = m->value<int64_t>();
    if (!v || *v < 1 || *v > 1'000'000)
      return make_error(cluster.path + ":" + std::to_string(m->source().begin.line) +
                        ": [job_submit] max_gpus must be a whole number from 1 to 1000000");
    o.max_gpus = static_cast<int>(*v);
  }
  if (const toml::node* f = cluster.table["job_submit"]["free_gpus_file"].node()) {
    auto v = f->value<std::string>();
    if (!v || (!v->empty() && v->front() != '/'))
      return make_error(cluster.path + ":" + std::to_string(f->source().begin.line) +
                        ": [job_submit] free_gpus_file must be an absolute path, or \"\" for none");
    o.free_gpus_file = *v;
  }
  if (auto f = free_gpus_file_override()) o.free_gpus_file = *f;
  if (const toml::node* f = cluster.table["job_submit"]["objective"].node()) {
    auto v = f->value<std::string>();
    auto parsed = v ? sch::parse_objective(*v) : Result<sch::Objective>(make_error(""));
    if (!parsed)
      return make_error(cluster.path + ":" + std::to_string(f->source().begin.line) +
                        ": [job_submit] objective must be \"adaptive\", \"throughput\" or \"efficiency\"");
    o.objective = *parsed;
  }
  const toml::table* t = cluster.table["criusd"].as_table();
  if (!t) return o;
  for (const auto& [key, node] : *t) {
    std::string k(key.str());
    auto where = [&] {
      const auto& src = node.source();
      return cluster.path + ":" + std::to_string(src.begin.line) + ":" +
             std::to_string(src.begin.column) + ": [criusd] " + k;
    };
    auto number = [&](double lo, double hi) -> Result<double> {
      auto v = node.value<double>();
      if (!v || *v < lo || *v > hi)
        return make_error(where() + " must be a number in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
      return *v;
    };
    if (k == "interval_s") {
      auto v = number(1, 86400); if (!v) return make_error(v.error()); o.interval_s = *v;
    } else if (k == "max_moves_per_round") {
      auto v = number(0, 10000); if (!v) return make_error(v.error());
      o.max_moves_per_round = static_cast<int>(*v);
    } else if (k == "checkpoint_grace_s") {
      auto v = number(0, 86400); if (!v) return make_error(v.error()); o.checkpoint_grace_s = *v;
    } else if (k == "restart_cost_s") {
      auto v = number(0, 86400); if (!v) return make_error(v.error()); o.restart_cost_s = *v;
    } else if (k == "default_iterations") {
      auto v = number(1, 1e12); if (!v) return make_error(v.error()); o.default_iterations = *v;
    } else if (k == "checkpoint_signal") {
      auto v = node.value<std::string>();
      int s = v ? signal_number(*v) : -1;
      if (s < 0) return make_error(where() + " must be a signal name (USR1, USR2, TERM, INT, HUP, URG)");
      o.checkpoint_signal = s;
    } else if (k == "min_runtime_s") {
      auto v = number(0, 1e7); if (!v) return make_error(v.error()); o.min_runtime_s = *v;
    } else if (k == "max_checkpoint_grace_s") {
      auto v = number(1, 86400); if (!v) return make_error(v.error()); o.max_checkpoint_grace_s = *v;
    } else if (k == "move_resume_limit_s") {
      auto v = number(1, 1e7); if (!v) return make_error(v.error()); o.move_resume_limit_s = *v;
    } else if (k == "rate_window_s") {
      auto v = number(1, 86400); if (!v) return make_error(v.error()); o.rate_window_s = *v;
    } else if (k == "max_moves_per_job_per_hour") {
      auto v = number(0, 16); if (!v) return make_error(v.error()); o.max_moves_per_job_per_hour = static_cast<int>(*v);
    } else if (k == "max_moves_per_user_per_hour") {
      auto v = number(0, 10000); if (!v) return make_error(v.error()); o.max_moves_per_user_per_hour = static_cast<int>(*v);
    } else if (k == "skip_users" || k == "skip_accounts" || k == "skip_partitions" || k == "skip_qos") {
      const toml::array* arr = node.as_array();
      if (!arr || arr->size() > 1024) return make_error(where() + " must be an array of names");
      std::vector<std::string> names;
      for (const auto& e : *arr) {
        auto v = e.value<std::string>();
        if (!v) return make_error(where() + " must hold strings");
        names.push_back(*v);
      }
      (k == "skip_users" ? o.skip_users : k == "skip_accounts" ? o.skip_accounts
                                        : k == "skip_partitions" ? o.skip_partitions : o.skip_qos) = names;
    } else if (k == "lock_file") {
      auto v = node.value<std::string>();
      if (!v || v->empty() || v->front() != '/') return make_error(where() + " must be an absolute path");
      o.lock_file = *v;
    } else if (k == "metrics_file") {
      auto v = node.value<std::string>();
      if (!v || (!v->empty() && v->front() != '/')) return make_error(where() + " must be an absolute path, or \"\" for none");
      o.metrics_file = *v;
    } else if (k == "policy") {
      auto v = node.value<std::string>();
      if (!v) return make_error(where() + " must be a string");
      if (!sch::make_policy(*v, {}))
        return make_error(where() + ": unknown policy '" + *v + "' (" +
                          util::join(sch::policy_names(), ", ") + ")");
      o.policy = *v;
    } else {
      return make_error(where() + ": unknown key (known: " + util::join(controller_option_keys(), ", ") + ")");
    }
  }
  // A move's next step comes at a round, at most interval_s late: a shorter limit would roll
  // back moves that nothing interrupted.
  if (o.move_resume_limit_s <= o.interval_s)
    return make_error(cluster.path + ": [criusd] move_resume_limit_s (" + util::fixed(o.move_resume_limit_s, 0) +
                      " s) must exceed interval_s (" + util::fixed(o.interval_s, 0) + " s)");
  return o;
}

std::vector<Action> rollback_actions(const Snapshot& snap) {
  std::vector<Action> out;
  for (const SlurmJob& sj : snap.jobs) {
    auto parsed = job::parse_record(sj.admin_comment);
    if (!parsed || !*parsed) continue;
    job::Record rec = std::move(parsed->value());
    const bool pending = sj.state == "PENDING", running = sj.state == "RUNNING";
    const bool ended_on_signal = !pending && !running && requeue_after_checkpoint_exit(sj).has_value();
    if (!rec.move && !(pending && !rec.nodes.empty())) continue;
    if (!pending && !running && !ended_on_signal) continue;
    Action a = action_for(sj);
    a.from = a.to = rec.cell;
    const bool moving = rec.move.has_value();
    if (rec.move) {
      a.reason = "rollback: the move to " + estimator::describe(rec.move->target) + " is dropped";
      rec.move.reset();
      rec.log_move_end("rolled back (criusd --rollback)", snap.now);
    }
    if (pending && !rec.nodes.empty()) {
      a.reason += std::string(a.reason.empty() ? "rollback: " : "; ") + "its pin to nodes " + util::join(rec.nodes, ",") + " is cleared";
      rec.nodes.clear();
      a.nodes = rec.nodes;
    }
    a.after = job::to_text(rec);
    if (ended_on_signal) {  // requeued held in its Cell, then released there
      Action requeue = a;
      requeue.kind = Action::Kind::requeue;
      out.push_back(requeue);
      a.kind = Action::Kind::finish_move;
      a.release = true;
    } else if (pending && sj.requeued_held && moving) {
      a.kind = Action::Kind::finish_move;  // the Cell of its record, then released (a hold not the move's stays)
      a.release = true;
    } else {
      a.kind = Action::Kind::update_pending;  // the record (and the pin) only
    }
    out.push_back(std::move(a));
  }
  return out;
}

nlohmann::json to_json(const Action& a) {
  nlohmann::json j = {{"action", to_string(a.kind)}, {"job", a.job},          {"from", estimator::to_json(a.from)},
          {"to", estimator::to_json(a.to)},       {"reason", a.reason},    {"from_samples_per_s", a.from_samples_per_s},
          {"to_samples_per_s", a.to_samples_per_s}, {"gain_samples_per_s", a.gain_samples_per_s}};
  if (a.nodes) j["nodes"] = *a.nodes;
  if (a.kind == Action::Kind::checkpoint) j["checkpoint_grace_s"] = a.grace_s;
  if (a.time_limit_min > 0) j["time_limit_min"] = a.time_limit_min;
  return j;
}

nlohmann::json to_json(const Round& r) {
  nlohmann::json j;
  j["decide_ms"] = r.decide_ms;
  j["actions"] = nlohmann::json::array();
  for (const auto& a : r.actions) j["actions"].push_back(to_json(a));
  j["notes"] = r.notes;
  j["jobs"] = nlohmann::json::array();
  for (const auto& s : r.jobs)
    j["jobs"].push_back({{"job", s.job}, {"state", s.state}, {"model", s.model},
                         {"global_batch", s.global_batch}, {"cell", estimator::to_json(s.cell)},
                         {"est_iter_time_s", s.est_iter_time_s},
                         {"done_iterations", s.done_iterations}, {"remaining_s", s.remaining_s}, {"move", s.move},
                         {"problem", s.problem}, {"considered", s.considered}});
  return j;
}

struct Controller::Impl {
  sch::EstimatorThroughput estimator;
  sch::CachedThroughput cached;
  // One policy for every round: what it keeps (crius: the Cells of each class of jobs) is a
  // memo, which decides nothing.
  std::unique_ptr<sch::Policy> policy;
  explicit Impl(const estimator::Cluster& c) : estimator(c), cached(estimator, 100'000) {}
};

Controller::Controller(const estimator::Cluster& cluster, ControllerOptions options)
    : m_cluster(cluster), m_options(std::move(options)), m_impl(std::make_unique<Impl>(cluster)) {}
Controller::~Controller() = default;

Result<Round> Controller::decide(const Snapshot& snap, bool moves_only) {
  auto t0 = std::chrono::steady_clock::now();
  Round round;
  const double now = static_cast<double>(snap.now);
  auto& tput = m_impl->cached;

  // Cluster state: the crius partitions Slurm has, their usable nodes.
  sch::ClusterState cluster;
  std::map<std::string, int> partition_index, node_index;
  for (const auto& p : m_cluster.partitions) {
    partition_index[p.name] = static_cast<int>(cluster.partitions.size());
    cluster.partitions.push_back({p.name, p.gpu, 0, p.gpus_per_node});
  }
  for (const auto& n : snap.nodes) {
    for (const auto& pname : n.partitions) {
      auto it = partition_index.find(pname);
      if (it == partition_index.end()) continue;
      auto& part = cluster.partitions[it->second];
      node_index[n.name] = static_cast<int>(cluster.nodes.size());
      cluster.nodes.push_back({n.name, it->second, part.gpu, n.gpus});  // less what others hold, below
      part.nodes += 1;
      break;  // a node belongs to the first crius partition listing it
    }
  }

  // Nodes Slurm gives no new job now: down, drained or failing, or in a reservation that is
  // active or starts before the next round (a job placed there would wait, ReqNodeNotAvail).
  // The jobs running there keep their GPUs; nothing is placed there.
  std::set<std::string> unavailable;
  for (const auto& n : snap.nodes)
    if (!n.usable) unavailable.insert(n.name);
  // One description of the cluster (description.h): where a node's GPUs are not crius.toml's,
  // the estimates and Cells of its partition would be another cluster's: nothing is placed there
  // until they agree, and the round says what differs. Another node count only bounds the Cells
  // offered (the nodes are Slurm's, each as described): it is said.
  for (const DescriptionCheck& c : check_description(m_cluster, snap)) {
    if (c.agrees()) continue;
    round.notes.push_back(c.text() + (c.usable() ? "" : "; nothing is placed there until they agree"));
    if (!c.usable()) unavailable.insert(c.nodes.begin(), c.nodes.end());
  }
  for (const auto& r : snap.reservations) {
    if (r.end_time <= snap.now || static_cast<double>(r.start_time) > now + m_options.interval_s) continue;
    if (r.all_nodes)
      for (const auto& n : snap.nodes) unavailable.insert(n.name);
    unavailable.insert(r.nodes.begin(), r.nodes.end());
  }

  // How a job's Slurm state differs from its record ("" if it does not): an admin's or the
  // owner's change crius did not make, or nodes that crius counts in another partition. Such a
  // job is left alone and reported; its GPUs stay taken (criusd(8), INCONSISTENT JOBS).
  auto differs = [&](const SlurmJob& sj, const job::Record& rec, bool running) -> std::string {
    const std::string verb = running ? "runs" : "asks";
    if (!rec.cell.partition.empty() && sj.partition != rec.cell.partition)
      return verb + " in partition " + sj.partition + ", its record says " + rec.cell.partition;
    const int gpn = gpus_per_node_of(sj.tres_per_node);
    if (gpn != rec.cell.gpus_per_node)
      return (running ? "has " : "asks for ") + std::to_string(gpn) + " GPUs per node in Slurm, its record says " +
             std::to_string(rec.cell.gpus_per_node);
    if (!running) return "";
    auto pit = partition_index.find(sj.partition);
    if (pit == partition_index.end()) return "runs outside the partitions of crius.toml";
    if (cluster.partitions[pit->second].gpu != rec.cell.gpu)
      return "its record's GPU type " + rec.cell.gpu + " is not partition " + sj.partition + "'s (" +
             cluster.partitions[pit->second].gpu + ")";
    if (static_cast<int>(sj.nodes.size()) != rec.cell.nodes)
      return "runs on " + std::to_string(sj.nodes.size()) + " nodes, its record says " + std::to_string(rec.cell.nodes);
    for (const auto& host : sj.nodes)
      if (auto it = node_index.find(host);
          it == node_index.end() || cluster.nodes[it->second].partition != pit->second)
        return "runs on node " + host + ", which crius counts in another partition or in none";
    return "";
  };

  // Moves criusd started in the last hour, per user (rate limits).
  std::map<std::string, int> user_moves;
  for (const auto& sj : snap.jobs) {
    if (!is_active(sj.state)) continue;
    auto parsed = job::parse_record(sj.admin_comment);
    if (!parsed || !*parsed) continue;
    for (const job::MoveLog& m : parsed->value().history)
      if (static_cast<double>(m.started) > now - m_options.rate_window_s) ++user_moves[sj.user];
  }
  auto listed = [](const std::vector<std::string>& list, const std::string& v) {
    return std::find(list.begin(), list.end(), v) != list.end();
  };

  // GPUs promised to jobs the policy does not place this round: the target nodes of a move in
  // flight, and the pin of a job criusd moved that waits a moment for its begin time. Slurm
  // does not count them in use yet; nothing else may be placed on them.
  std::map<int, int> promised;  // node index -> GPUs
  std::set<std::uint32_t> pin_promised;  // pending jobs whose pin is in `promised`
  auto promise = [&](const std::vector<std::string>& nodes, int gpus_per_node, const std::vector<std::string>& held) {
    for (const auto& host : nodes)
      if (auto it = node_index.find(host);
          it != node_index.end() && std::find(held.begin(), held.end(), host) == held.end())
        promised[it->second] += gpus_per_node;
  };

  GroupLimits group_headroom(snap);  // read only: what each job could hold alone
  std::map<std::string, std::int64_t> partition_longest;  // partition_time_limit_s, once a round
  for (const SlurmPartition& sp : snap.partitions) partition_longest[sp.name] = partition_time_limit_s(snap, sp);

  // Crius jobs: the ones the policy may place or move, the others with the reason why not.
  std::vector<sch::Job> jobs;
  std::vector<std::pair<const SlurmJob*, job::Record>> crius_jobs;  // same order as `jobs`
  // Plain Slurm jobs that Slurm could start now but for GPUs of a crius partition: in the
  // policy's queue in their place (sch::Policy::queues_plain_jobs), each on its request in the
  // first crius partition it lists that holds it. Slurm starts them; the policy gives the jobs
  // behind them none of those GPUs, and takes them back from opportunistic jobs for one that
  // is the blocked head, as for a crius job.
  std::vector<sch::Job> plain;
  std::vector<const SlurmJob*> plain_slurm;  // same order as `plain`
  auto plain_pending = [&](const SlurmJob& sj) -> std::optional<sch::Job> {
    if (sj.state != "PENDING" || sj.priority == 0 || sj.het_job_id != 0 || !sj.reservation.empty() ||
        !sj.req_nodes.empty() || (!sj.array_tasks.empty() && !sj.array_task_id) || sj.begin_time > snap.now ||
        (sj.reason != "None" && sj.reason != "Resources" && sj.reason != "Priority"))
      return std::nullopt;
    const int gpn = gpus_per_node_of(sj.tres_per_node), nodes = std::max(1, sj.num_nodes);
    if (gpn <= 0) return std::nullopt;
    for (const std::string& name : util::split(sj.partition, ',', true)) {
      auto it = partition_index.find(name);
      if (it == partition_index.end()) continue;
      const sch::Partition& part = cluster.partitions[it->second];
      if (gpn > part.gpus_per_node || nodes > part.nodes) continue;
      sch::Job j;
      j.name = slurm_id(sj);
      j.kind = sch::JobKind::plain;
      j.req_gpu = part.gpu;
      j.req_gpus = nodes * gpn;
      j.held = sch::shape(part.gpu, nodes, gpn);
      j.held_partition = it->second;
      j.priority = static_cast<double>(sj.priority);
      j.submit_time = static_cast<double>(sj.eligible_time > 0 ? sj.eligible_time : snap.now);
      return j;
    }
    return std::nullopt;
  };
  // In job id order (a task by its array's id), Slurm's last tie-break in its queue order: the
  // scheduler core breaks ties of priority and submission time by this order too.
  std::vector<const SlurmJob*> by_id;
  for (const auto& sj : snap.jobs) by_id.push_back(&sj);
  auto order_id = [](const SlurmJob& j) { return j.array_task_id ? j.array_job_id : j.id; };
  std::stable_sort(by_id.begin(), by_id.end(), [&](const SlurmJob* a, const SlurmJob* b) {
    return std::tuple(order_id(*a), a->array_task_id.value_or(0)) < std::tuple(order_id(*b), b->array_task_id.value_or(0));
  });
  for (const SlurmJob* sjp : by_id) {
    const SlurmJob& sj = *sjp;
    if (!is_active(sj.state)) {
      if (sj.state == "COMPLETING" && job::looks_like_record(sj.admin_comment))
        if (auto r = job::parse_record(sj.admin_comment); r && *r && r->value().move) ++round.moves_ending;
      if (auto a = requeue_after_checkpoint_exit(sj)) {
        promise(*a->nodes, a->to.gpus_per_node, {});
        round.actions.push_back(*a);
      }
      continue;
    }
    auto parsed = job::parse_record(sj.admin_comment);
    if (!parsed) {  // not a crius job: never touched; one waiting for GPUs is in the queue
      if (auto pj = plain_pending(sj)) plain.push_back(std::move(*pj)), plain_slurm.push_back(&sj);
      continue;
    }
    JobStatus status;
    status.job = sj.id;
    status.state = sj.state;
    if (!*parsed) {  // a record criusd cannot read: skipped, reported, never touched
      status.problem = parsed->error();
      status.considered = "no: its record does not read";
      status.not_considered = "bad_record";
      round.jobs.push_back(status);
      continue;
    }
    job::Record rec = std::move(parsed->value());
    status.model = rec.request.model;
    status.global_batch = rec.request.global_batch;
    status.cell = rec.cell;
    const bool running = sj.state != "PENDING";
    const estimator::Cell& shape = rec.cell;
    if (rec.request.model_file) {
      status.problem = "model given as a file: criusd leaves it in its Cell";
    } else if (auto ok = tput.check_model(rec.request.model); !ok) {
      status.problem = ok.error();
    } else if (auto p = tput.best(rec.request.model, rec.request.global_batch, shape,
                                 sch::RuntimeChoice(rec.request.runtime, rec.request.framework));
               p.feasible) {
      status.est_iter_time_s = p.iter_time_s;
    }
    auto skip = [&](const char* kind, const std::string& why) {
      status.considered = "no: " + why;
      status.not_considered = kind;
      round.jobs.push_back(status);
    };

    if (rec.move) {
      // Continue a move started in an earlier round (possibly by an earlier criusd).
      status.move = rec.move->phase + " -> " + estimator::describe(rec.move->target);
      Action a = action_for(sj);
      a.from = rec.cell;
      a.to = rec.move->target;
      a.reason = rec.move->reason;
      job::Record dropped = rec;
      dropped.move.reset();
      dropped.log_move_end("abandoned: a step of the move failed; the job stays in " + estimator::to_string(rec.cell), snap.now);
      a.abandon = job::to_text(dropped);
      const std::string phase = rec.move->phase;
      // A step long overdue: criusd was stopped mid-move and came back late. The job's
      // checkpoint is stale by now (or it was never signalled): the move is rolled back, never
      // finished on an old checkpoint. A running job keeps running where it is; a requeued one
      // gets its old Cell and criusd's hold released.
      const double grace = checkpoint_grace(rec, m_options);
      const double due = static_cast<double>(rec.move->since) + (phase == "signalled" ? grace : 0);
      if (now > due + m_options.move_resume_limit_s && !(running && phase == "requeued")) {
        const std::string why = "rolled back: criusd did not continue the move within " +
                                util::fixed(m_options.move_resume_limit_s, 0) + " s (its step was due " +
                                util::fixed(now - due, 0) + " s ago)";
        round.notes.push_back("job " + std::to_string(sj.id) + ": the move to " + estimator::describe(rec.move->target) +
                              " is " + why);
        a.reason = why;
        a.to = rec.cell;
        job::Record back = rec;
        back.move.reset();
        back.log_move_end(why, snap.now);
        if (running) {
          a.kind = Action::Kind::update_pending;  // the record alone: it runs in its old Cell
        } else {
          a.kind = Action::Kind::finish_move;
          a.release = sj.requeued_held && (phase == "requeuing" || phase == "requeued" || sj.end_time >= rec.move->since);
          back.nodes.clear();
          a.nodes = back.nodes;  // criusd's pin to the target's nodes goes
        }
        a.after = job::to_text(back);
        round.actions.push_back(a);
        skip("move_in_progress", "a move is in progress");
        continue;
      }
      if (running && phase == "signalling") {
        a.kind = Action::Kind::checkpoint;  // the signal may not have been sent: send it (again)
        a.grace_s = grace;
        a.before = job::to_text(rec);
        rec.move->phase = "signalled";
        rec.move->since = snap.now;
        a.after = job::to_text(rec);
        round.actions.push_back(a);
      } else if (running && (phase == "requeuing" ||
                             (phase == "signalled" &&
                              now >= static_cast<double>(rec.move->since) + grace))) {
        a.kind = Action::Kind::requeue;
        rec.move->phase = "requeuing";
        rec.move->since = snap.now;
        a.before = job::to_text(rec);
        rec.move->phase = "requeued";
        a.after = job::to_text(rec);
        round.actions.push_back(a);
      } else if (running && phase == "requeued") {
        // Requeued held, yet running again: someone released it in its old Cell. The move is over.
        round.notes.push_back("job " + std::to_string(sj.id) + ": restarted in " + estimator::describe(rec.cell) +
                              " after its requeue; the move to " + estimator::describe(rec.move->target) +
                              " is dropped");
        a.kind = Action::Kind::update_pending;  // writes only the record: same Cell
        a.to = rec.cell;
        job::Record dropped = rec;
        dropped.move.reset();
        dropped.log_move_end("dropped: restarted in " + estimator::to_string(rec.cell) + " after its requeue", snap.now);
        a.after = job::to_text(dropped);
        a.abandon.clear();
        round.actions.push_back(a);
      } else if (!running) {
        // Requeued: the new Cell, then the release of criusd's hold, and of no other: a hold an
        // admin or the owner placed since (requeued_held is false then) stays. A job requeued by
        // someone else before criusd's requeue gets the new Cell and keeps its hold, unless it
        // is the hold of a requeue criusd made of a job that ended on the signal.
        const estimator::Cell target = rec.move->target;
        const std::vector<std::string> target_nodes = rec.move->nodes;
        a.release = sj.requeued_held &&
                    (phase == "requeuing" || phase == "requeued" || sj.end_time >= rec.move->since);
        rec.move.reset();
        const job::Record::Saved ran{rec.cell, rec.plan};  // what its checkpoint was saved under
        if (replan(m_cluster, rec, target)) {
          rec.saved_under = ran;
          rec.nodes = target_nodes;  // where the policy placed it
          rec.log_move_end("moved", snap.now);
        } else {  // keep the Cell it had, anywhere; the move is dropped
          rec.nodes.clear();
          rec.log_move_end("kept: no feasible plan in " + estimator::to_string(target), snap.now);
          round.notes.push_back("job " + std::to_string(sj.id) + ": no feasible plan in " +
                                estimator::describe(target) + "; it stays in " + estimator::describe(rec.cell));
        }
        a.nodes = rec.nodes;
        a.to = rec.cell;
        a.time_limit_min = crius_time_limit(rec, sj, snap);
        a.kind = Action::Kind::finish_move;
        a.after = job::to_text(rec);
        round.actions.push_back(a);
      }
      // Where the job goes: its target nodes, or, the move finishing, the nodes it is pinned to.
      if (rec.move && !(running && phase == "requeued")) promise(rec.move->nodes, rec.move->target.gpus_per_node, sj.nodes);
      if (!rec.move) promise(rec.nodes, rec.cell.gpus_per_node, {});
      skip("move_in_progress", "a move is in progress");
      continue;
    }
    if (!status.problem.empty()) {
      skip("problem", status.problem);
      continue;
    }
    if (rec.pinned()) {
      skip("pinned_cell", "pinned by the user (--crius-cell or -p)");
      continue;
    }
    if (listed(m_options.skip_users, sj.user) || listed(m_options.skip_accounts, sj.account) ||
        listed(m_options.skip_partitions, sj.partition) || listed(m_options.skip_qos, sj.qos)) {
      skip("skip_list", "its user, account, partition or QOS is on a skip list of [criusd]");
      continue;
    }
    if (!sj.req_nodes.empty() && !same_nodes(sj.req_nodes, rec.nodes)) {  // not criusd's pin
      skip("pinned_nodes", "pinned to nodes by the user (-w)");
      continue;
    }
    if (sj.het_job_id != 0) {
      skip("hetjob", "a component of heterogeneous job " + std::to_string(sj.het_job_id) + " (crius leaves hetjobs to Slurm)");
      continue;
    }
    if (!sj.array_tasks.empty() && !sj.array_task_id) {
      skip("array_tasks", "pending tasks " + sj.array_tasks + " of job array " + std::to_string(sj.array_job_id) +
           " (each is considered once Slurm makes it a job of its own)");
      continue;
    }
    if (!sj.reservation.empty()) {
      skip("reservation", "in reservation " + sj.reservation + " (Slurm places it there)");
      continue;
    }
    if (std::string d = differs(sj, rec, running); !d.empty()) {
      status.problem = "its Slurm state differs from its record: " + d;
      skip("state_differs", status.problem);
      continue;
    }
    if (!running && sj.restarts > 0 && !rec.request.movable) {
      skip("requeued_by_slurm", "requeued by Slurm after it ran; it keeps its Cell and plan (not --crius-movable)");
      continue;
    }
    if (!running) {
      // Only jobs Slurm could start now: not held, not waiting for a dependency or a begin time.
      if (sj.priority == 0 || sj.reason.rfind("JobHeld", 0) == 0) {
        skip("held", "held");
        continue;
      }
      if (sj.reason.rfind("Dependency", 0) == 0) {
        skip("dependency", "waits for a dependency");
        continue;
      }
      if (sj.reason == "BeginTime" || sj.begin_time > snap.now) {
        if (!rec.nodes.empty() && same_nodes(sj.req_nodes, rec.nodes)) {
          promise(rec.nodes, rec.cell.gpus_per_node, {});
          pin_promised.insert(sj.id);
        }
        skip("begin_time", "waits for its begin time");
        continue;
      }
      // ReqNodeNotAvail: the nodes it may use (its partition's, or criusd's pin) are down,
      // drained or reserved. That is capacity lost, as for any job: the round places it where
      // it can run, or clears criusd's pin. A Cell over a limit (its own, its partition's, its
      // QOS's or association's, per job or for the group) is one the round replaces with a
      // Cell within them, or leaves.
      if (sj.reason != "None" && sj.reason != "Resources" && sj.reason != "Priority" &&
          sj.reason != "ReqNodeNotAvail" && !over_a_limit(sj.reason) &&
          !(over_a_time_limit(sj.reason) && crius_sets_time_limit(rec) &&
            sj.time_limit_s == rec.time_limit_min * 60)) {
        skip("not_for_resources", "pending for " + sj.reason + ", not for resources");
        continue;
      }
    }
    sch::Job job;
    job.id = static_cast<int>(jobs.size());
    job.name = std::to_string(sj.id);
    job.model = rec.request.model;
    job.global_batch = rec.request.global_batch;
    job.runtime = rec.request.runtime;
    job.framework = rec.request.framework;
    job.req_gpu = rec.cell.gpu;
    job.req_gpus = rec.cell.nodes * rec.cell.gpus_per_node;
    job.max_gpus = rec.request.max_gpus.value_or(0);
    // A job without --crius-movable keeps the Cell it starts in (the policy's floor for it).
    job.kind = rec.request.movable ? sch::JobKind::movable : sch::JobKind::fixed;
    // Slurm's word on where the job may run and how big (limits.h): the partitions it may
    // use, their MaxNodes, the per-job limits of its QOS and association, and what the group
    // limits leave it (other jobs may take that too: the round's changes are counted below).
    {
      GpusNodes cap = per_job_limit(snap, sj);
      const GpusNodes holding =
          running ? held_in(sj, rec.cell.gpu, rec.cell.gpus(), rec.cell.nodes) : GpusNodes{0, 0, {}, 0, 0};
      const GpusNodes left = group_headroom.most(sj, holding);
      auto tighter = [](std::int64_t a, std::int64_t b) { return a < 0 ? b : b < 0 ? a : std::min(a, b); };
      std::map<std::string, std::int64_t> typed = cap.typed;
      for (const auto& [type, n] : left.typed) typed[type] = typed.count(type) ? tighter(typed[type], n) : n;
      const std::int64_t mem_mb = tighter(cap.mem_mb, left.mem_mb);
      cap = {tighter(cap.gpus, left.gpus), tighter(cap.nodes, left.nodes), typed, tighter(cap.cpus, left.cpus)};
      cap.mem_mb = mem_mb;
      // Its CPUs and memory follow its GPUs and nodes (a task per GPU, cpus_per_task each; its
      // memory per node or per CPU): their limits bound the GPUs and nodes.
      const GpusNodes per_node = per_node_limit(snap, sj);
      const CpuMemBound bound = cpu_mem_bound(sj, cap, per_node);
      cap.gpus = tighter(cap.gpus, bound.gpus);
      cap.nodes = tighter(cap.nodes, bound.nodes);
      const std::int64_t per_node_gpus = tighter(per_node.gpus, bound.gpus_per_node);
      if (per_node_gpus >= 0) job.max_gpus_per_node = static_cast<int>(std::max<std::int64_t>(per_node_gpus, 0));
      for (const auto& [type, n] : cap.typed)
        if (n >= 0) job.max_gpus_of_type[type] = static_cast<int>(n);
      if (cap.gpus >= 0) job.max_gpus = job.max_gpus > 0 ? std::min<int>(job.max_gpus, static_cast<int>(cap.gpus))
                                                        : static_cast<int>(std::max<std::int64_t>(cap.gpus, 0));
      if (cap.nodes >= 0) job.max_nodes = static_cast<int>(std::max<std::int64_t>(cap.nodes, 0));
      std::vector<std::string> refused;
      // A time limit crius set it sets again with every Cell (crius_time_limit), within the
      // partition: no bar to the job's own partition, where Slurm would bound it so too. Another
      // whose longest limit is shorter could end the job before its iterations do: as for any job.
      const bool crius_limit = crius_sets_time_limit(rec) && sj.time_limit_s == rec.time_limit_min * 60;
      for (const auto& part : cluster.partitions) {
        int most = 0;
        for (const SlurmPartition& sp : snap.partitions)
          if (sp.name == part.name) {
            const std::int64_t longest = crius_limit && sp.name == sj.partition ? 0 : partition_longest[sp.name];
            if (std::string why = partition_refusal(sp, sj, longest); !why.empty())
              most = -1, refused.push_back(why);
            else most = sp.max_nodes;
          }
        job.partition_max_nodes.push_back(most);
      }
      const bool none = std::none_of(job.partition_max_nodes.begin(), job.partition_max_nodes.end(),
                                     [](int m) { return m >= 0; });
      if (none || cap.gpus == 0 || cap.nodes == 0 || per_node_gpus == 0) {  // it stays as it is; a running job keeps its GPUs
        skip("no_partition", "Slurm lets it into none of the partitions of crius.toml: " +
             (none ? util::join(refused, "; ") : std::string("its limits allow no GPUs")));
        continue;
      }
    }
    // A deadline no Cell could meet at submission (flagged in the record) counts as none.
    if (rec.request.deadline_s && rec.deadline_met != false)
      job.deadline = static_cast<double>(sj.submit_time + *rec.request.deadline_s);
    job.iterations = rec.request.iters ? static_cast<double>(*rec.request.iters) : m_options.default_iterations;
    // The job's own report of its progress (job/progress.h), bounded by what it asked for.
    // Reports are sparse ([launch] progress_interval_s, to spare slurmctld): since the last,
    // a running job is taken to go on at its Cell's estimated speed, for one interval at most
    // (one that stopped reporting is not assumed to go on), from its start if it reported
    // before it (a requeued job).
    if (auto p = job::parse_progress_comment(sj.comment)) {
      double done = static_cast<double>(p->done);
      if (running && p->at > 0 && status.est_iter_time_s > 0) {
        const double since = static_cast<double>(snap.now - std::max<std::int64_t>(p->at, sj.start_time));
        done += std::floor(std::clamp(since, 0.0, m_cluster.progress_interval_s) / status.est_iter_time_s);
      }
      job.done_iterations = std::min({done, static_cast<double>(p->total), job.iterations});
      status.done_iterations = job.done_iterations;
    }
    // The work still to do is the user's word, bounded by Slurm's: no more than its time limit
    // lets it run in its Cell (a job cannot look longer, and so worth more upgrades, than Slurm
    // will let it be).
    if (sj.time_limit_s > 0 && status.est_iter_time_s > 0) {
      const double left_s = static_cast<double>(sj.time_limit_s) -
                            (running ? static_cast<double>(snap.now - sj.start_time) : 0.0);
      job.iterations = std::min(job.iterations, job.done_iterations + std::max(0.0, left_s) / status.est_iter_time_s);
    }
    status.remaining_s = status.est_iter_time_s * job.remaining();
    // Waiting counts from when Slurm could first run the job (after a hold, a --begin or a
    // dependency), not from its submission: a job held for a day does not jump those that
    // started meanwhile. A job released a moment ago has no eligible time until Slurm's next
    // scheduling pass: it waits from now.
    job.submit_time = static_cast<double>(sj.eligible_time > 0 ? sj.eligible_time
                                          : running           ? sj.submit_time
                                                              : snap.now);
    job.priority = static_cast<double>(sj.priority);
    job.state = running ? sch::JobState::running : sch::JobState::pending;
    if (running) {
      // A running job is moved only if it can come back: a batch job whose requeue is allowed
      // and that opted in (it checkpoints on the signal and resumes), within the site's bounds.
      std::string fixed;
      int recent = 0;
      for (const job::MoveLog& m : rec.history) recent += static_cast<double>(m.started) > now - m_options.rate_window_s;
      if (!rec.request.movable) fixed = "runs without --crius-movable";
      else if (!sj.batch) fixed = "not a batch job (srun and salloc jobs cannot be requeued)";
      else if (!sj.requeue) fixed = "its requeue is not allowed (--no-requeue or JobRequeue=0)";
      else if (!rec.unmovable.empty()) fixed = "a requeue failed before: " + rec.unmovable;
      else if (static_cast<double>(snap.now - sj.start_time) < m_options.min_runtime_s)
        fixed = "has run less than min_runtime_s";
      else if (recent >= m_options.max_moves_per_job_per_hour) fixed = "moved max_moves_per_job_per_hour times";
      else if (user_moves[sj.user] >= m_options.max_moves_per_user_per_hour)
        fixed = "its user's jobs moved max_moves_per_user_per_hour times";
      if (!fixed.empty()) {  // its GPUs stay taken (counted below with the other jobs')
        skip("not_movable", "not movable: " + fixed);
        continue;
      }
      job.first_start = job.last_start = static_cast<double>(sj.start_time);  // this run's start
      job.alloc.partition = partition_index.at(sj.partition);  // differs() checked partition and nodes
      job.alloc.shape = shape;
      for (const auto& host : sj.nodes) job.alloc.node_ids.push_back(node_index.at(host));
    }
    status.considered = "policy";
    jobs.push_back(std::move(job));
    crius_jobs.emplace_back(&sj, std::move(rec));
    round.jobs.push_back(status);
  }

  if (moves_only) {  // a follow-up round: the moves in flight go on, the policy waits for its round
    round.decide_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return round;
  }

  // GPUs held by anything the policy may not move (jobs without a record, pinned jobs,
  // jobs in the middle of a move) are not the policy's to give; an unavailable node holds only
  // the policy's jobs already there. Where Slurm counts fewer GPUs in use on a node than the
  // records of the policy's jobs there claim, those jobs are left alone and reported as
  // inconsistent, and their GPUs count as others'.
  std::set<std::uint32_t> policy_ids;  // the jobs the policy decides for this round
  for (const auto& cj : crius_jobs) policy_ids.insert(cj.first->id);
  auto set_capacities = [&](std::set<std::size_t>* overclaimed) {
    std::map<int, int> managed;  // GPUs of the running jobs the policy may move, per node
    for (const auto& j : jobs)
      for (int node : j.alloc.node_ids) managed[node] += j.alloc.shape.gpus_per_node;
    // Slurm's nodes and jobs are read one after the other: a job that started in between runs
    // in the job table on a node whose GPUs in use do not show it yet. Others hold at least what
    // their running jobs there ask per node.
    std::map<std::string, int> others_running;
    for (const SlurmJob& sj : snap.jobs)
      if (sj.state == "RUNNING" && !policy_ids.count(sj.id))
        for (const auto& host : sj.nodes) others_running[host] += gpus_per_node_of(sj.tres_per_node);
    for (const auto& n : snap.nodes) {
      auto it = node_index.find(n.name);
      if (it == node_index.end()) continue;
      const int mine = managed[it->second], others = n.gpus_used - mine;
      const int held = std::min(n.gpus, std::max(others, others_running[n.name]));
      int& capacity = cluster.nodes[it->second].capacity;
      capacity = unavailable.count(n.name) ? mine : std::max(0, n.gpus - std::max(0, held));
      const bool over = others < 0 || mine > capacity;
      capacity = std::max(mine, capacity - promised[it->second]);  // the policy's jobs there may stay
      if (!overclaimed || !over) continue;
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        const auto& ids = jobs[i].alloc.node_ids;
        if (std::find(ids.begin(), ids.end(), it->second) == ids.end()) continue;
        overclaimed->insert(i);
        const std::string why = "its Slurm state differs from its record: Slurm counts " + std::to_string(n.gpus_used) +
                                " GPUs in use on node " + n.name + ", the records of crius's jobs there " +
                                std::to_string(mine);
        for (auto& st : round.jobs)
          if (st.job == crius_jobs[i].first->id) st.problem = why, st.considered = "no: " + why, st.not_considered = "state_differs";
      }
    }
  };
  std::set<std::size_t> overclaimed;
  set_capacities(&overclaimed);
  if (!overclaimed.empty()) {
    std::vector<sch::Job> kept;
    std::vector<std::pair<const SlurmJob*, job::Record>> kept_crius;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (overclaimed.count(i)) continue;
      jobs[i].id = static_cast<int>(kept.size());
      kept.push_back(std::move(jobs[i]));
      kept_crius.push_back(std::move(crius_jobs[i]));
    }
    jobs = std::move(kept);
    crius_jobs = std::move(kept_crius);
    policy_ids.clear();  // the jobs left aside are others' now
    for (const auto& cj : crius_jobs) policy_ids.insert(cj.first->id);
    set_capacities(nullptr);
  }

  sch::PolicyOptions popts;
  popts.interval_s = m_options.interval_s;
  // A move costs what it costs on Slurm: the checkpoint grace, then the restart.
  popts.restart_model = sch::RestartModel::live;
  popts.checkpoint_grace_s = m_options.checkpoint_grace_s;
  popts.restart_cost_s = m_options.restart_cost_s;
  popts.objective = m_options.objective;  // job_submit's rule, in every round
  popts.max_gpus = m_options.max_gpus;
  popts.max_moves_per_round = m_options.max_moves_per_round;  // as crius-sim --max-moves-per-round
  // Cells that meet --crius-deadline, in Slurm's priority order (crius-sim --deadline-mode
  // also reorders the queue by deadline; criusd does not).
  popts.deadline_cells = true;
  if (!m_impl->policy) {
    auto policy = sch::make_policy(m_options.policy, popts);
    if (!policy) return make_error(policy.error());
    m_impl->policy = std::move(*policy);
  }
  sch::Scheduler scheduler(*m_impl->policy, tput, popts);
  // The queue: the crius jobs, then the plain ones (ids after theirs: no decision names one).
  std::vector<sch::Job> queue = jobs;
  std::vector<std::uint64_t> order;  // Slurm's last tie-break: the job id, the array's for a task
  for (const auto& cj : crius_jobs) order.push_back(order_id(*cj.first));
  for (std::size_t p = 0; p < plain.size(); ++p) {
    plain[p].id = static_cast<int>(queue.size());
    queue.push_back(plain[p]);
    order.push_back(order_id(*plain_slurm[p]));
  }
  // Opportunistic, as the policy means it (sch::mark_opportunistic): in Slurm's order (higher
  // priority; equal and eligible earlier; equal in the same second and a lower job id:
  // sort_job_queue2 in src/slurmctld/job_scheduler.c), read off Slurm's state every round, so
  // criusd keeps nothing between rounds and Slurm's own backfill starts count too. (Equal
  // priorities are common: 24.11's default priority/multifactor with no weights gives every job 1.)
  sch::mark_opportunistic(queue, now, order);
  auto decided = scheduler.decide(cluster, queue, now);
  // A policy that fails decides nothing this round; the moves in flight go on, and the report
  // says what is free as the jobs run.
  if (!decided) round.notes.push_back("policy " + m_options.policy + " failed: " + decided.error() +
                                      "; no job gets a new Cell this round");
  std::vector<sch::Decision> decisions = decided ? std::move(*decided) : std::vector<sch::Decision>{};
  // A decision's Cell: its target's partition, type and shape, the stages of the record's Cell
  // (the record's Cell when it has no target).
  auto cell_of = [&](const job::Record& rec, const sch::Decision& d) {
    estimator::Cell to = rec.cell;
    if (!d.target.empty()) {
      to.partition = cluster.partitions[d.target.partition].name;
      to.gpu = d.target.shape.gpu;
      to.nodes = d.target.shape.nodes;
      to.gpus_per_node = d.target.shape.gpus_per_node;
    }
    return to;
  };

  // The limits shared with other jobs (GrpTRES, MaxTRESPerUser; limits.h), counted over the
  // round's decisions in their order (preemptions free GPUs first): a change that would go
  // over one is dropped, and the job stays as it is.
  {
    GroupLimits group(snap);
    std::vector<sch::Decision> kept;
    for (auto& d : decisions) {
      const sch::Job& job = jobs[d.job];
      const SlurmJob& sj = *crius_jobs[d.job].first;
      auto count = [&sj](const sch::Allocation& a) {
        return a.empty() ? GpusNodes{0, 0, {}, 0, 0} : held_in(sj, a.shape.gpu, a.shape.gpus(), a.shape.nodes);
      };
      const GpusNodes from = count(job.alloc), to = count(d.target);
      if (std::string why = group.change(*crius_jobs[d.job].first, from, to); !why.empty()) {
        round.notes.push_back("job " + std::to_string(crius_jobs[d.job].first->id) + ": " +
                              (job.state == sch::JobState::running ? "not moved" : "not given a Cell") + " (" +
                              d.reason + "): " + why);
        continue;
      }
      kept.push_back(std::move(d));
    }
    decisions = std::move(kept);
  }

  // Reservations ahead (maintenance, nodes reserved for others): Slurm starts no job on a node
  // where its time limit would cross a reservation, so a Cell whose nodes have one before the
  // job's time limit there ends is not given: the change is dropped, the job stays as it is.
  // A job Slurm places itself (pending, its Cell unchanged, no pin) is Slurm's to place.
  if (!snap.reservations.empty()) {
    std::vector<sch::Decision> kept;
    for (auto& d : decisions) {
      auto& [sj, rec] = crius_jobs[d.job];
      const sch::Job& job = jobs[d.job];
      const bool running = job.state == sch::JobState::running;
      const estimator::Cell to = cell_of(rec, d);
      if (d.target.empty() || (!running && rec.nodes.empty() && to == rec.cell)) {
        kept.push_back(std::move(d));
        continue;
      }
      // Its time limit there (0: none, every reservation ahead is crossed), from its restart.
      std::int64_t limit_s = sj->time_limit_s;
      if (job::Record check = rec; crius_sets_time_limit(rec) && replan(m_cluster, check, to))
        limit_s = crius_time_limit(check, *sj, snap) * 60;
      const double start = now + (running ? checkpoint_grace(rec, m_options) : 0.0);
      const double end = limit_s > 0 ? start + static_cast<double>(limit_s) : HUGE_VAL;
      std::string crossed;
      for (const auto& r : snap.reservations) {
        if (static_cast<double>(r.end_time) <= start || static_cast<double>(r.start_time) >= end) continue;
        for (int n : d.target.node_ids) {
          const std::string& host = cluster.nodes[n].name;
          if (r.all_nodes || std::find(r.nodes.begin(), r.nodes.end(), host) != r.nodes.end()) {
            crossed = "reservation " + r.name + " on node " + host + " begins in " +
                      std::to_string(std::max<std::int64_t>(0, r.start_time - snap.now) / 60) + " min";
            break;
          }
        }
        if (!crossed.empty()) break;
      }
      if (crossed.empty()) {
        kept.push_back(std::move(d));
        continue;
      }
      round.notes.push_back("job " + std::to_string(sj->id) + ": " + (running ? "not moved" : "not given a Cell") + " (" +
                            d.reason + "): " + crossed + ", before its time limit " +
                            (limit_s > 0 ? "of " + std::to_string(limit_s / 60) + " min" : "(none)") + " would end there");
    }
    decisions = std::move(kept);
  }

  // Where each job ends the round, for the free-GPU report: as it runs, unless moved or started.
  std::vector<sch::Allocation> ends(jobs.size());
  std::vector<bool> placed(jobs.size(), false);  // pending jobs the policy starts this round
  for (std::size_t i = 0; i < jobs.size(); ++i) ends[i] = jobs[i].alloc;
  // The scheduler core kept at most max_moves_per_round changes of running jobs (moves in
  // flight are not the policy's, so they take none of it).
  for (const auto& d : decisions) {
    auto& [sj, rec] = crius_jobs[d.job];
    const sch::Job& job = jobs[d.job];
    estimator::Cell to = cell_of(rec, d);
    if (!d.target.empty()) to.stages = d.target.shape.stages;
    Action a = action_for(*sj);
    a.from = rec.cell;
    a.to = to;
    a.reason = d.reason;
    sch::Perf before = tput.best(job.model, job.global_batch, rec.cell, job.stack());
    sch::Perf after = tput.best(job.model, job.global_batch, to, job.stack());
    a.from_samples_per_s = before.feasible ? before.samples_per_s : 0;
    a.to_samples_per_s = after.feasible ? after.samples_per_s : 0;
    a.gain_samples_per_s = a.to_samples_per_s - a.from_samples_per_s;
    estimator::Cell same_shape = to;
    same_shape.stages = rec.cell.stages;
    std::vector<std::string> target_nodes;
    for (int n : d.target.node_ids) target_nodes.push_back(cluster.nodes[n].name);
    if (job.state == sch::JobState::pending) {
      if (d.kind != sch::Decision::Kind::start) continue;
      ends[d.job] = d.target;
      placed[d.job] = true;
      if (same_shape == rec.cell) {
        // Slurm starts it as asked; a job criusd pinned follows the policy's nodes. A time limit
        // crius set is set again where a limit criusd learnt of since is shorter.
        if (rec.nodes.empty() || same_nodes(rec.nodes, target_nodes)) {
          job::Record check = rec;
          const std::int64_t limit = crius_time_limit(check, *sj, snap);
          if (limit == 0 || limit * 60 >= sj->time_limit_s) continue;
          a.to = rec.cell;
          a.time_limit_min = limit;
          a.kind = Action::Kind::update_pending;
          a.reason = "crius's time limit is over the longest Slurm allows it";
          a.after = job::to_text(check);
          round.actions.push_back(a);
          continue;
        }
      } else if (!replan(m_cluster, rec, to)) {
        round.notes.push_back("job " + std::to_string(sj->id) + ": no feasible plan in " + estimator::describe(to) +
                              "; not moved");
        continue;
      }
      // Pinned where the policy placed it: Slurm could otherwise take the nodes the policy
      // kept for another job.
      rec.nodes = target_nodes;
      a.nodes = rec.nodes;
      a.to = rec.cell;
      if (!(a.to == a.from)) a.time_limit_min = crius_time_limit(rec, *sj, snap);
      a.kind = Action::Kind::update_pending;
      a.after = job::to_text(rec);
      round.actions.push_back(a);
      continue;
    }
    if (d.kind == sch::Decision::Kind::start) continue;
    if (job::Record check = rec; !replan(m_cluster, check, to)) {  // checked before anything is sent
      round.notes.push_back("job " + std::to_string(sj->id) + ": no feasible plan in " + estimator::describe(to) +
                            "; not moved");
      continue;
    }
    ends[d.job] = d.target;
    a.abandon = job::to_text(rec);
    rec.log_move_start(rec.cell, to, d.reason, snap.now);
    rec.move = job::Move{to, "signalling", snap.now, d.reason, target_nodes};
    a.kind = Action::Kind::checkpoint;
    a.grace_s = checkpoint_grace(rec, m_options);
    a.before = job::to_text(rec);
    rec.move->phase = "signalled";
    a.after = job::to_text(rec);
    round.actions.push_back(a);
  }
  // A pending job criusd pinned that the policy does not start now waits for any nodes.
  for (std::size_t i = 0; i < jobs.size() && decided; ++i) {
    auto& [sj, rec] = crius_jobs[i];
    if (jobs[i].state != sch::JobState::pending || placed[i] || rec.nodes.empty()) continue;
    Action a = action_for(*sj);
    a.from = a.to = rec.cell;
    a.reason = "waits: its pin to nodes " + util::join(rec.nodes, ",") + " is cleared";
    rec.nodes.clear();
    a.nodes = rec.nodes;
    a.kind = Action::Kind::update_pending;
    a.after = job::to_text(rec);
    round.actions.push_back(a);
  }

  // The GPUs left free once the round's decisions are carried out, per node: a new job
  // given a Cell among them can start now (job_submit reads this report).
  // The GPUs the policy holds for plain jobs Slurm starts on them are not free.
  std::vector<int> free(cluster.nodes.size());
  for (std::size_t n = 0; n < cluster.nodes.size(); ++n) free[n] = cluster.nodes[n].capacity;
  for (const sch::Allocation& a : ends)
    for (int n : a.node_ids) free[n] -= a.shape.gpus_per_node;
  // A pending job criusd pinned that the round leaves aside (not the policy's now: a move just
  // finished, a limit) may start on its pinned nodes at any moment: they are not free.
  {
    for (const SlurmJob& sj : snap.jobs) {
      if (sj.state != "PENDING" || sj.req_nodes.empty() || policy_ids.count(sj.id) || pin_promised.count(sj.id)) continue;
      auto parsed = job::parse_record(sj.admin_comment);
      if (!parsed || !*parsed) continue;
      const job::Record& rec = parsed->value();
      if (rec.move || rec.nodes.empty() || !same_nodes(sj.req_nodes, rec.nodes)) continue;  // a move's: promised
      for (const auto& host : rec.nodes)
        if (auto it = node_index.find(host); it != node_index.end())
          free[it->second] = std::max(0, free[it->second] - rec.cell.gpus_per_node);
    }
  }
  if (decided)
    for (const auto& [id, a] : scheduler.reserved())
      for (int n : a.node_ids) free[n] -= a.shape.gpus_per_node;
  round.free.time = snap.now;
  round.free.interval_s = m_options.interval_s;
  // The jobs the round leaves waiting for GPUs of the crius partitions: the policy's pending
  // jobs it does not start, and the others pending there for resources (plain Slurm jobs,
  // crius jobs criusd leaves alone). job_submit's adaptive objective grows a new job only
  // when there are none.
  std::set<const SlurmJob*> policy_jobs;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    policy_jobs.insert(crius_jobs[i].first);
    round.free.waiting += jobs[i].state == sch::JobState::pending && !placed[i];
  }
  for (const SlurmJob& sj : snap.jobs) {
    if (sj.state != "PENDING" || policy_jobs.count(&sj) ||
        (sj.reason != "None" && sj.reason != "Resources" && sj.reason != "Priority"))
      continue;
    for (const std::string& name : util::split(sj.partition, ',', true))
      if (partition_index.count(name)) {
        ++round.free.waiting;
        break;
      }
  }
  publish_job_limits(snap, round.free);  // per-job limits of QOS and associations
  bool by_account = false;  // some crius partition lets in by account: the users' defaults count
  for (const auto& part : cluster.partitions)  // who each crius partition lets in, for job_submit
    for (const SlurmPartition& sp : snap.partitions)
      if (sp.name == part.name) {
        round.free.access.push_back({sp.name, sp.up, sp.max_nodes, partition_longest[sp.name], sp.allow_accounts,
                                     sp.deny_accounts, sp.allow_qos, sp.deny_qos, !sp.allow_groups.empty(),
                                     sp.allow_gids, sp.allow_uids});
        by_account = by_account || !sp.allow_accounts.empty() || !sp.deny_accounts.empty();
      }
  if (by_account || !round.free.assoc_limits.empty())
    round.free.default_accounts.assign(snap.default_accounts.begin(), snap.default_accounts.end());
  // When the next reservation begins on each node (0: none ahead), for job_submit to keep a job
  // whose time limit would cross it off the node, as Slurm does.
  std::map<std::string, std::int64_t> first_reserved;  // host -> the earliest start ahead
  std::int64_t all_reserved = 0;                        // of a reservation of every node
  auto earlier = [](std::int64_t& at, std::int64_t t) { at = at == 0 ? t : std::min(at, t); };
  for (const auto& r : snap.reservations) {
    if (r.start_time <= snap.now) continue;
    if (r.all_nodes) earlier(all_reserved, r.start_time);
    for (const std::string& host : r.nodes)
      if (node_index.count(host)) earlier(first_reserved[host], r.start_time);
  }
  auto reserved_from = [&](const std::string& host) {
    std::int64_t at = all_reserved;
    if (auto it = first_reserved.find(host); it != first_reserved.end()) earlier(at, it->second);
    return at;
  };
  for (std::size_t p = 0; p < cluster.partitions.size(); ++p) {
    std::vector<int> nodes;
    std::vector<std::int64_t> from;
    for (std::size_t n = 0; n < cluster.nodes.size(); ++n)
      if (cluster.nodes[n].partition == static_cast<int>(p)) {
        nodes.push_back(std::max(0, free[n]));
        from.push_back(reserved_from(cluster.nodes[n].name));
      }
    round.free.partitions.emplace_back(cluster.partitions[p].name, std::move(nodes));
    if (std::any_of(from.begin(), from.end(), [](std::int64_t t) { return t > 0; }))
      round.free.reserved_from.emplace_back(cluster.partitions[p].name, std::move(from));
  }
  round.decide_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return round;
}

}  // namespace crius::slurm
