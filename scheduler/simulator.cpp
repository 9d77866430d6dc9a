// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>

#include "common/util.h"

namespace crius::scheduler {

Result<std::vector<Job>> load_trace(const std::string& path, double iter_scale) {
  std::ifstream in(path);
  if (!in) return make_error(path + ": cannot open");
  std::string line;
  int lineno = 0;
  // Leading '#' lines (an origin note) come before the header.
  bool got = false;
  while ((got = static_cast<bool>(std::getline(in, line)))) {
    ++lineno;
    if (line.empty() || line[0] != '#') break;
  }
  if (!got) return make_error(path + ":" + std::to_string(lineno + 1) + ": empty file, expected a header");
  const std::string header_at = path + ":" + std::to_string(lineno) + ": ";
  static const char* kCols[] = {"job_id", "submission_time", "num_iteration", "model_name",
                                "deadline", "batch_size", "num_gpu", "gpu_type"};
  std::vector<std::string> header = util::split_csv(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* c : kCols)
    if (!col.count(c))
      return make_error(header_at + "header lacks column '" + c +
                        "' (expected job_id,submission_time,num_iteration,model_name,deadline,"
                        "batch_size,num_gpu,gpu_type)");
  std::vector<Job> jobs;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line == "\r" || line[0] == '#') continue;
    std::vector<std::string> f = util::split_csv(line);
    std::string at = path + ":" + std::to_string(lineno) + ": ";
    if (f.size() != header.size())
      return make_error(at + std::to_string(f.size()) + " fields, the header has " +
                        std::to_string(header.size()));
    auto field = [&](const char* c) -> const std::string& { return f[col.at(c)]; };
    Job j;
    j.id = static_cast<int>(jobs.size());
    j.name = field("job_id");
    j.model = field("model_name");
    j.req_gpu = field("gpu_type");
    double deadline = 0;
    if (j.name.empty()) return make_error(at + "column 'job_id' is empty");
    if (j.model.empty()) return make_error(at + "column 'model_name' is empty");
    if (j.req_gpu.empty()) return make_error(at + "column 'gpu_type' is empty");
    if (!util::parse_number(field("submission_time"), j.submit_time) || j.submit_time < 0 ||
        j.submit_time > kMaxTraceSeconds)
      return make_error(at + "column 'submission_time' must be a number of seconds from 0 to 1e11, got '" +
                        field("submission_time") + "'");
    if (!util::parse_number(field("num_iteration"), j.iterations) || j.iterations <= 0 || j.iterations > 1e12)
      return make_error(at + "column 'num_iteration' must be a number from 1 to 1e12, got '" +
                        field("num_iteration") + "'");
    if (!util::parse_number(field("deadline"), deadline) || std::abs(deadline) > 1e12)
      return make_error(at + "column 'deadline' must be a number of seconds (at most 1e12), got '" +
                        field("deadline") + "'");
    if (!util::parse_number(field("batch_size"), j.global_batch) || j.global_batch <= 0)
      return make_error(at + "column 'batch_size' must be an integer > 0, got '" +
                        field("batch_size") + "'");
    if (!util::parse_number(field("num_gpu"), j.req_gpus) || j.req_gpus <= 0)
      return make_error(at + "column 'num_gpu' must be an integer > 0, got '" + field("num_gpu") +
                        "'");
    if (col.count("kind")) {  // optional: who decides the job's GPUs (JobKind), movable by default
      const std::string& k = field("kind");
      if (auto kind = parse_job_kind(k)) j.kind = *kind;
      else if (!k.empty()) return make_error(at + "column 'kind' must be movable, fixed or plain, got '" + k + "'");
    }
    j.iterations = std::max(1.0, std::round(j.iterations * iter_scale));
    j.deadline = j.submit_time + (deadline - j.submit_time) / iter_scale;
    jobs.push_back(std::move(j));
  }
  if (jobs.empty()) return make_error(path + ": no jobs");
  return jobs;
}

