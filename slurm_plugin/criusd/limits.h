// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Slurm's rules on who may run what, where, as criusd applies them to every Cell it gives a job
// (criusd(8), SLURM'S RULES): a partition's access lists, state, node and time limits, and,
// where Slurm enforces them (AccountingStorageEnforce=limits), the GPU, node and CPU limits of
// the job's QOS and association: per job, per node, per user of the QOS, and for the group
// (GrpTRES of the QOS and of the association and each of its parents). Read off a Snapshot; nothing here talks
// to Slurm.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "slurm_plugin/criusd/snapshot.h"
#include "slurm_plugin/free_gpus.h"

namespace crius::slurm {

// Why Slurm would not take `job` into partition `p` whatever its size: the partition is not up,
// or its AllowAccounts, DenyAccounts, AllowQos, DenyQos or AllowGroups leave the job out, or the
// job's time limit is over `longest_s` (partition_time_limit_s below; 0: not checked). "" if it
// would.
std::string partition_refusal(const SlurmPartition& p, const SlurmJob& job, std::int64_t longest_s);

// The longest time limit a job may have in `p` whatever its QOS or association (seconds, 0:
// none): its MaxTime and, where Slurm enforces limits, the MaxWall of its partition QOS.
std::int64_t partition_time_limit_s(const Snapshot& s, const SlurmPartition& p);

// The longest time limit Slurm lets `job` have in `p` (seconds, 0: none): partition_time_limit_s
// and, where Slurm enforces limits, the MaxWall of the job's QOS and of its association and each
// parent, the smallest. Slurm lets a QOS's limit override an association's and a child's its
// parent's: the smallest is never longer than Slurm allows, and a limit crius sets is this.
std::int64_t longest_time_limit_s(const Snapshot& s, const SlurmJob& job, const SlurmPartition& p);

// The most GPUs, nodes and CPUs one job may hold: the per-job limits (MaxTRESPerJob) of its QOS
// and of its association and its parents, the smallest of each (-1: none, or not enforced).
// Slurm checks none of the CPU and node limits for a job an operator (criusd) changed them of
// (job_mgr.c sets them "admin set"), nor its time limits: criusd keeps them for it.
GpusNodes per_job_limit(const Snapshot& s, const SlurmJob& job);
// The most GPUs and CPUs on each node of a job (MaxTRESPerNode), likewise.
GpusNodes per_node_limit(const Snapshot& s, const SlurmJob& job);
// What `job` holds with `gpus` GPUs of `type` on `nodes` nodes: a task per GPU (apply_cell.h),
// so as many times its cpus_per_task CPUs, and its memory per node or per CPU.
GpusNodes held_in(const SlurmJob& job, const std::string& type, std::int64_t gpus, std::int64_t nodes);
// The most GPUs and nodes `job` may hold within `limit`'s CPUs and memory (-1: no bound),
// and the most GPUs on one node within `per_node`'s (MaxTRESPerNode).
struct CpuMemBound {
  std::int64_t gpus = -1, nodes = -1, gpus_per_node = -1;
};
CpuMemBound cpu_mem_bound(const SlurmJob& job, const GpusNodes& limit, const GpusNodes& per_node);

// What job_submit needs to keep a new job within the per-job limits (free_gpus.h): each QOS's
// per-job GPU and node limits, and each user's association's (the smallest along its parents)
// with its default QOS, those that bound something. Nothing where Slurm does not enforce them.
void publish_job_limits(const Snapshot& s, FreeGpus& report);

// The limits shared with other jobs, counted over the changes of one round: GrpTRES of the
// job's association and each parent, the QOS's GrpTRES and MaxTRESPerUser, against what Slurm
// counts in use now.
class GroupLimits {
 public:
  explicit GroupLimits(const Snapshot& s);
  // Whether `job`, holding `from` now ({0, 0} when pending), may hold `to` instead; when it
  // may, the change is counted. "" if it may, else the limit that stops it.
  std::string change(const SlurmJob& job, GpusNodes from, GpusNodes to);
  // The most `job`, holding `holding` now, could hold alone under these limits (-1: no limit).
  GpusNodes most(const SlurmJob& job, GpusNodes holding);

 private:
  struct Counter {
    std::string name;    // as a message names it: "GrpTRES of account lab"
    GpusNodes limit;     // -1: none
    GpusNodes used;
  };
  std::vector<Counter*> counters_of(const SlurmJob& job);
  bool m_enforced = false;
  std::map<std::uint32_t, const SlurmAssoc*> m_assoc;  // by id
  std::map<std::string, Counter> m_counters;           // by key
  std::map<std::string, GpusNodes> m_per_user;         // QOS -> its MaxTRESPerUser
};

}  // namespace crius::slurm
