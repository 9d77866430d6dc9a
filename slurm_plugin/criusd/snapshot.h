// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// What criusd reads from Slurm each round, as plain values: nodes and jobs.
// The live source is SlurmClient (libslurm); a snapshot can also be saved as
// JSON and replayed (`criusd --state FILE`), which the benchmark uses.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
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
  std::vector<std::string> features;  // its node features (the GPU type may be one)
};

// GPUs, nodes, CPUs and memory (MB): a limit (-1: none) or a count in use.
struct GpusNodes {
  GpusNodes() = default;
  GpusNodes(std::int64_t g, std::int64_t n, std::map<std::string, std::int64_t> t = {}, std::int64_t c = -1,
            std::int64_t m = -1)
      : gpus(g), nodes(n), typed(std::move(t)), cpus(c), mem_mb(m) {}
  std::int64_t gpus = -1, nodes = -1;
  // GPUs of each type (gres/gpu:TYPE, by the type): a limit, or what is in use; absent: none.
  std::map<std::string, std::int64_t> typed;
  std::int64_t cpus = -1;
  std::int64_t mem_mb = -1;
  bool operator==(const GpusNodes&) const = default;
};

// Who and what a Slurm partition lets in (slurm_load_partitions). An empty allow list lets
// everyone in ("ALL").
struct SlurmPartition {
  std::string name;
  std::vector<std::string> allow_accounts, deny_accounts, allow_qos, deny_qos, allow_groups;
  int max_nodes = 0;            // per job; 0: none
  std::int64_t max_time_s = 0;  // 0: none
  bool up = true;               // takes jobs (State=UP)
  // AllowGroups resolved, for job_submit (which may not ask a name service): the groups' ids
  // and their listed members' uids.
  std::vector<std::uint32_t> allow_gids, allow_uids;
  std::string qos;  // its partition QOS (QOS=), "": none
};

// A QOS's and an association's TRES limits and what their jobs use now (slurmctld's
// association manager, as `scontrol show assoc_mgr` shows them), for GPUs, nodes and CPUs, and
// the longest time limit a job may have (MaxWall, -1: none). max_per_node: MaxTRESPerNode.
struct SlurmQos {
  std::uint32_t id = 0;
  std::string name;
  GpusNodes max_per_job, max_per_user, grp, used;
  std::map<std::string, GpusNodes> used_by_user;  // user name -> in use
  std::int64_t max_wall_s = -1;
  GpusNodes max_per_node{};
};
struct SlurmAssoc {
  std::uint32_t id = 0, parent_id = 0;  // parent_id 0: the root
  std::string user, account, partition;
  std::uint32_t uid = 0, default_qos_id = 0;  // of a user's association; 0: none
  GpusNodes max_per_job, grp, used;
  std::int64_t max_wall_s = -1;
  GpusNodes max_per_node{};
};

struct SlurmJob {
  std::uint32_t id = 0;
  // A task of a job array: Slurm's id of the array and the task's index (a plain id that is
  // the array's addresses every task of it). A record of several pending tasks Slurm has not
  // split yet has array_tasks set ("2-10").
  std::uint32_t array_job_id = 0;
  std::optional<std::uint32_t> array_task_id;
  std::string array_tasks;
  std::uint32_t het_job_id = 0;  // a component of a heterogeneous job (0: none)
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
  // Since when the job could run (Slurm's eligible time: after its --begin, its hold, its
  // dependency); 0 = not eligible yet. Waiting counts from here, not from the submission.
  std::int64_t eligible_time = 0;
  std::string reservation;  // --reservation
  std::int64_t time_limit_s = 0;  // the job's time limit (0: none)
  int restarts = 0;
  std::uint16_t cpus_per_task = 1;
  // Its memory (--mem, or --mem-per-cpu with mem_per_cpu), MB; 0: none asked.
  std::int64_t mem_mb = 0;
  bool mem_per_cpu = false;
  // What decides whether Slurm could start the job now, and in which order.
  std::uint32_t priority = 1;   // Slurm's priority; 0 = held
  // Held by a requeue-hold (criusd's move) and by nothing since: an admin hold or a release
  // after it clears this.
  bool requeued_held = false;
  std::string reason = "None";  // the pending reason as squeue shows it: None, Resources, Priority, Dependency, ...
  std::int64_t begin_time = 0;  // --begin
  // What decides whether a running job can come back after a requeue.
  bool batch = true;            // srun and salloc jobs cannot be requeued
  bool requeue = true;          // --requeue / JobRequeue allow it
  std::string user, account, qos;
  std::uint32_t assoc_id = 0;            // its association (0: none, no accounting)
  std::vector<std::string> user_groups;  // the user's groups, for partitions' AllowGroups
};

// The id Slurm's RPCs take for exactly this job: "A_T" for a task of an array, else the id.
std::string slurm_id(const SlurmJob& j);

struct SlurmReservation {
  std::string name;
  std::int64_t start_time = 0, end_time = 0;
  bool all_nodes = false;           // Nodes=ALL
  std::vector<std::string> nodes;   // expanded
};

struct Snapshot {
  std::int64_t now = 0;  // Unix seconds when it was read
  std::vector<SlurmNode> nodes;
  std::vector<SlurmJob> jobs;
  std::vector<SlurmReservation> reservations;
  // Slurm's rules on who may run what, where: the partitions' access and size limits, and
  // (enforced only with AccountingStorageEnforce=limits) the QOS and association limits.
  std::vector<SlurmPartition> partitions;
  bool enforce_limits = false;
  std::vector<SlurmQos> qos;
  std::vector<SlurmAssoc> assocs;
  std::map<std::uint32_t, std::string> default_accounts;  // uid -> the user's default account
};

nlohmann::json to_json(const Snapshot& s);
Result<Snapshot> snapshot_from_json(const nlohmann::json& j, const std::string& source);

// GPUs per node of a job's tres_per_node ("gres:gpu:4", "gres:gpu:a100:4"); 0 if none.
int gpus_per_node_of(const std::string& tres_per_node);

}  // namespace crius::slurm
