// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// criusd's only contact with Slurm: read nodes, reservations and jobs, and change one job.
// A job is named by slurm_id() (snapshot.h): a task of an array as "A_T", so that a request
// reaches that task alone.
// Everything goes through libslurm's C API (slurm_load_*, slurm_update_job,
// slurm_kill_job, slurm_requeue); this file is the only one that includes slurm.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
  // The controllers (SlurmctldHost names, in order), StateSaveLocation and SlurmctldTimeout,
  // from the controller in control.
  struct Controllers {
    std::vector<std::string> hosts;
    std::string state_save_location;
    int timeout_s = 120;
  };
  Result<Controllers> controllers();
  // Whether the slurmctld of SlurmctldHost line `index` answers (a standby backup does too).
  bool ping(int index);
  // A pending job's Cell (apply_cell, as job_submit writes it), and with `nodes` its
  // ReqNodeList (empty: no pin; null: unchanged); with clear_requeue_delay a requeued job
  // becomes eligible now, not after Slurm's delay.
  // other_gres: the job's GRES per node besides GPUs, kept. time_limit_min > 0: its new time
  // limit, in minutes.
  Result<void> update_cell(const std::string& job, const estimator::Cell& cell, std::uint16_t cpus_per_task,
                           const std::string& other_gres, bool clear_requeue_delay,
                           const std::vector<std::string>* nodes = nullptr, std::int64_t time_limit_min = 0);
  // The job's record (AdminComment); with release, the job's hold is released in the same update.
  Result<void> set_record(const std::string& job, const std::string& record, bool release);
  Result<void> signal(const std::string& job, int signo);
  // Requeue a running batch job and hold it (so that it cannot restart before criusd gave it its
  // new Cell). The error's code is Slurm's (ESLURM_BATCH_ONLY, ESLURM_DISABLED, ...).
  Result<void> requeue_held(const std::string& job);

 private:
  // The last answer of each table read, kept: the next read asks only for a newer one, and
  // slurmctld answers "no change" without the table when there is none (as squeue --iterate
  // reads). Spares slurmctld the dumps of a large cluster between changes.
  struct Held;
  std::unique_ptr<Held> m_held;
};

}  // namespace crius::slurm
