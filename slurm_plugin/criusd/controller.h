// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// One criusd round, without Slurm: a Snapshot of nodes and crius jobs goes in,
// the scheduler core's `crius` policy (the same code crius-sim runs) decides,
// and the decisions come out as Slurm actions. All state lives in Slurm (the
// job record in AdminComment, job/record.h), so a restarted criusd continues
// where it stopped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimator/estimator.h"
#include "job/record.h"
#include "scheduler/policy.h"
#include "slurm_plugin/criusd/snapshot.h"
#include "slurm_plugin/free_gpus.h"

namespace crius::slurm {

struct ControllerOptions {
  double interval_s = 300;
  std::string policy = "crius";
  int max_moves_per_round = 2;     // running jobs signalled per round (migration budget)
  int checkpoint_signal = 10;      // SIGUSR1
  double checkpoint_grace_s = 30;  // between the signal and the requeue
  double max_checkpoint_grace_s = 600;  // the most a job may ask for (--crius-checkpoint-grace)
  double restart_cost_s = 60;
  double default_iterations = 1000;  // for jobs submitted without --crius-iters
  // Site controls: jobs of these users, accounts, partitions and QOS are never touched.
  std::vector<std::string> skip_users, skip_accounts, skip_partitions, skip_qos;
  double min_runtime_s = 600;            // a running job is moved only after this long
  int max_moves_per_job_per_hour = 1;    // started moves of one job in the last hour
  int max_moves_per_user_per_hour = 4;   // of all active crius jobs of one user
  double rate_window_s = 3600;
  // A move whose next step is overdue by this much (criusd stopped mid-move) is rolled back.
  double move_resume_limit_s = 900;  // the "hour" of the two limits above (a time-compressed replay scales it)
  std::string lock_file = "/run/criusd.lock";
  std::string metrics_file;  // Prometheus text, rewritten after every round ("" = none)
  int max_gpus = 0;  // [job_submit] max_gpus: the largest Cell a move may give (0 = none)
  scheduler::Objective objective = scheduler::Objective::adaptive;  // [job_submit] objective
  std::string free_gpus_file = kDefaultFreeGpusFile;  // [job_submit] free_gpus_file ("" = none)
};

// The keys of [criusd] (criusd(8)).
const std::vector<std::string>& controller_option_keys();
// The job's checkpoint grace: its own (--crius-checkpoint-grace) up to max_checkpoint_grace_s,
// else checkpoint_grace_s.
double checkpoint_grace(const job::Record& rec, const ControllerOptions& o);
// Reads the [criusd] table of crius.toml (unknown keys are errors).
// [criusd], and the site's largest Cell ([job_submit] max_gpus), which criusd's moves honour too.
Result<ControllerOptions> load_controller_options(const estimator::Cluster& cluster);

// One step of criusd on one job. Each step is ordered so that criusd killed at any point
// and restarted ends in the same state (criusd(8)):
//   update_pending: the Cell fields, then `after` (a failed update is rolled back);
//   checkpoint:     `before` (phase signalling), the signal, `after` (phase signalled);
//   requeue:        `before` (phase requeuing), requeue and hold, `after` (phase requeued);
//   finish_move:    the new Cell's fields, then `after` with the hold released.
// A step that fails for good writes `abandon` (the move dropped, the reason kept).
struct Action {
  enum class Kind {
    update_pending,  // a pending job gets another Cell
    checkpoint,      // a running job is signalled to checkpoint before a move
    requeue,         // grace over: the running job is requeued, held
    finish_move,     // the requeued job, pending and held: the target Cell, then released
  };
  Kind kind = Kind::update_pending;
  std::uint32_t job = 0;
  std::string slurm_id;  // what Slurm's RPCs are given for this job alone (snapshot.h)
  estimator::Cell from, to;
  std::string before, after, abandon;  // records (job::to_text); "" = none for this step
  std::string admin_comment;  // the job's, as read: the lines of other tools, kept when the record is written
  bool release = false;  // finish_move: release the hold criusd's requeue put on the job
  std::uint16_t cpus_per_task = 1;  // the job's, for the CPU count of its new Cell
  std::string other_gres;           // the job's GRES per node other than GPUs, kept on its new Cell
  // update_pending, finish_move: the nodes the job is pinned to (ReqNodeList); empty clears
  // criusd's pin; none leaves it.
  std::optional<std::vector<std::string>> nodes;
  std::string reason;
  double grace_s = 0;  // checkpoint: the job's checkpoint grace, after which the requeue is due
  // update_pending, finish_move: the time limit of the new Cell, in minutes, for a job whose
  // limit crius set (0: the job's limit stays)
  std::int64_t time_limit_min = 0;
  // Estimated throughput in the old and the new Cell (0 where infeasible) and
  // their difference.  A pending job does not run at `from` yet: it may move to a
  // slower Cell that is free now.
  double from_samples_per_s = 0, to_samples_per_s = 0, gain_samples_per_s = 0;
};
const char* to_string(Action::Kind k);
nlohmann::json to_json(const Action& a);

// criusd --rollback: what a criusd gone for good leaves on crius jobs, undone (criusd(8),
// OUTAGES): a pending job's pin to nodes cleared; a move in flight dropped from the record, the
// job kept (running) or released (held by the move's requeue) in the Cell of its record, or
// requeued there (ended on the checkpoint signal). The actions in order, for apply().
std::vector<Action> rollback_actions(const Snapshot& snap);

struct JobStatus {
  std::uint32_t job = 0;
  std::string state, model;
  int global_batch = 0;
  estimator::Cell cell;
  double est_iter_time_s = 0;  // estimate for the current Cell (0 = unknown)
  double done_iterations = -1; // reported by the job (crius-progress), -1 = not reported
  double remaining_s = 0;      // estimated time to the last iteration in the current Cell (0 = unknown)
  std::string move;            // in-flight move, "" if none
  std::string problem;         // a record that does not parse, a model that is unknown
  std::string considered;      // "policy" when offered to the policy, else why not
  std::string not_considered;  // why not, as a fixed kind for metrics ("held", "not_movable", ...)
};

struct Round {
  std::vector<Action> actions;
  std::vector<JobStatus> jobs;
  std::vector<std::string> notes;  // decisions not applied (no feasible plan) and why
  FreeGpus free;                   // what the round leaves free, for job_submit (none in a follow-up)
  int moves_ending = 0;            // jobs mid-move that Slurm is still ending (COMPLETING): steps to come
  double decide_ms = 0;
};

class Controller {
 public:
  Controller(const estimator::Cluster& cluster, ControllerOptions options);
  ~Controller();
  // Decide one round on a snapshot. Pure: applies nothing. With moves_only, only the
  // steps of moves in flight (a follow-up round between two of the policy's rounds; no
  // free-GPU report).
  Result<Round> decide(const Snapshot& snap, bool moves_only = false);
  const ControllerOptions& options() const { return m_options; }

 private:
  struct Impl;
  const estimator::Cluster& m_cluster;
  ControllerOptions m_options;
  std::unique_ptr<Impl> m_impl;
};

nlohmann::json to_json(const Round& r);

}  // namespace crius::slurm
