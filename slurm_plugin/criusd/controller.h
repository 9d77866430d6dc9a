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

namespace crius::slurm {

struct ControllerOptions {
  double interval_s = 300;
  std::string policy = "crius";
  int max_moves_per_round = 2;     // running jobs signalled per round (migration budget)
  int checkpoint_signal = 10;      // SIGUSR1
  double checkpoint_grace_s = 30;  // between the signal and the requeue
  double restart_cost_s = 60;
  double default_iterations = 1000;  // for jobs submitted without --crius-iters
};

// The keys of [criusd] (criusd(8)).
const std::vector<std::string>& controller_option_keys();
// Reads the [criusd] table of crius.toml (unknown keys are errors).
Result<ControllerOptions> load_controller_options(const estimator::Cluster& cluster);

struct Action {
  enum class Kind {
    update_pending,  // a pending job gets another Cell
    checkpoint,      // a running job is signalled to checkpoint before a move
    requeue,         // grace over: the running job is requeued
    finish_move,     // the requeued job now pending: apply the target Cell
  };
  Kind kind = Kind::update_pending;
  std::uint32_t job = 0;
  estimator::Cell from, to;
  std::string record;  // the AdminComment to write with the action (job::to_text)
  std::string reason;
  // Estimated throughput in the old and the new Cell (0 where infeasible) and
  // their difference.  A pending job does not run at `from` yet: it may move to a
  // slower Cell that is free now.
  double from_samples_per_s = 0, to_samples_per_s = 0, gain_samples_per_s = 0;
};
const char* to_string(Action::Kind k);
nlohmann::json to_json(const Action& a);

struct JobStatus {
  std::uint32_t job = 0;
  std::string state, model;
  int global_batch = 0;
  estimator::Cell cell;
  double est_iter_time_s = 0;  // estimate for the current Cell (0 = unknown)
  std::string move;            // in-flight move, "" if none
  std::string problem;         // a record that does not parse, a model that is unknown
};

struct Round {
  std::vector<Action> actions;
  std::vector<JobStatus> jobs;
  std::vector<std::string> notes;  // decisions not applied (budget) and why
  double decide_ms = 0;
};

class Controller {
 public:
  Controller(const estimator::Cluster& cluster, ControllerOptions options);
  ~Controller();
  // Decide one round on a snapshot. Pure: applies nothing.
  Result<Round> decide(const Snapshot& snap);
  const ControllerOptions& options() const { return m_options; }

 private:
  struct Impl;
  const estimator::Cluster& m_cluster;
  ControllerOptions m_options;
  std::unique_ptr<Impl> m_impl;
};

nlohmann::json to_json(const Round& r);

}  // namespace crius::slurm
