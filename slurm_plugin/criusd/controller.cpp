#include "slurm_plugin/criusd/controller.h"

#include <chrono>
#include <cstdio>
#include <csignal>
#include <map>
#include <set>

#include "common/util.h"
#include "scheduler/estimator_throughput.h"
#include "scheduler/scheduler.h"

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

int signal_number(const std::string& name) {
  static const std::map<std::string, int> names = {
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"INT", SIGINT},
      {"HUP", SIGHUP},   {"CONT", SIGCONT}, {"URG", SIGURG}};
  std::string n = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  auto it = names.find(n);
  return it == names.end() ? -1 : it->second;
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
  static const std::vector<std::string> keys = {"interval_s",         "policy",          "max_moves_per_round",
                                                "checkpoint_signal",  "checkpoint_grace_s", "restart_cost_s",
                                                "default_iterations"};
  return keys;
}

Result<ControllerOptions> load_controller_options(const estimator::Cluster& cluster) {
  ControllerOptions o;
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
  return o;
}

nlohmann::json to_json(const Action& a) {
  return {{"action", to_string(a.kind)}, {"job", a.job},          {"from", estimator::to_json(a.from)},
          {"to", estimator::to_json(a.to)},       {"reason", a.reason},    {"from_samples_per_s", a.from_samples_per_s},
          {"to_samples_per_s", a.to_samples_per_s}, {"gain_samples_per_s", a.gain_samples_per_s}};
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
                         {"est_iter_time_s", s.est_iter_time_s}, {"move", s.move},
                         {"problem", s.problem}});
  return j;
}

struct Controller::Impl {
  sch::EstimatorThroughput estimator;
  sch::CachedThroughput cached;
  explicit Impl(const estimator::Cluster& c) : estimator(c), cached(estimator) {}
};

Controller::Controller(const estimator::Cluster& cluster, ControllerOptions options)
    : m_cluster(cluster), m_options(std::move(options)), m_impl(std::make_unique<Impl>(cluster)) {}
Controller::~Controller() = default;

