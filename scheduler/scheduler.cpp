// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/scheduler.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <tuple>

namespace crius::scheduler {

namespace {

// A job's allocation to check, and whether its Cell's memory is checked too.
struct Held {
  const Job* job;
  const Allocation* alloc;
  bool memory;
};

Result<void> check_allocation(const ClusterState& cluster, const Job& job, const Allocation& a,
                              ThroughputSource& tput, bool memory) {
  auto who = [&] { return "job " + job.name + ": "; };
  if (a.partition < 0 || a.partition >= static_cast<int>(cluster.partitions.size()))
    return make_error(who() + "allocation names no partition");
  if (static_cast<int>(a.node_ids.size()) != a.shape.nodes || a.shape.gpus_per_node <= 0)
    return make_error(who() + "allocation does not match its Cell shape");
  const Partition& part = cluster.partitions[a.partition];
  if (a.shape.gpu != part.gpu) return make_error(who() + "Cell GPU type differs from its partition");
  for (int id : a.node_ids) {
    if (id < 0 || id >= static_cast<int>(cluster.nodes.size()))
      return make_error(who() + "allocation names an unknown node");
    const Node& n = cluster.nodes[id];
    if (n.partition != a.partition || n.gpu != a.shape.gpu)
      return make_error(who() + "allocation mixes partitions or GPU types (node " + n.name + ")");
  }
  if (!memory) return {};
  Perf p = tput.best(job.model, job.global_batch, a.shape, job.stack());
  if (!p.feasible)
    return make_error(who() + "Cell " + a.shape.gpu + " " + std::to_string(a.shape.nodes) + "x" +
                      std::to_string(a.shape.gpus_per_node) + " is not feasible: " + p.why);
  return {};
}

// Each allocation on its own, then no node given more GPUs than it has.
Result<void> check_held(const ClusterState& cluster, const std::vector<Held>& held, ThroughputSource& tput) {
  std::vector<int> used(cluster.nodes.size(), 0);
  std::vector<std::size_t> listed_by(cluster.nodes.size(), held.size());  // the last allocation listing it
  for (std::size_t k = 0; k < held.size(); ++k) {
    const Allocation& a = *held[k].alloc;
    if (auto r = check_allocation(cluster, *held[k].job, a, tput, held[k].memory); !r) return r;
    for (int id : a.node_ids) {
      if (listed_by[id] == k)
        return make_error("job " + held[k].job->name + ": a node is listed twice in its allocation");
      listed_by[id] = k;
      used[id] += a.shape.gpus_per_node;
    }
  }
  for (size_t i = 0; i < used.size(); ++i)
    if (used[i] > cluster.nodes[i].capacity)
      return make_error("node " + cluster.nodes[i].name + ": " + std::to_string(used[i]) +
                        " GPUs given, capacity " + std::to_string(cluster.nodes[i].capacity));
  return {};
}

}  // namespace

Result<void> check_invariants(const ClusterState& cluster, const std::vector<Job>& jobs,
                              ThroughputSource& tput,
                              const std::function<bool(const Job&)>& memory_check_for) {
  std::vector<Held> held;
  for (const Job& j : jobs) {
    if (j.state != JobState::running) {
      if (!j.alloc.empty()) return make_error("job " + j.name + ": not running but holds GPUs");
      continue;
    }
    if (j.alloc.empty()) return make_error("job " + j.name + ": running without GPUs");
    held.push_back(Held{&j, &j.alloc, !memory_check_for || memory_check_for(j)});
  }
  return check_held(cluster, held, tput);
}

void mark_opportunistic(std::vector<Job>& jobs, double now, const std::vector<std::uint64_t>& order) {
  auto tie = [&](std::size_t i) { return order.empty() ? static_cast<std::uint64_t>(jobs[i].id) : order[i]; };
  // The waiting jobs in queue order, and the earliest submission of those before each.
  struct Waiting {
    double priority, since;
    std::uint64_t tie;
  };
  std::vector<Waiting> waiting;
  for (std::size_t i = 0; i < jobs.size(); ++i)
    if (jobs[i].state == JobState::pending && jobs[i].submit_time <= now)
      waiting.push_back({jobs[i].priority, jobs[i].submit_time, tie(i)});
  std::sort(waiting.begin(), waiting.end(), [](const Waiting& a, const Waiting& b) {
    return std::tuple(-a.priority, a.since, a.tie) < std::tuple(-b.priority, b.since, b.tie);
  });
  std::vector<double> earliest_before(waiting.size() + 1, std::numeric_limits<double>::infinity());
  for (std::size_t k = 0; k < waiting.size(); ++k) earliest_before[k + 1] = std::min(earliest_before[k], waiting[k].since);
  for (std::size_t r = 0; r < jobs.size(); ++r) {
    Job& run = jobs[r];
    if (run.state != JobState::running) continue;
    // Ahead of it: any waiting job of a higher priority, or the first of its own that is ahead.
    auto k = std::lower_bound(waiting.begin(), waiting.end(), run.priority,
                              [](const Waiting& w, double p) { return w.priority > p; });
    const double above = earliest_before[static_cast<std::size_t>(k - waiting.begin())];
    const bool same_ahead = k != waiting.end() && k->priority == run.priority && k->since <= run.last_start &&
                            std::tuple(k->since, k->tie) < std::tuple(run.submit_time, tie(r));
    run.opportunistic = above <= run.last_start || same_ahead;
  }
}

// The same seed gives the same permutation in every round and every driver: drawn once per
// cluster size and seed.
static const std::vector<unsigned>& tie_ranks(size_t n, uint64_t seed) {
  thread_local std::vector<unsigned> r;
  thread_local std::optional<std::pair<size_t, uint64_t>> drawn;
  if (drawn != std::pair{n, seed}) {
    r.resize(n);
    std::iota(r.begin(), r.end(), 0u);
    std::mt19937_64 rng(seed);
    for (size_t i = n; i > 1; --i) std::swap(r[i - 1], r[rng() % i]);
    drawn = std::pair{n, seed};
  }
  return r;
}

// Reverts the changes of running jobs that may not change now (may_change), keeps the first
// `budget` of the others (queue order; -1: all) and reverts the rest; a kept change that no
// longer fits is reverted too (reverting every change gives back the running state, which
// fits). Then each start is kept only where it still fits.
static void bound_moves(const ClusterState& cluster, const std::vector<const Job*>& jobs,
                        std::vector<Target>& targets, const PolicyOptions& options, double now) {
  auto revert = [&](size_t i, const char* why) {
    targets[i].alloc = jobs[i]->alloc;
    targets[i].reason = why;
  };
  std::vector<size_t> changes;
  bool reverted = false;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i]->state != JobState::running || targets[i].alloc == jobs[i]->alloc) continue;
    if (may_change(*jobs[i], options, now)) {
      changes.push_back(i);
    } else {
      revert(i, "kept: changed too recently (min_runtime_s, max_moves_per_job_per_hour)");
      reverted = true;
    }
  }
  const int budget = options.max_moves_per_round;
  if (budget >= 0 && static_cast<int>(changes.size()) > budget) {
    for (size_t k = static_cast<size_t>(budget); k < changes.size(); ++k)
      revert(changes[k], "kept: over the budget of moves per round");
    changes.resize(static_cast<size_t>(budget));
    reverted = true;
  }
  if (!reverted) return;
  // The jobs that gave way to a head stand or fall together: with one of them kept where it
  // runs, the others are too.
  std::vector<bool> short_of(jobs.size(), false);  // heads whose GPUs did not all come free
  for (size_t i = 0; i < jobs.size(); ++i)
    if (targets[i].given_way_to >= 0 && jobs[i]->state == JobState::running && targets[i].alloc == jobs[i]->alloc)
      short_of[targets[i].given_way_to] = true;
  for (size_t i = 0; i < jobs.size(); ++i)
    if (targets[i].given_way_to >= 0 && short_of[targets[i].given_way_to] && !(targets[i].alloc == jobs[i]->alloc)) {
      revert(i, "kept: the queue head it would give way to cannot have all the GPUs it needs this round");
      std::erase(changes, i);
    }
  std::vector<int> used;
  auto fits_all = [&] {
    used.assign(cluster.nodes.size(), 0);
    for (size_t i = 0; i < jobs.size(); ++i)
      if (jobs[i]->state == JobState::running)
        for (int n : targets[i].alloc.node_ids) used[n] += targets[i].alloc.shape.gpus_per_node;
    for (size_t n = 0; n < used.size(); ++n)
      if (used[n] > cluster.nodes[n].capacity) return false;
    return true;
  };
  while (!fits_all() && !changes.empty()) {
    revert(changes.back(), "kept: a change it needed was reverted");
    changes.pop_back();
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Allocation& a = targets[i].alloc;
    if (jobs[i]->state == JobState::running || a.empty()) continue;
    bool fits = true;
    for (int n : a.node_ids) fits = fits && used[n] + a.shape.gpus_per_node <= cluster.nodes[n].capacity;
    if (!fits) {
      targets[i].alloc = Allocation{};
      targets[i].opportunistic = false;
      targets[i].reason = "waits: the moves it needed were reverted (budget of moves per round, min_runtime_s, max_moves_per_job_per_hour)";
      continue;
    }
    for (int n : a.node_ids) used[n] += a.shape.gpus_per_node;
  }
}

