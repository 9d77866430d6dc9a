// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The job_submit plugin's C++ core: the [job_submit] configuration, and the
// decision for one crius job (which Cell, which plan, what to write on the job).
// No Slurm types here; job_submit_crius.cpp applies a Decision to a job_desc.
#pragma once

#include <cstdint>
#include <map>
#include <functional>
#include <list>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "estimator/estimator.h"
#include "estimator/result.h"
#include "job/env.h"
#include "job/record.h"
#include "scheduler/objective.h"
#include "slurm_plugin/free_gpus.h"
#include "slurm_plugin/request.h"

namespace crius::slurm {

using scheduler::Objective;  // [job_submit] objective: the rule of scheduler/objective.h
enum class OnError { accept, reject };
// A job with --crius-deadline that no Cell can meet: flagged (the record's deadline_met is
// false, the user is told) or rejected.
enum class DeadlineMiss { flag, reject };

// [job_submit] in crius.toml (see job_submit_crius(8)).
struct SubmitConfig {
  Objective objective = Objective::adaptive;
  OnError on_error = OnError::accept;
  std::vector<std::string> partitions;  // empty = every partition of crius.toml
  int record_top = 3;                   // Cells kept in the admin_comment record
  // Estimator work per submission, in layer visits (estimator::WorkBudget; about 5 ns each).
  std::int64_t work_budget = 4'000'000;
  // Estimator work of all submissions together, per second (DecisionCache): beyond it a
  // submission is ranked on a sixteenth of work_budget, and once ten seconds' worth is owed
  // only from the cache (else refused as busy).
  std::int64_t work_per_second = 20'000'000;
  // The site's largest Cell, in GPUs (0 = no bound): a job given the fastest Cell of an
  // empty cluster would otherwise ask for a whole partition.
  int max_gpus = 0;
  // The largest Cell a new job gets while criusd's report is stale (criusd stopped: it cannot
  // shrink or move what job_submit gives), in GPUs (0 = no bound beyond max_gpus).
  int outage_max_gpus = 8;
  // criusd's report of the GPUs its policy left free ("" = none): a new job gets the best
  // Cell that can start now.
  std::string free_gpus_file = kDefaultFreeGpusFile;
  DeadlineMiss deadline_miss = DeadlineMiss::flag;
  // Prometheus text of the counters below, rewritten at most every kMetricsEveryS ("" = none).
  std::string metrics_file;
  // A job with --crius-iters and no time limit of its own gets job::time_limit_minutes() of its
  // Cell with this factor (0 = crius sets none).
  double time_limit_factor = 0;
};

// What job_submit did since slurmctld loaded it ([job_submit] metrics_file; job_submit_crius(8),
// METRICS). slurmctld calls job_submit and job_modify one at a time.
inline constexpr int kMetricsEveryS = 10;
struct SubmitCounters {
  std::map<std::string, std::uint64_t> decisions;   // placed, rejected, degraded_accepted, degraded_rejected
  std::map<std::string, std::uint64_t> rejections;  // by reason
  std::uint64_t partial = 0, busy = 0, deadline_flagged = 0, updates_refused = 0;
  double decide_seconds_sum = 0, decide_seconds_max = 0;
};
std::string metrics_text(const SubmitCounters& c);
// A decide() error's code (Reject) as a rejection reason ("no_cell", ...).
const char* reject_reason(int code);

// The keys of [job_submit] (job_submit_crius(8)).
const std::vector<std::string>& submit_config_keys();
// Parses the [job_submit] table (absent = defaults); unknown keys are errors.
Result<SubmitConfig> parse_submit_config(const estimator::Cluster& cluster);

struct Loaded {
  estimator::Cluster cluster;
  SubmitConfig config;
};
// load_cluster + parse_submit_config; every partition's GPU type must be in the catalogue.
Result<Loaded> load_config(const std::string& path);

// What the GPUs free now did to the choice.
enum class Load {
  unknown,    // no report from criusd: the best Cell of an empty cluster
  fits,       // the best Cell that fits the GPUs free now
  none_fits,  // no Cell fits them: the best Cell, which waits
};

struct Decision {
  estimator::Estimate chosen;
  std::vector<estimator::Estimate> ranked;  // chosen first, then best first (at most 10 kept)
  job::Record record;                       // written into AdminComment (job::to_text)
  job::Env env;                             // job::record_env(record), for the job
  std::string summary;                      // one line for the slurmctld log
  bool partial = false;                     // the work budget ran out: the best Cell estimated
  bool busy = false;                        // ranked on the small budget of a busy slurmctld
  Load load = Load::unknown;
  std::string deadline_miss;                // why no Cell meets --crius-deadline ("" = met, or none)
  std::int64_t until = 0;                   // when the job would end in the chosen Cell (FreeGpus::fits)
};

// Why decide() rejected a job (the error's code); job_submit maps it to a Slurm error.
enum class Reject {
  bad_request = 1,  // an option's value, an unknown model, a missing option
  no_partition,     // none of the job's partitions is a crius partition
  no_cell,          // no Cell fits the pins, the partitions, the maxima or the memory
  deadline,         // no Cell meets --crius-deadline and [job_submit] deadline_miss = "reject"
  busy,             // work_per_second is spent and the ranking is not in the cache
};

// The load-free part of a decision: the feasible Cells of the partitions the job may use
// (`user_partitions`: the job's comma-separated -p list, "" = the configured ones), within
// the site's and the user's maximum, best first by the objective, one per shape.
struct Ranking {
  std::vector<estimator::Estimate> cells;
  bool partial = false;
  bool busy = false;                    // ranked on the small budget of a busy slurmctld
  std::string model_spec;               // a model given as a file, normalised
  std::vector<std::string> partitions;  // the job's crius partitions (-p), for the record
};
// `work_budget`: layer visits (0 = the configured one); `work_used`, if given, gets what was
// spent, also when the request is refused.
Result<Ranking> rank(const JobRequest& req, const Loaded& conf, std::string_view user_partitions,
                     std::int64_t work_budget = 0, std::int64_t* work_used = nullptr);
// The Cell for the job now: the best one that fits `free` (criusd's report; null = none),
// else the best; with a deadline, the smallest that meets it (one that fits first).
// `who`: the submitter (its account resolved), whose time limit (its own, crius's, else the
// longest Slurm lets it have) says which reservations ahead a Cell's nodes must not have.
Decision choose(const JobRequest& req, const Loaded& conf, const Ranking& ranking, const FreeGpus* free,
                const Submitter* who = nullptr);

// rank + choose. Errors are user-facing, have no "crius:" prefix, and carry a Reject as
// their code.
Result<Decision> decide(const JobRequest& req, const Loaded& conf, std::string_view user_partitions,
                        const FreeGpus* free = nullptr);

// decide() with a bounded memory of recent rankings: an identical request (same options,
// same model, same -p list) is ranked from it, then chosen on the load given. And a bound on
// the work of all submissions together ([job_submit] work_per_second): a bucket of ten
// seconds' worth, refilled at that rate, pays each ranking's work; empty, a ranking gets a
// sixteenth of the budget (Decision::busy, the user is told); ten seconds in debt, only
// rankings in the cache are answered, the others refused (Reject::busy). Valid for one
// configuration: a new one needs a new cache. Not thread-safe (slurmctld calls job_submit
// under its job lock).
class DecisionCache {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  explicit DecisionCache(std::size_t capacity = 64, Clock clock = {});
  // `who`: the submitter; with criusd's report, Cells of partitions it does not let them in are
  // left out (all left out: refused, saying why).
  // `rules`: a report whose access and limits hold although its free GPUs do not (a stale one:
  // criusd stopped); null: `free`'s.
  Result<Decision> decide(const JobRequest& req, const Loaded& conf, std::string_view user_partitions,
                          const FreeGpus* free = nullptr, const Submitter* who = nullptr,
                          const FreeGpus* rules = nullptr);
  std::size_t hits() const { return m_hits; }
  double work_available() const { return m_tokens; }

 private:
  std::size_t m_capacity, m_hits = 0;
  Clock m_clock;
  double m_tokens = 0, m_last = 0;
  bool m_started = false;
  std::list<std::pair<std::string, Result<Ranking>>> m_entries;  // most recent first
};

// The resolved model: a catalogue entry, or the forwarded file content parsed
// (never a path opened).  Unknown names list close matches.
Result<estimator::Model> resolve_model(const JobRequest& req, const estimator::ModelCatalog& models);

// A human table of ranked Cells (for --crius-explain and the tests).
std::string explain_text(const JobRequest& req, const Decision& d);

}  // namespace crius::slurm
