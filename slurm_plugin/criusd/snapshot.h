// What criusd reads from Slurm each round, as plain values: nodes and jobs.
// The live source is SlurmClient (libslurm); a snapshot can also be saved as
// JSON and replayed (`criusd --state FILE`), which the benchmark uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimator/result.h"

namespace crius::slurm {

struct SlurmNode {
  std::string name;
  std::vector<std::string> partitions;
  std::string gpu;      // GPU type: from Gres=gpu:<type>:N, else the first feature
  int gpus = 0;         // configured GPUs
  int gpus_used = 0;    // allocated GPUs (all jobs)
  bool usable = true;   // not down, drained or failing
};

struct SlurmJob {
  std::uint32_t id = 0;
  std::string name;
  std::string state;          // PENDING, RUNNING, ... (Slurm's names)
  std::string partition;
  std::string features;
  std::string tres_per_node;  // e.g. "gres:gpu:4"
  std::string admin_comment;  // the crius record, for crius jobs
  std::string comment;        // the user's Comment: crius-launch writes the job's progress there
  std::vector<std::string> nodes;  // allocated nodes (running jobs)
  std::vector<std::string> req_nodes;  // ReqNodeList (-w, or criusd's pin), expanded
  int num_nodes = 0;
  std::int64_t submit_time = 0, start_time = 0, end_time = 0;
  int restarts = 0;
  std::uint16_t cpus_per_task = 1;
  // What decides whether Slurm could start the job now, and in which order.
  std::uint32_t priority = 1;   // Slurm's priority; 0 = held
  bool requeued_held = false;   // Slurm's "job requeued in held state"
  std::string reason = "None";  // the pending reason as squeue shows it: None, Resources, Priority, Dependency, ...
  std::int64_t begin_time = 0;  // --begin
  // What decides whether a running job can come back after a requeue.
  bool batch = true;            // srun and salloc jobs cannot be requeued
  bool requeue = true;          // --requeue / JobRequeue allow it
  std::string user, account, qos;
};

struct Snapshot {
  std::int64_t now = 0;  // Unix seconds when it was read
  std::vector<SlurmNode> nodes;
  std::vector<SlurmJob> jobs;
};

nlohmann::json to_json(const Snapshot& s);
Result<Snapshot> snapshot_from_json(const nlohmann::json& j, const std::string& source);

// GPUs per node of a job's tres_per_node ("gres:gpu:4", "gres:gpu:a100:4"); 0 if none.
int gpus_per_node_of(const std::string& tres_per_node);

}  // namespace crius::slurm
