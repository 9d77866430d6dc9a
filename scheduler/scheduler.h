// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The driver-independent scheduler: cluster state + jobs + now in, decisions out.
// crius-sim (simulated clock) and criusd (Slurm) both drive it, each round
// passing the full state; it keeps nothing between rounds.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "scheduler/policy.h"

namespace crius::scheduler {

class Scheduler {
 public:
  Scheduler(Policy& policy, ThroughputSource& tput, PolicyOptions options)
      : m_policy(policy), m_tput(tput), m_options(options) {}
  // Decisions for the running jobs and the pending jobs submitted by `now`
  // among `jobs` (others are ignored) that the policy decides (Job::decided_by_policy); the
  // others' GPUs are taken. Pending plain jobs are in the policy's queue where it queues them
  // (Policy::queues_plain_jobs): never decided, their GPUs held (reserved()).
  // Order: preemptions, then moves and resizes, then starts, so a driver that
  // applies them one by one frees GPUs before it hands them out.
  // A target that breaks an invariant is a policy bug: returned as an error.
  Result<std::vector<Decision>> decide(const ClusterState& cluster, const std::vector<Job>& jobs,
                                       double now);
  Result<void> runnable(const ClusterState& cluster, const Job& job);
  // The Cell `job` (one of `jobs`, pending, submitted by `now`) waits in from its submission
  // (Policy::arrive; `waiting` as there); a plain job's is its request (requested_shape).
  std::optional<PlacedShape> arrive(const ClusterState& cluster, const std::vector<Job>& jobs, const Job& job,
                                    double now, int waiting);
  const PolicyOptions& options() const { return m_options; }
  Policy& policy() { return m_policy; }
  // The GPUs the last decide() left to pending plain jobs the resource manager starts on them
  // (ahead of the jobs behind them in the queue), by job id: no one else got them.
  const std::vector<std::pair<int, Allocation>>& reserved() const { return m_reserved; }

 private:
  Policy& m_policy;
  ThroughputSource& m_tput;
  PolicyOptions m_options;
  std::vector<std::pair<int, Allocation>> m_reserved;
};

// Job::opportunistic of each running job of `jobs`, as criusd reads it off Slurm every round
// (and crius-sim's live model alike): it started (Job::last_start) while a job ahead of it in the
// queue (a higher priority; the same and submitted earlier; the same second and earlier in
// `order`, the resource manager's last tie-break, else the job id) was waiting, and that job still
// waits (pending, submitted by `now`): the waiting job may take its GPUs back. The same second
// counts (Slurm's times are whole seconds). O(n log n): a site's queue may hold many plain jobs.
void mark_opportunistic(std::vector<Job>& jobs, double now, const std::vector<std::uint64_t>& order = {});

// Invariants of a set of jobs on a cluster: no GPU given twice, node capacity,
// one GPU type and one partition per job, the allocation matches its Cell shape,
// and the job's Cell is memory-feasible. Checks running jobs.
// `memory_check_for` (optional) limits the memory check to the jobs it accepts.
Result<void> check_invariants(const ClusterState& cluster, const std::vector<Job>& jobs,
                              ThroughputSource& tput,
                              const std::function<bool(const Job&)>& memory_check_for = {});

}  // namespace crius::scheduler
