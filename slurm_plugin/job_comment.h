// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// A job's own progress in its Comment (job/progress.h): crius-launch writes it as the job's
// user, through slurmctld. Linked by crius-launch only.
#pragma once

#include <cstdint>
#include <string>

#include "estimator/result.h"
#include "job/progress.h"
#include "slurm_plugin/load_record.h"

namespace crius::slurm {

// Writes a job's progress into its Comment as "crius-progress=DONE/TOTAL@TIME".
class ProgressReporter {
 public:
  // `seen`: what an earlier read of the job saw (load_record.h), which spares the first
  // report its read.
  explicit ProgressReporter(std::uint32_t job_id, const JobSeen* seen = nullptr);
  // The first report reads the job (one RPC) unless it was seen: a Comment that holds
  // something else is the user's and is never overwritten (an error says so, this time and
  // every later one). Each report is then one RPC, an update.
  Result<void> report(const job::Progress& p);

 private:
  std::uint32_t m_id;
  std::string m_id_str;  // Slurm's name of the job ("A_T" for an array task), once read
  bool m_checked = false, m_users = false;
};

}  // namespace crius::slurm
