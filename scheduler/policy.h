// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The one policy interface. A policy sees one round (cluster, the active jobs,
// the time, a throughput source) and returns the allocation it wants each
// active job to hold; the Scheduler turns that into decisions. Policies keep no
// state between rounds that decides anything (crius memoises the Cells of each class of jobs),
// so a restarted controller decides the same.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/result.h"
#include "scheduler/objective.h"
#include "scheduler/placement.h"
#include "scheduler/throughput.h"
#include "scheduler/types.h"

namespace crius::scheduler {

// How a move, resize or resume is charged: `flat`, restart_cost_s for every job of every
// policy; `paper`, as the Crius paper charged it, per GPU of the new allocation with a cap,
// 10 s (at most 40) for a Cell policy, whose Cells spare the re-tuning, and 150 s (at most
// 600) for the baselines, accrued as time debt (a move during a restart adds to it); `live`,
// as criusd moves a job on Slurm: the checkpoint grace, then restart_cost_s (requeue, the new
// start and the work since the checkpoint), for every policy.
enum class RestartModel { flat, paper, live };

// The crius policy's mechanisms, each of which can be turned off for an ablation
// (crius-sim --crius-without; the Crius paper's crius-ns, -nh and -no are scaling, type_change
// and opportunistic).
struct CriusMechanisms {
  bool search = true;         // a job that fits poorly searches a change of running jobs
  bool scaling = true;        // searches shrink running jobs, upgrades double them
  bool type_change = true;    // searches and upgrades move running jobs to another GPU type
  bool migration = true;      // searches migrate a running job on its type to make room
  bool opportunistic = true;  // jobs behind a blocked queue head start
  bool upgrade = true;        // with nobody waiting, running jobs grow or change type
  // Running jobs one search may shrink, one after another, where no single change makes room.
  int search_depth = 1;
  int search_fits = 8;   // poor fits searched per round
  int search_jobs = 16;  // running jobs (the largest) one search tries
};
// "search,scaling,...": the mechanisms named turned off (an empty list: none).
Result<CriusMechanisms> crius_without(const std::string& list);

struct PolicyOptions {
  double interval_s = 300;       // round length
  double restart_cost_s = 60;    // lost time of a job that is moved, resized or resumed (flat, live)
  RestartModel restart_model = RestartModel::flat;
  double checkpoint_grace_s = 0; // live: between the checkpoint signal and the requeue
  // How the crius policy chooses among a job's Cells that place now (objective.h): the same
  // rule job_submit applies at submission ([job_submit] objective).
  Objective objective = Objective::adaptive;
  // Deadline mode: every policy takes its queue earliest deadline first (within the resource
  // manager's priority), and crius chooses Cells that meet deadlines (deadline_cells).
  bool deadline_mode = false;
  // crius: each job with a deadline gets the fewest GPUs that meet it where it can, and a
  // running job that would miss it moves to a Cell that meets it; in queue order (criusd).
  bool deadline_cells = false;
  uint64_t seed = 1;             // tie breaking
  double solver_time_limit_s = 10;  // gavel/sia: GLPK time limit per round (a safety net)
  int max_gpus = 0;              // crius: the largest allocation of one job (0 = no bound; the site's)
  CriusMechanisms crius;
  // Running jobs preempted, moved or resized per round, in queue order (-1 = no bound);
  // the starts that needed the dropped moves wait. criusd's max_moves_per_round.
  int max_moves_per_round = -1;
  // criusd's bounds on one running job, for every policy: it is preempted, moved or resized
  // only after running min_runtime_s since its last start, and at most max_moves_per_job times
  // in rate_window_s (-1 = no bound). criusd applies them before the policy (min_runtime_s,
  // max_moves_per_job_per_hour); crius-sim here.
  double min_runtime_s = 0;
  int max_moves_per_job = -1;
  double rate_window_s = 3600;
};
// Whether the bounds above let running job `j` change now.
bool may_change(const Job& j, const PolicyOptions& o, double now);

// A ClusterState's GPU types and counts, summed once per round instead of at every question.
struct ClusterTotals {
  explicit ClusterTotals(const ClusterState& cluster);
  std::vector<std::string> types;  // sorted, unique
  std::vector<int> gpus;           // of each type
  int all = 0;
  int of(const std::string& gpu) const;
};

struct Context {
  const ClusterState& cluster;
  // Pending and running, in queue order (priority, then submission, then id); the pending plain
  // jobs too where the policy queues them (Policy::queues_plain_jobs).
  std::vector<const Job*> jobs;
  double now;
  ThroughputSource& tput;
  const PolicyOptions& options;
  std::vector<unsigned> tie;     // per node, a permutation drawn from options.seed
  ClusterTotals totals{cluster};

  const std::vector<std::string>& gpu_types() const { return totals.types; }
  int total_gpus(const std::string& gpu) const { return totals.of(gpu); }
  int total_gpus() const { return totals.all; }

  FreeMap free_map() const { return FreeMap(cluster, &tie); }

