// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Scheduler core data: the cluster as the scheduler sees it (nodes of one GPU
// type each, grouped in partitions), jobs, allocations and decisions.
// Everything a round needs is in these values: a driver (crius-sim, criusd)
// builds them, the Scheduler reads them, nothing is remembered across rounds.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/plan.h"

namespace crius::scheduler {

// The runtime profile and the framework a job's speed is asked for; each none means the speed
// source's own (crius-sim's --runtime and the cluster file's framework); criusd asks for each job's.
struct RuntimeChoice {
  std::optional<estimator::Runtime> runtime;
  std::optional<estimator::Framework> framework;
  RuntimeChoice() = default;
  RuntimeChoice(std::optional<estimator::Runtime> r, std::optional<estimator::Framework> f = std::nullopt)
      : runtime(r), framework(f) {}
  // One number per choice (memo keys).
  int key() const {
    const int r = runtime ? static_cast<int>(*runtime) + 1 : 0;
    const int f = framework ? static_cast<int>(framework->kind) * 10000 + framework->version + 1 : 0;
    return r * 100000 + f;
  }
};

// The scheduler decides Cells as shapes: GPU type, nodes x GPUs per node (speeds
// are looked up by these); the stage count is the best plan's, and the partition
// is the Allocation's.
using estimator::Cell;
// A Cell as a shape: GPU type, nodes x GPUs per node (no partition, stages 0).
inline Cell shape(std::string gpu, int nodes, int gpus_per_node) {
  Cell c;
  c.gpu = std::move(gpu);
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  return c;
}

struct Partition {
  std::string name;
  std::string gpu;      // catalogue id
  int nodes = 0;
  int gpus_per_node = 0;
};

struct Node {
  std::string name;
  int partition = 0;    // index into ClusterState::partitions
  std::string gpu;
  int capacity = 0;     // GPUs
};

struct ClusterState {
  std::vector<Partition> partitions;
  std::vector<Node> nodes;

  // Nodes named <partition><index>, in partition order.
  static ClusterState from_partitions(std::vector<Partition> partitions);
  std::vector<std::string> gpu_types() const;     // sorted, unique
  int total_gpus(const std::string& gpu) const;
  int total_gpus() const;
  int max_gpus_per_node(const std::string& gpu) const;
};

// Where a job runs: a Cell placed on concrete nodes, gpus_per_node on each;
// shape.stages is the Cell-optimal plan's (0 = unknown).
struct Allocation {
  int partition = -1;
  Cell shape;
  std::vector<int> node_ids;    // indices into ClusterState::nodes, size == shape.nodes
  bool empty() const { return node_ids.empty(); }
  // The same GPUs: another stage count on them is a re-plan, not a move.
  bool operator==(const Allocation& o) const {
    return partition == o.partition && shape.gpu == o.shape.gpu && shape.nodes == o.shape.nodes &&
           shape.gpus_per_node == o.shape.gpus_per_node && node_ids == o.node_ids;
  }
};

enum class JobState { pending, running, finished, unrunnable };
const char* to_string(JobState s);

// Who decides a job's GPUs: `movable`, the policy, before it starts and while it runs (a crius
// job with --crius-movable); `fixed`, the policy until it starts, then it keeps them (a crius job
// without it: criusd leaves a running one alone); `plain`, the resource manager alone, by what
// the job requested (a Slurm job without --crius-*). A running fixed job and every plain job are
// outside the policy's rounds: their GPUs are taken, as criusd sees them.
enum class JobKind { movable, fixed, plain };
const char* to_string(JobKind k);
std::optional<JobKind> parse_job_kind(std::string_view s);

struct Job {
  int id = 0;                   // dense index, stable for a run
  std::string name;             // the trace's job_id
  std::string model;
  int global_batch = 0;
  std::string req_gpu;
  int req_gpus = 0;
  double iterations = 0;        // total to run
  double submit_time = 0;
  double priority = 0;          // the resource manager's priority: higher goes first (criusd: Slurm's)
  double deadline = std::numeric_limits<double>::infinity();
  std::optional<estimator::Runtime> runtime;  // the job's runtime profile; none: the source's own
  std::optional<estimator::Framework> framework;  // what runs it (its plans' rule); none: the source's own
  RuntimeChoice stack() const { return {runtime, framework}; }
  int max_gpus = 0;             // the largest allocation the job accepts (0 = none; --crius-max-gpus)
  // Where the resource manager lets the job run (criusd: Slurm's partition access and limits):
  // per partition of the ClusterState, -1 not at all, 0 any size, n at most n nodes (empty:
  // every partition, any size); and the most nodes of any allocation (0: any).
  std::vector<int> partition_max_nodes;
  int max_nodes = 0;
  int max_gpus_per_node = 0;  // the most GPUs on one node (criusd: MaxTRESPerNode); 0: any
  // The most GPUs of a type it may hold (criusd: the per-type limits of its QOS and association,
  // gres/gpu:TYPE); a type absent: no such bound.
  std::map<std::string, int> max_gpus_of_type;
  JobKind kind = JobKind::movable;
  // Dynamic state, owned by the driver.
  JobState state = JobState::pending;
  double done_iterations = 0;
  Allocation alloc;             // empty while pending
  // crius-sim's live restart model: the Cell a pending job waits in (Policy::arrive, or its
  // last start) and its partition, started by the resource manager as soon as it fits.
  Cell held;
  int held_partition = -1;
  bool opportunistic = false;   // started out of FIFO order (crius backfill)
  double first_start = -1;
  double last_start = -1;       // its latest start, resume or move
  std::vector<double> changed_at;  // when it was preempted, moved or resized
  double finish_time = -1;
  double restart_until = 0;     // no progress before this time (restart cost)
  int reconfigurations = 0;
  double remaining() const { return iterations - done_iterations; }
  // The policy decides for it in this state (JobKind).
  bool decided_by_policy() const {
    return kind == JobKind::movable || (kind == JobKind::fixed && state != JobState::running);
  }
};

struct Decision {
  enum class Kind { start, move, resize, preempt };
  Kind kind = Kind::start;
  int job = 0;
  Allocation target;            // empty for preempt
  bool opportunistic = false;
  std::string reason;
};
const char* to_string(Decision::Kind k);

}  // namespace crius::scheduler
