// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// A job's own progress in its Comment (job/progress.h): crius-launch writes it as the job's
// user, through slurmctld. Linked by crius-launch only.
#pragma once

#include <cstdint>

#include "estimator/result.h"
#include "job/progress.h"

namespace crius::slurm {

// Writes "crius-progress=DONE/TOTAL" into the job's Comment, unless the Comment holds
// something else (the user's own text is never overwritten: an error says so).
Result<void> report_progress(std::uint32_t job_id, const job::Progress& p);

}  // namespace crius::slurm