Result<Round> Controller::decide(const Snapshot& snap) {
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
      cluster.nodes.push_back({n.name, it->second, part.gpu, n.usable ? n.gpus : 0});
      part.nodes += 1;
      break;  // a node belongs to the first crius partition listing it
    }
  }

  // Crius jobs, in-flight moves first.
  std::vector<sch::Job> jobs;
  std::vector<std::pair<const SlurmJob*, job::Record>> crius_jobs;  // same order as `jobs`
  std::map<int, int> managed_gpus_on_node;  // GPUs of the running jobs the policy may move
  int moves_in_flight = 0;
  for (const auto& sj : snap.jobs) {
    if (!is_active(sj.state)) continue;
    auto parsed = job::parse_record(sj.admin_comment);
    if (!parsed) continue;  // not a crius job: never touched
    JobStatus status;
    status.job = sj.id;
    status.state = sj.state;
    if (!*parsed) {
      status.problem = parsed->error();
      round.jobs.push_back(status);
      continue;
    }
    job::Record rec = std::move(parsed->value());
    status.model = rec.request.model;
    status.global_batch = rec.request.global_batch;
    status.cell = rec.cell;
    bool running = sj.state != "PENDING";
    const estimator::Cell& shape = rec.cell;
    if (rec.request.model_file) {
      status.problem = "model given as a file: criusd leaves it in its Cell";
    } else if (auto ok = tput.check_model(rec.request.model); !ok) {
      status.problem = ok.error();
    } else if (auto p = tput.best(rec.request.model, rec.request.global_batch, shape); p.feasible) {
      status.est_iter_time_s = p.iter_time_s;
    }

    if (rec.move) {
      // Continue a move started in an earlier round (possibly by an earlier criusd).
      ++moves_in_flight;
      status.move = rec.move->phase + " -> " + estimator::describe(rec.move->target);
      Action a;
      a.job = sj.id;
      a.from = rec.cell;
      a.to = rec.move->target;
      a.reason = rec.move->reason;
      if (running && rec.move->phase == "signalled" &&
          now >= static_cast<double>(rec.move->since) + m_options.checkpoint_grace_s) {
        rec.move->phase = "requeued";
        rec.move->since = snap.now;
        a.kind = Action::Kind::requeue;
        a.record = job::to_text(rec);
        round.actions.push_back(a);
      } else if (running && rec.move->phase == "requeued") {
        a.kind = Action::Kind::requeue;  // the requeue did not take: try again
        a.record = job::to_text(rec);
        round.actions.push_back(a);
      } else if (!running) {
        const estimator::Cell target = rec.move->target;
        rec.move.reset();
        if (!replan(m_cluster, rec, target))  // keep the Cell it had; the move is dropped
          round.notes.push_back("job " + std::to_string(sj.id) + ": no feasible plan in " +
                                estimator::describe(target) + "; it stays in " + estimator::describe(rec.cell));
        a.to = rec.cell;
        a.kind = Action::Kind::finish_move;
        a.record = job::to_text(rec);
        round.actions.push_back(a);
      }
      round.jobs.push_back(status);
      continue;  // not offered to the policy while it moves
    }
    if (!status.problem.empty() || rec.pinned()) {
      if (status.problem.empty()) status.move = "pinned by the user (--crius-cell or -p): left as is";
      round.jobs.push_back(status);
      continue;
    }

    sch::Job job;
    job.id = static_cast<int>(jobs.size());
    job.name = std::to_string(sj.id);
    job.model = rec.request.model;
    job.global_batch = rec.request.global_batch;
    job.req_gpu = rec.cell.gpu;
    job.req_gpus = rec.cell.nodes * rec.cell.gpus_per_node;
    job.iterations = rec.request.iters ? static_cast<double>(*rec.request.iters) : m_options.default_iterations;
    job.submit_time = static_cast<double>(sj.submit_time);
    job.state = running ? sch::JobState::running : sch::JobState::pending;
    if (running) {
      job.first_start = static_cast<double>(sj.start_time);
      auto pit = partition_index.find(sj.partition);
      if (pit != partition_index.end()) {
        job.alloc.partition = pit->second;
        job.alloc.shape = shape;
        for (const auto& host : sj.nodes)
          if (auto it = node_index.find(host); it != node_index.end()) job.alloc.node_ids.push_back(it->second);
        job.alloc.shape.nodes = static_cast<int>(job.alloc.node_ids.size());
      }
      if (job.alloc.node_ids.empty()) {  // runs outside the crius partitions: leave it be
        status.problem = "runs outside the partitions of crius.toml";
        round.jobs.push_back(status);
        continue;
      }
    }
    if (running)
      for (int node : job.alloc.node_ids) managed_gpus_on_node[node] += job.alloc.shape.gpus_per_node;
    jobs.push_back(std::move(job));
    crius_jobs.emplace_back(&sj, std::move(rec));
    round.jobs.push_back(status);
  }

  // GPUs held by anything the policy may not move (jobs without a record, pinned jobs,
  // jobs in the middle of a move) are not the policy's to give.
  for (const auto& n : snap.nodes) {
    auto it = node_index.find(n.name);
    if (it == node_index.end()) continue;
    auto& node = cluster.nodes[it->second];
    int others = n.gpus_used - managed_gpus_on_node[it->second];
    node.capacity = std::max(0, node.capacity - std::max(0, others));
  }

  sch::PolicyOptions popts;
  popts.interval_s = m_options.interval_s;
  popts.restart_cost_s = m_options.restart_cost_s;
  auto policy = sch::make_policy(m_options.policy, popts);
  if (!policy) return make_error(policy.error());
  sch::Scheduler scheduler(**policy, tput, popts);
  auto decisions = scheduler.decide(cluster, jobs, now);
  if (!decisions) return make_error("policy " + m_options.policy + ": " + decisions.error());

  int budget = std::max(0, m_options.max_moves_per_round - moves_in_flight);
  for (const auto& d : *decisions) {
    auto& [sj, rec] = crius_jobs[d.job];
    const sch::Job& job = jobs[d.job];
    estimator::Cell to = rec.cell;
    if (!d.target.empty()) {
      to.partition = cluster.partitions[d.target.partition].name;
      to.gpu = d.target.shape.gpu;
      to.nodes = d.target.shape.nodes;
      to.gpus_per_node = d.target.shape.gpus_per_node;
      to.stages = d.target.shape.stages;
    }
    Action a;
    a.job = sj->id;
    a.from = rec.cell;
    a.to = to;
    a.reason = d.reason;
    sch::Perf before = tput.best(job.model, job.global_batch, rec.cell);
    sch::Perf after = tput.best(job.model, job.global_batch, to);
    a.from_samples_per_s = before.feasible ? before.samples_per_s : 0;
    a.to_samples_per_s = after.feasible ? after.samples_per_s : 0;
    a.gain_samples_per_s = a.to_samples_per_s - a.from_samples_per_s;
    estimator::Cell same_shape = to;
    same_shape.stages = rec.cell.stages;
    if (job.state == sch::JobState::pending) {
      if (d.kind != sch::Decision::Kind::start || same_shape == rec.cell) continue;  // Slurm starts it as asked
      if (!replan(m_cluster, rec, to)) {
        round.notes.push_back("job " + std::to_string(sj->id) + ": no feasible plan in " + estimator::describe(to) +
                              "; not moved");
        continue;
      }
      a.to = rec.cell;
      a.kind = Action::Kind::update_pending;
      a.record = job::to_text(rec);
      round.actions.push_back(a);
      continue;
    }
    if (d.kind == sch::Decision::Kind::start) continue;
    if (budget == 0) {
      round.notes.push_back("job " + std::to_string(sj->id) + ": " + to_string(d.kind) + " to " +
                            estimator::describe(to) + " deferred: migration budget of " +
                            std::to_string(m_options.max_moves_per_round) + " per round used");
      continue;
    }
    --budget;
    rec.move = job::Move{to, "signalled", snap.now, d.reason};
    a.kind = Action::Kind::checkpoint;
    a.record = job::to_text(rec);
    round.actions.push_back(a);
  }
  round.decide_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return round;
}

}  // namespace crius::slurm
