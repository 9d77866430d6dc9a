// criusd's only contact with Slurm: read nodes and jobs, and change one job.
// Everything goes through libslurm's C API (slurm_load_*, slurm_update_job,
// slurm_kill_job, slurm_requeue); this file is the only one that includes slurm.h.
#pragma once

#include <cstdint>
#include <string>

#include "estimator/plan.h"
#include "estimator/result.h"
#include "slurm_plugin/criusd/snapshot.h"

namespace crius::slurm {

class SlurmClient {
 public:
  // conf: path of slurm.conf, "" = libslurm's default (SLURM_CONF or the built-in path).
  explicit SlurmClient(const std::string& conf = "");
  ~SlurmClient();
  SlurmClient(const SlurmClient&) = delete;
  SlurmClient& operator=(const SlurmClient&) = delete;

  Result<Snapshot> snapshot();
  // A pending job's new Cell (apply_cell, as job_submit writes it) and record;
  // clear_requeue_delay: a job criusd requeued becomes eligible now, not after Slurm's delay.
  Result<void> update_pending(std::uint32_t job, const estimator::Cell& cell, const std::string& record,
                              bool clear_requeue_delay);
  Result<void> set_admin_comment(std::uint32_t job, const std::string& record);
  Result<void> signal(std::uint32_t job, int signo);
  Result<void> requeue(std::uint32_t job);
};

}  // namespace crius::slurm