Result<void> Scheduler::runnable(const ClusterState& cluster, const Job& job) {
  Context ctx{cluster, {}, 0, m_tput, m_options, {}};
  if (job.kind == JobKind::plain) return runnable_on_requested_type(job, ctx, true);
  return m_policy.runnable(job, ctx);
}

// The cluster as the policy sees it: the GPUs of the running jobs it does not decide
// (Job::decided_by_policy) taken, as criusd sees them; `cluster` itself where there are none.
static const ClusterState& policy_cluster(const ClusterState& cluster, const std::vector<Job>& jobs,
                                          std::optional<ClusterState>& view) {
  for (const Job& j : jobs) {
    if (j.state != JobState::running || j.decided_by_policy()) continue;
    if (!view) view = cluster;
    for (int n : j.alloc.node_ids) view->nodes[n].capacity -= j.alloc.shape.gpus_per_node;
  }
  return view ? *view : cluster;
}

// The round's view: the policy's running jobs and its pending ones submitted by `now`, in queue
// order: the resource manager's priority (crius-sim: all equal), then the earliest deadline in
// deadline mode, then submission.
static Context round_context(const ClusterState& cluster, const std::vector<Job>& jobs, double now,
                             ThroughputSource& tput, const PolicyOptions& options, bool plain) {
  Context ctx{cluster, {}, now, tput, options, tie_ranks(cluster.nodes.size(), options.seed)};
  for (const Job& j : jobs) {
    const bool pending = j.state == JobState::pending && j.submit_time <= now;
    if (j.decided_by_policy() ? pending || j.state == JobState::running
                              : plain && pending && j.kind == JobKind::plain && j.held_partition >= 0)
      ctx.jobs.push_back(&j);
  }
  const bool edf = options.deadline_mode;
  std::stable_sort(ctx.jobs.begin(), ctx.jobs.end(), [edf](const Job* a, const Job* b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    if (edf && a->deadline != b->deadline) return a->deadline < b->deadline;
    return a->submit_time != b->submit_time ? a->submit_time < b->submit_time : a->id < b->id;
  });
  return ctx;
}

