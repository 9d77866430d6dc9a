// The job_submit plugin's C++ core: the [job_submit] configuration, and the
// decision for one crius job (which Cell, which plan, what to write on the job).
// No Slurm types here; job_submit_crius.cpp applies a Decision to a job_desc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "estimator/estimator.h"
#include "estimator/result.h"
#include "slurm_plugin/request.h"

namespace crius::slurm {

enum class Objective { throughput, efficiency };
enum class OnError { accept, reject };

// [job_submit] in crius.toml (see job_submit_crius(8)).
struct SubmitConfig {
  Objective objective = Objective::throughput;
  OnError on_error = OnError::accept;
  std::vector<std::string> partitions;  // empty = every partition of crius.toml
  int record_top = 3;                   // Cells kept in the admin_comment record
};

// Parses the [job_submit] table (absent = defaults); unknown keys are errors.
Result<SubmitConfig> parse_submit_config(const estimator::Cluster& cluster);

// Where crius.toml is: $CRIUS_CONF, else crius.toml beside slurm.conf
// ($SLURM_CONF's directory, else `slurm_sysconfdir`).
std::string find_crius_conf(const std::string& slurm_sysconfdir);

struct Loaded {
  estimator::Cluster cluster;
  SubmitConfig config;
};
// load_cluster + parse_submit_config; every partition's GPU type must be in the catalogue.
Result<Loaded> load_config(const std::string& path);

struct Decision {
  estimator::Estimate chosen;
  std::vector<estimator::Estimate> ranked;  // feasible first, best first (at most 10 kept)
  std::vector<std::string> env;             // "CRIUS_X=value" for the job
  std::string record;                       // JSON for admin_comment
  std::string summary;                      // one line for the slurmctld log
};

// Resolve the model, enumerate and estimate the Cells of the partitions the job
// may use (`user_partitions`: the job's comma-separated -p list, "" = the
// configured ones), pick one by the objective.  Errors are user-facing and
// have no "crius:" prefix.
Result<Decision> decide(const JobRequest& req, const Loaded& conf, std::string_view user_partitions);

// The resolved model: a catalogue entry, or the forwarded file content parsed
// (never a path opened).  Unknown names list close matches.
Result<estimator::Model> resolve_model(const JobRequest& req, const estimator::ModelCatalog& models);

// A human table of ranked Cells (for --crius-explain and the tests).
std::string explain_text(const JobRequest& req, const Decision& d);

}  // namespace crius::slurm