  Perf best(const Job& j, const Cell& s) const { return tput.best(j.model, j.global_batch, s, j.stack()); }
  Perf dp(const Job& j, const Cell& s) const {
    return tput.data_parallel(j.model, j.global_batch, s, j.stack());
  }
  // The largest allocation `j` may get: the site's bound and the job's own (0 = none).
  int max_gpus(const Job& j) const {
    if (options.max_gpus > 0 && j.max_gpus > 0) return std::min(options.max_gpus, j.max_gpus);
    return std::max(options.max_gpus, j.max_gpus);
  }
  // Some shape of `gpus` GPUs of `gpu` fits the job in memory (Cell-optimal plan).
  bool feasible(const Job& j, const std::string& gpu, int gpus) const;
  // The resource manager lets `j` have `shape` in `partition` (Job::partition_max_nodes,
  // Job::max_nodes, max_gpus_per_node, max_gpus_of_type, max_gpus).
  bool allowed(const Job& j, int partition, const Cell& shape) const;
};

// What a policy wants for one job (same order as Context::jobs).
struct Target {
  Allocation alloc;              // empty: pending (or preempted)
  bool opportunistic = false;
  std::string reason;
  // Preempted for the blocked queue head ctx.jobs[given_way_to]: one of a group that stands or
  // falls together (Scheduler::decide keeps all of it or none).
  int given_way_to = -1;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  virtual std::vector<Target> schedule(const Context& ctx) = 0;
  // A Cell policy (crius) moves a job between Cells whose plans it already has: the paper's
  // restart model charges it less than a baseline that re-tunes after every change.
  virtual bool cell_policy() const { return false; }
  // Whether the pending plain jobs (JobKind::plain) are in Context::jobs, in their place in the
  // queue: the resource manager starts each on its request (Job::held in Job::held_partition),
  // and the policy gives it no Cell; a target it returns for one is the GPUs it holds for it
  // (Scheduler::reserved), never a decision.
  virtual bool queues_plain_jobs() const { return false; }
  // The Cell ctx.jobs[i], submitted now, waits in until the resource manager starts it, with
  // the others as they run: job_submit's step at submission, which crius-sim's live restart
  // model takes at each arrival. `waiting`: how many other jobs wait for GPUs, as job_submit
  // knows it (criusd's count at its last round and the jobs submitted since). The default has
  // no such step: what the job requested (the consolidated shape), nullopt where no partition
  // holds it.
  virtual std::optional<PlacedShape> arrive(const Context& ctx, std::size_t i, int waiting);
  // Whether this policy could ever run the job on this cluster (e.g. fcfs needs
  // the requested type and count to fit in memory). Unrunnable jobs are reported.
  virtual Result<void> runnable(const Job& job, const Context& ctx) const;
};

using PolicyFactory = std::function<std::unique_ptr<Policy>(const PolicyOptions&)>;
const std::vector<std::pair<std::string, PolicyFactory>>& policy_registry();
std::vector<std::string> policy_names();
Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const PolicyOptions& options);

// Helpers shared by policies.
// What a job that keeps its request asks for: of the shapes of req_gpus GPUs of req_gpu the
// resource manager allows, the first (shapes_for: the fewest nodes, as Slurm's cons_tres packs
// --gpus=N) that fits the job in memory, else the first; nullopt where none is allowed. What
// crius-replay submits for Slurm alone and for a plain job.
std::optional<PlacedShape> requested_shape(const Context& ctx, const Job& j);
// Targets that keep every running job where it is.
std::vector<Target> keep_running(const Context& ctx);
// A free map with the given targets' allocations taken.
FreeMap taken(const Context& ctx, const std::vector<Target>& targets);
// For policies that keep the requested GPU type: the type must be in the
// cluster and some count (exactly the requested one when exact_count) must fit.
Result<void> runnable_on_requested_type(const Job& job, const Context& ctx, bool exact_count);
// Speed a policy decides with: the Cell-optimal speed, or (data_parallel) the
// pure data-parallel speed, which baselines know; where pure data parallelism
// does not fit in memory, the Cell-optimal speed stands in. -1: not feasible.
// Seconds a job moved, resized or resumed onto `gpus` GPUs loses (PolicyOptions::restart_model).
double restart_cost(const PolicyOptions& o, bool cell_policy, int gpus);
double decision_speed(const Context& ctx, const Job& job, const Cell& shape,
                      bool data_parallel);
// A shape a job may have, in its partition, and the job's speed there (> 0).
struct RatedShape {
  int partition;
  Cell shape;
  double speed;
};
// The fastest of `shapes` that places on `free` (the first among equal speeds), and its speed.
std::optional<Allocation> place_fastest(const FreeMap& free, const std::vector<RatedShape>& shapes,
                                        double* speed = nullptr);
// Best placement of `gpus` GPUs of `gpu` for the job by speed (best or dp),
// among shapes that fit the free map, are memory-feasible and allowed (Context::allowed).
std::optional<Allocation> place_best(const Context& ctx, const FreeMap& free, const Job& job,
                                     const std::string& gpu, int gpus, bool data_parallel);

}  // namespace crius::scheduler
