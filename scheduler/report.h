// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Summaries of simulation runs: text, the --json object, per-job CSV, plots.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/simulator.h"

namespace crius::scheduler {

struct Summary {
  std::string policy;
  int jobs = 0, finished = 0, unrunnable = 0;
  double jct_mean_s = 0, jct_median_s = 0, jct_p99_s = 0;
  double queue_mean_s = 0;
  double makespan_s = 0;
  double throughput_mean = 0;       // samples/s over the makespan
  int reconfigurations = 0;
  int deadlines = 0, deadlines_met = 0;  // jobs with a deadline; of them, finished by it
  std::map<std::string, double> utilisation;  // per GPU type, 0..1
  std::map<std::string, double> jct_mean_by_kind_s;  // per JobKind of finished jobs, where the trace mixes kinds
  double round_p99_ms = 0, round_max_ms = 0;
  int rounds = 0;
};

Summary summarize(const SimResult& r, const ClusterState& cluster);
// with_timing: add the wall time of the rounds (not reproducible run to run).
std::string format_summary(const Summary& s, bool with_timing = false);
// Side by side, with ratios against the crius column when present.
std::string format_comparison(const std::vector<Summary>& all);
// {"policies": {"<name>": {finished, jct_mean_s, jct_median_s, jct_p99_s,
//   queue_mean_s, makespan_s, throughput_mean, reconfigurations, deadlines, deadlines_met
//   [, jct_mean_by_kind_s: {movable, fixed, plain}]}}}
nlohmann::json to_json(const std::vector<Summary>& all);
Result<void> write_jobs_csv(const std::string& path, const std::vector<SimResult>& runs);
// JCT CDF, cluster throughput and GPUs in use over time, PNG and SVG, with gnuplot.
Result<void> write_plots(const std::string& dir, const std::vector<SimResult>& runs);

}  // namespace crius::scheduler
