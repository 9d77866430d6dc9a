// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The simulated-clock driver of the Scheduler (what crius-sim runs): jobs
// arrive from a trace, every `interval_s` the Scheduler decides, decisions are
// applied, and progress is integrated at the Cell-optimal speed of each job's
// allocation until the next round (with the live restart model, until the next tick:
// SimOptions::tick_s).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"

namespace crius::scheduler {

// The trace CSV of the Crius artifact:
//   job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,gpu_type
// and optionally `kind` (JobKind: movable, the default, fixed or plain).
// Columns may come in any order; '#' lines are comments; errors name the file
// and line. `iter_scale`
// multiplies iterations and divides deadline budgets (the paper ran 0.2).
Result<std::vector<Job>> load_trace(const std::string& path, double iter_scale);

// Every model must be known to `tput` and every GPU type in `known_gpus`.
Result<void> validate_trace(const std::string& path, const std::vector<Job>& jobs,
                            ThroughputSource& tput, const std::vector<std::string>& known_gpus);

// The latest submission time a trace may hold: Unix times (the venus trace's are, around
// 1.59e9) up to the year 5138. The simulation starts at the first submission and skips
// idle time, so only max_rounds bounds its length.
inline constexpr double kMaxTraceSeconds = 1e11;

struct SimOptions {
  PolicyOptions policy;
  // The live restart model (PolicyOptions::restart_model live) runs the mechanics of Slurm with
  // criusd: each job gets its Cell when it is submitted (Policy::arrive, on criusd's report of
  // its last round less what was given since, as job_submit knows it) and waits in it; every
  // tick_s the resource manager starts, in queue order, each waiting job whose Cell fits the
  // free GPUs; the policy's rounds come every interval_s (a multiple of tick_s), the first half
  // an interval after the first submission; a job starts
  // making progress start_latency_s after it is started, and checkpoint_grace_s +
  // restart_cost_s after it is moved or resumed.
  double tick_s = 30;
  double start_latency_s = 0;
  // What a move, resize or resume costs a job, where it differs from what the policy weighs it
  // at (policy.restart_cost_s, criusd's restart_cost_s); < 0: the same.
  double charged_restart_cost_s = -1;
  // What jobs really run at (null: the source the policy decides with, an oracle).
  ThroughputSource* truth = nullptr;
  // A bound on the rounds of one run, so that no trace runs without end (2*10^6 rounds of
  // the default 300 s are 19 years of simulated time).
  std::int64_t max_rounds = 2'000'000;
  bool check_invariants = true;                     // after every round
  std::function<void(double done_fraction)> progress;  // called once per round
  // After the decisions of a round are applied (tests observe every round).
  std::function<void(double now, const std::vector<Job>&, const std::vector<Decision>&)> on_round;
};

struct Sample {
  double time;            // round start
  double throughput;      // samples/s, averaged over the round
  int busy_gpus;
};

struct SimResult {
  std::string policy;
  std::vector<Job> jobs;
  std::vector<Sample> timeline;
  std::vector<double> round_wall_s;          // wall time of each decide()
  std::vector<std::string> unrunnable;       // "job <id>: why"
  double start = 0, end = 0;                 // first submission, last finish
  double throughput_integral = 0;            // samples
  std::vector<std::pair<std::string, double>> gpu_seconds;  // per GPU type
};

Result<SimResult> simulate(const ClusterState& cluster, std::vector<Job> jobs, Policy& policy,
                           ThroughputSource& tput, const SimOptions& options);

}  // namespace crius::scheduler
