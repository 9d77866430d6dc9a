// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// A site's own history as a crius-sim trace: the jobs of an `sacct -P` export, each mapped
// to a model and a global batch by rules on its name, account, user or comment, with the
// iterations it ran estimated from its run time on the GPUs it had (crius-import-sacct(1)).
#pragma once

#include <string>
#include <vector>

#include "estimator/estimator.h"
#include "estimator/result.h"

namespace crius::scheduler {

// One [[rule]] of the map file: every given pattern must match (fnmatch globs); the first
// rule that matches a job gives its model and global batch.
struct ImportRule {
  std::string job_name, account, user, partition, comment;  // "" = any
  std::string model;
  int global_batch = 0;
  int line = 0;  // in the map file, for messages
};
Result<std::vector<ImportRule>> load_import_rules(const std::string& path, const estimator::ModelCatalog& models);

// The sacct fields the importer reads (the header line names them; other fields are ignored).
const std::vector<std::string>& sacct_import_fields();

struct ImportedJob {
  std::string id, model, gpu;
  double submit = 0, iterations = 0, deadline = 0;  // trace seconds, from the first submission
  int global_batch = 0, gpus = 0;
};
struct ImportReport {
  std::vector<ImportedJob> jobs;
  int no_gpus = 0, never_ran = 0, unmapped = 0, infeasible = 0;  // jobs left out, by why
  std::vector<std::string> notes;  // one line per job left out for a reason other than the counts
};
// `text` is sacct -P output with its header; times as SLURM_TIME_FORMAT=%s or ISO 8601 (local).
Result<ImportReport> import_sacct(const std::string& text, const std::string& source,
                                  const std::vector<ImportRule>& rules, const estimator::Cluster& cluster,
                                  estimator::Runtime runtime);
// The artifact's trace CSV (crius-sim --trace), with a comment line naming the source.
std::string to_trace_csv(const ImportReport& r, const std::string& source);

}  // namespace crius::scheduler