Result<void> validate_trace(const std::string& path, const std::vector<Job>& jobs,
                            ThroughputSource& tput, const std::vector<std::string>& known_gpus) {
  std::map<std::string, bool> checked;
  for (const Job& j : jobs) {
    if (!checked.count(j.model)) {
      Result<void> r = tput.check_model(j.model);
      if (!r) return make_error(path + ": job " + j.name + ": " + r.error());
      checked[j.model] = true;
    }
    if (std::find(known_gpus.begin(), known_gpus.end(), j.req_gpu) == known_gpus.end()) {
      std::vector<std::string> near = util::close_matches(j.req_gpu, known_gpus, 3);
      return make_error(path + ": job " + j.name + ": unknown GPU type '" + j.req_gpu + "'" +
                        (near.empty() ? "" : "; did you mean " + util::join(near, ", ") + "?") +
                        " (known: " + util::join(known_gpus, ", ") + ")");
    }
  }
  return {};
}

Result<SimResult> simulate(const ClusterState& cluster, std::vector<Job> jobs, Policy& policy,
                           ThroughputSource& tput, const SimOptions& options) {
  SimResult res;
  res.policy = policy.name();
  Scheduler sched(policy, tput, options.policy);
  ThroughputSource& truth = options.truth ? *options.truth : tput;
  const double interval = options.policy.interval_s;
  const bool live = options.policy.restart_model == RestartModel::live;
  const double step = live ? options.tick_s : interval;  // the time between two looks at the cluster
  if (live && !(options.tick_s > 0 && options.tick_s <= interval))
    return make_error("simulate: the tick must be > 0 and at most the interval");
  // The time a job loses when it moves onto `a`: flat, the paper's debt, which accrues, or the
  // live grace and restart.
  PolicyOptions charged = options.policy;
  if (options.charged_restart_cost_s >= 0) charged.restart_cost_s = options.charged_restart_cost_s;
  auto restart_until = [&](const Job& j, const Allocation& a, double now) {
    const double cost = restart_cost(charged, policy.cell_policy(), a.shape.gpus());
    return options.policy.restart_model == RestartModel::paper ? std::max(now, j.restart_until) + cost : now + cost;
  };
  // A start: the first one pays the start latency (live) or nothing, a resume the restart.
  auto start = [&](Job& j, const Allocation& a, bool opportunistic, double now) {
    j.state = JobState::running;
    j.alloc = a;
    j.opportunistic = opportunistic;
    j.restart_until = j.first_start < 0 ? now + (live ? options.start_latency_s : 0) : restart_until(j, a, now);
    if (j.first_start < 0) j.first_start = now;
    j.last_start = now;
    j.held = a.shape;
    j.held_partition = a.partition;
  };
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    order[i] = i;
    if (jobs[i].id != static_cast<int>(i)) return make_error("simulate: job ids must be 0..n-1");
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return jobs[a].submit_time < jobs[b].submit_time;
  });
  std::map<std::string, double> gpu_seconds;
  for (const std::string& t : cluster.gpu_types()) gpu_seconds[t] = 0;
  const double t0 = jobs.empty() ? 0 : jobs[order[0]].submit_time;
  res.start = res.end = t0;
  // Live: criusd's rounds keep their own clock, not the trace's: the first comes half an interval
  // (the mean phase) after the first submission, not in the same instant.
  const double first_round = t0 + (live ? interval / 2 : 0);
  double now = t0, next_round = first_round;
  size_t arrived = 0, closed = 0;  // closed: finished or unrunnable
  // Live: what job_submit knows when a crius job is submitted: criusd's report of its last round
  // (the GPUs it left free, the jobs it left waiting; before the first, an empty cluster), less
  // the Cells job_submit gave since where they fitted, and the crius jobs submitted since (it
  // sees no plain job). The GPUs held for plain jobs ahead are Policy::arrive's to hold.
  int waiting_reported = 0, submitted_since = 0;
  FreeMap told(cluster);
  ClusterState seen = cluster;  // a cluster whose free GPUs are `told`'s, for Scheduler::arrive
  auto told_cluster = [&]() -> const ClusterState& {
    for (size_t n = 0; n < seen.nodes.size(); ++n) seen.nodes[n].capacity = told.free(static_cast<int>(n));
    for (const Job& r : jobs)  // the arrival's round takes the running jobs' GPUs off again
      if (r.state == JobState::running)
        for (int n : r.alloc.node_ids) seen.nodes[n].capacity += r.alloc.shape.gpus_per_node;
    return seen;
  };
  size_t idle_rounds = 0;
  // The jobs the resource manager starts (live: all; otherwise the plain ones), in queue order
  // (the trace's: submission, then id).
  std::vector<size_t> queue;
  // The resource manager's pass: each waiting job whose Cell fits starts, in queue order.
  auto slurm_pass = [&](double now) {
    FreeMap free(cluster);
    for (const Job& j : jobs)
      if (j.state == JobState::running) free.take(j.alloc);
    for (size_t q : queue) {
      Job& j = jobs[q];
      if (j.state != JobState::pending || j.held_partition < 0) continue;
      if (auto a = free.place(j.held_partition, j.held)) {
        a->shape.stages = tput.best(j.model, j.global_batch, a->shape, j.stack()).stages;
        free.take(*a);
        start(j, *a, false, now);
      }
    }
    std::erase_if(queue, [&](size_t q) { return jobs[q].state != JobState::pending; });
  };

  std::vector<Perf> speed(jobs.size());                // of each running job, on its Cell
  std::vector<double> speed_since(jobs.size(), -1);  // the last_start it was looked up at
  std::int64_t rounds = 0;
  while (closed < jobs.size()) {
    if (++rounds > options.max_rounds)
      return make_error("the simulation did not end within " + std::to_string(options.max_rounds) + (live ? " ticks of " : " rounds of ") +
                        util::fmt(step) + " s (" + util::fmt(now - t0) + " s of trace time): " +
                        std::to_string(jobs.size() - closed) + " jobs still open; a job runs for longer than the "
                        "simulation can follow (check num_iteration, or raise --interval)");
    while (arrived < order.size() && jobs[order[arrived]].submit_time <= now) {
      Job& j = jobs[order[arrived++]];
      Result<void> ok = sched.runnable(cluster, j);
      if (!ok) {
        j.state = JobState::unrunnable;
        res.unrunnable.push_back("job " + j.name + ": " + ok.error());
        ++closed;
      } else if (live || j.kind == JobKind::plain) {
        // Decided at its submission, on the GPUs free and the jobs waiting as job_submit knows
        // them (above: until criusd's next round sees it, a new crius job counts as waiting and
        // its Cell as taken); Slurm starts it at once where it fits. A plain job waits for its
        // request, in every restart model.
        const bool by_job_submit = live && j.kind != JobKind::plain;
        if (auto held = sched.arrive(by_job_submit ? told_cluster() : cluster, jobs, j, now,
                                     waiting_reported + submitted_since)) {
          j.held = held->shape, j.held_partition = held->partition;
          if (by_job_submit)
            if (auto a = told.place(held->partition, held->shape)) told.take(*a);
        }
        submitted_since += by_job_submit;
        queue.push_back(static_cast<size_t>(&j - jobs.data()));
        slurm_pass(now);
      }
    }
    const bool round = !live || now >= next_round - 1e-9;
    Result<std::vector<Decision>> decisions = std::vector<Decision>{};
    if (round) {
      next_round += interval;
      if (live) mark_opportunistic(jobs, now);  // as criusd reads it off Slurm
      auto t_begin = std::chrono::steady_clock::now();
      decisions = sched.decide(cluster, jobs, now);
      res.round_wall_s.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t_begin).count());
    }
    if (!decisions) return make_error(decisions.error());
    // Apply: release everything that changes first, then take.
    for (const Decision& d : *decisions) {
      Job& j = jobs[d.job];
      switch (d.kind) {
        case Decision::Kind::preempt:
          j.state = JobState::pending;
          j.held = j.alloc.shape;  // live: it waits for the GPUs it had
          j.held_partition = j.alloc.partition;
          j.alloc = Allocation{};
          j.opportunistic = false;
          j.changed_at.push_back(now);
          ++j.reconfigurations;
          if (live) queue.push_back(static_cast<size_t>(d.job));  // requeued: Slurm starts it again
          break;
        case Decision::Kind::move:
        case Decision::Kind::resize:
          j.restart_until = restart_until(j, d.target, now);
          j.alloc = d.target;
          j.last_start = now;
          j.changed_at.push_back(now);
          ++j.reconfigurations;
          break;
        case Decision::Kind::start:
          start(j, d.target, d.opportunistic, now);
          break;
      }
    }
    if (live && round) {  // criusd reports the GPUs its round left free and the jobs left waiting
      waiting_reported = static_cast<int>(std::count_if(jobs.begin(), jobs.end(), [&](const Job& j) {
        return j.state == JobState::pending && j.submit_time <= now;
      }));
      submitted_since = 0;
      told = FreeMap(cluster);
      for (const Job& j : jobs)
        if (j.state == JobState::running) told.take(j.alloc);
    }
    if (!queue.empty()) {  // live: every job; otherwise the plain ones
      std::sort(queue.begin(), queue.end(), [&](size_t a, size_t b) {
        return jobs[a].submit_time != jobs[b].submit_time ? jobs[a].submit_time < jobs[b].submit_time : a < b;
      });
      queue.erase(std::unique(queue.begin(), queue.end()), queue.end());
      slurm_pass(now);
    }
    if (options.check_invariants) {
      // A Cell's memory is checked when a job gets it (start, move or resize: last_start).
      Result<void> inv = check_invariants(cluster, jobs, tput, [&](const Job& j) { return j.last_start == now; });
      if (!inv) return make_error("round at t=" + std::to_string(now) + ": " + inv.error());
    }

    if (options.on_round && round) options.on_round(now, jobs, *decisions);
    const double next = now + step;
    double samples = 0;
    int busy = 0, running = 0, pending = 0;
    for (Job& j : jobs) {
      if (j.submit_time <= now && j.state == JobState::pending) ++pending;
      if (j.state != JobState::running) continue;
      ++running;
      busy += j.alloc.shape.gpus();
      // Its speed, looked up again only when it got another Cell (last_start).
      if (speed_since[j.id] != j.last_start) {
        speed[j.id] = truth.best(j.model, j.global_batch, j.alloc.shape, j.stack());
        speed_since[j.id] = j.last_start;
      }
      const Perf& p = speed[j.id];
      if (!p.feasible) {  // the policy believed it fits; measured, it runs out of memory: it fails
        res.unrunnable.push_back("job " + j.name + ": failed on " + j.alloc.shape.gpu + " " +
                                 std::to_string(j.alloc.shape.nodes) + "x" + std::to_string(j.alloc.shape.gpus_per_node) +
                                 ", which the policy believed fits: " + p.why);
        j.state = JobState::unrunnable;
        j.alloc = Allocation{};
        ++closed;
        continue;
      }
      double eff = std::max(now, j.restart_until);
      double end = next;
      if (eff < next) {
        double its = (next - eff) / p.iter_time_s;
        if (j.done_iterations + its >= j.iterations - 1e-9) {
          end = eff + (j.iterations - j.done_iterations) * p.iter_time_s;
          j.done_iterations = j.iterations;
          j.finish_time = end;
          j.state = JobState::finished;
          res.end = std::max(res.end, end);
          ++closed;
        } else {
          j.done_iterations += its;
        }
        samples += p.samples_per_s * (end - eff);
      }
      gpu_seconds[j.alloc.shape.gpu] += j.alloc.shape.gpus() * (end - now);
      if (j.state == JobState::finished) j.alloc = Allocation{};
    }
    res.throughput_integral += samples;
    res.timeline.push_back(Sample{now, samples / step, busy});
    if (options.progress) options.progress(static_cast<double>(closed) / jobs.size());

    // Nothing runs, nothing can start, no one else arrives: the rest never runs (judged at the
    // policy's rounds).
    const bool idle = running == 0 && arrived == order.size() && pending > 0 && decisions->empty();
    if (round && !idle) idle_rounds = 0;
    if (round && idle && ++idle_rounds > 2) {
      for (Job& j : jobs)
        if (j.state == JobState::pending) {
          j.state = JobState::unrunnable;
          res.unrunnable.push_back("job " + j.name + ": never started: policy " + policy.name() +
                                   " found no place for it on an idle cluster");
          ++closed;
        }
    }
    now = next;
    // Skip idle time up to the round (live: the tick) of the next arrival.
    if (running == 0 && pending == 0 && arrived < order.size()) {
      double t = jobs[order[arrived]].submit_time;
      if (t > now) now = t0 + std::ceil((t - t0) / step) * step;
      if (live) next_round = std::max(next_round, first_round + std::ceil((now - first_round) / interval - 1e-9) * interval);
    }
  }
  for (auto& [t, s] : gpu_seconds) res.gpu_seconds.emplace_back(t, s);
  res.jobs = std::move(jobs);
  return res;
}

}  // namespace crius::scheduler
