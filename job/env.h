// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The CRIUS_* environment: one table of every variable crius writes or reads
// (name, who writes it, what it means), and the functions that write them, so
// that every writer produces the same names from the same record and plan.
// tests/unit/test_contract.cpp checks the table against these writers and the
// man pages.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/plan.h"
#include "job/record.h"

namespace crius::job {

enum class Writer {
  job_submit,    // at submission: the batch environment (sbatch) and, through
                 // spank_job_env, every task of srun/salloc jobs (spank_crius(8) copies them)
  crius_launch,  // every rank crius-launch starts
  resumed,       // every rank of a job criusd moved while it ran (crius-launch, from the record)
  internal,      // between crius's own programs; not for users
  site,          // set by the user or the site, read by crius
};
std::string_view to_string(Writer w);

struct EnvVar {
  std::string_view name;
  Writer writer;
  std::string_view meaning;
};
const std::vector<EnvVar>& env_vars();

using Env = std::vector<std::pair<std::string, std::string>>;

// What depends on the plan alone: CRIUS_PLAN_JSON (the plan codec), CRIUS_STAGES,
// CRIUS_STAGE_LAYERS ("0-11,12-23", inclusive), CRIUS_STAGE_DP, CRIUS_STAGE_TP,
// CRIUS_MICRO_BATCH_SIZE, CRIUS_MICRO_BATCHES, CRIUS_SCHEDULE, CRIUS_RECOMPUTE,
// CRIUS_SEQUENCE_PARALLEL, CRIUS_ZERO.  Both job_submit and crius-launch write these.
Env plan_env(const estimator::Plan& plan);
// The job's environment from its record: the request, the Cell, the estimate and
// plan_env().  job_submit writes it at submission; crius-launch writes it again for
// the ranks of a job whose record criusd changed.
Env record_env(const Record& rec);

// "0-11,12-23": the plan's layer ranges, inclusive, as CRIUS_STAGE_LAYERS holds them.
std::string format_layer_ranges(const estimator::Plan& plan);

}  // namespace crius::job
