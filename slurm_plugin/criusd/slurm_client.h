// criusd's only contact with Slurm: read nodes and jobs, and change one job.
// Everything goes through libslurm's C API (slurm_load_*, slurm_update_job,
// slurm_kill_job, slurm_requeue); this file is the only one that includes slurm.h.
#pragma once

#include <cstdint>
#include <string>

#include "estimator/result.h"
#include "slurm_plugin/criusd/snapshot.h"

namespace crius::slurm {

// A pending job's new Cell, in the form the job_submit plugin submits it:
// untyped GPUs per node plus a node feature naming the GPU type.
struct CellUpdate {
  std::string partition;
  std::string feature;  // GPU type
  int nodes = 0;
  int gpus_per_node = 0;
  std::string admin_comment;  // the updated crius record
  bool clear_requeue_delay = false;  // a job criusd requeued: eligible now, not after Slurm's delay
};

class SlurmClient {
 public:
  // conf: path of slurm.conf, "" = libslurm's default (SLURM_CONF or the built-in path).
  explicit SlurmClient(const std::string& conf = "");
  ~SlurmClient();
  SlurmClient(const SlurmClient&) = delete;
  SlurmClient& operator=(const SlurmClient&) = delete;

  Result<Snapshot> snapshot();
  Result<void> update_pending(std::uint32_t job, const CellUpdate& u);
  Result<void> set_admin_comment(std::uint32_t job, const std::string& record);
  Result<void> signal(std::uint32_t job, int signo);
  Result<void> requeue(std::uint32_t job);
};

}  // namespace crius::slurm