std::optional<PlacedShape> Scheduler::arrive(const ClusterState& cluster, const std::vector<Job>& jobs,
                                             const Job& job, double now, int waiting) {
  if (job.state != JobState::pending) return std::nullopt;
  std::optional<ClusterState> view;
  const ClusterState& seen = policy_cluster(cluster, jobs, view);
  if (job.kind == JobKind::plain) {  // the resource manager's, by its request
    const Context ctx{seen, {&job}, now, m_tput, m_options, {}};
    return requested_shape(ctx, job);
  }
  Context ctx = round_context(seen, jobs, now, m_tput, m_options, m_policy.queues_plain_jobs());
  auto at = std::find(ctx.jobs.begin(), ctx.jobs.end(), &job);
  if (at == ctx.jobs.end()) return std::nullopt;
  return m_policy.arrive(ctx, static_cast<std::size_t>(at - ctx.jobs.begin()), waiting);
}

Result<std::vector<Decision>> Scheduler::decide(const ClusterState& whole,
                                                const std::vector<Job>& jobs, double now) {
  std::optional<ClusterState> view;
  const ClusterState& cluster = policy_cluster(whole, jobs, view);
  Context ctx = round_context(cluster, jobs, now, m_tput, m_options, m_policy.queues_plain_jobs());
  std::vector<Target> targets = m_policy.schedule(ctx);
  m_reserved.clear();
  if (targets.size() != ctx.jobs.size())
    return make_error("policy " + m_policy.name() + " returned a wrong number of targets");
  // Whatever the policy, no job gets an allocation the resource manager does not allow it
  // (Context::allowed); a running job may stay where it runs, a plain job on its request.
  for (size_t i = 0; i < targets.size(); ++i) {
    const Allocation& a = targets[i].alloc;
    if (a.empty() || a == ctx.jobs[i]->alloc || !ctx.jobs[i]->decided_by_policy() ||
        ctx.allowed(*ctx.jobs[i], a.partition, a.shape))
      continue;
    targets[i].alloc = ctx.jobs[i]->alloc;
    targets[i].opportunistic = false;
    targets[i].reason = "kept: the resource manager does not allow the policy's Cell";
  }
  bound_moves(cluster, ctx.jobs, targets, m_options, now);

  // Validate the whole target state before emitting anything.
  // A job left where it runs is not re-checked for memory: a live cluster may
  // hold jobs the estimator would not have placed, and that is not this round's doing.
  // A plain job's GPUs are held on its request, which the resource manager judges, not the estimator.
  std::vector<Held> held;
  for (size_t i = 0; i < ctx.jobs.size(); ++i)
    if (!targets[i].alloc.empty())
      held.push_back(Held{ctx.jobs[i], &targets[i].alloc,
                          ctx.jobs[i]->kind != JobKind::plain && !(targets[i].alloc == ctx.jobs[i]->alloc)});
  if (auto r = check_held(cluster, held, m_tput); !r) return make_error("policy " + m_policy.name() + ": " + r.error());

  std::vector<Decision> preempts, changes, starts;
  for (size_t i = 0; i < ctx.jobs.size(); ++i) {
    const Job& j = *ctx.jobs[i];
    Target& t = targets[i];
    if (!j.decided_by_policy()) {  // a pending plain job: the resource manager starts it
      if (!t.alloc.empty()) m_reserved.emplace_back(j.id, std::move(t.alloc));
      continue;
    }
    const bool was = j.state == JobState::running;
    if (t.alloc.empty() ? !was : was && j.alloc == t.alloc) continue;  // no change
    Decision d;
    d.job = j.id;
    d.target = std::move(t.alloc);
    d.opportunistic = t.opportunistic;
    d.reason = std::move(t.reason);
    if (!d.target.empty()) d.target.shape.stages = m_tput.best(j.model, j.global_batch, d.target.shape, j.stack()).stages;
    if (d.target.empty()) {
      d.kind = Decision::Kind::preempt;
      if (d.reason.empty()) d.reason = "preempted";
      preempts.push_back(std::move(d));
    } else if (!was) {
      d.kind = Decision::Kind::start;
      if (d.reason.empty()) d.reason = "start";
      starts.push_back(std::move(d));
    } else {
      d.kind = j.alloc.shape.gpus() != d.target.shape.gpus() ? Decision::Kind::resize : Decision::Kind::move;
      if (d.reason.empty()) d.reason = d.kind == Decision::Kind::resize ? "resize" : "move";
      changes.push_back(std::move(d));
    }
  }
  std::vector<Decision> out = std::move(preempts);
  for (auto& d : changes) out.push_back(std::move(d));
  for (auto& d : starts) out.push_back(std::move(d));
  return out;
}

}  // namespace crius::scheduler
