// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-sim: trace-driven simulation of the scheduler policies (crius-sim(1)).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "common/util.h"

#include "estimator/estimator.h"
#include "scheduler/estimator_throughput.h"
#include "scheduler/live.h"
#include "scheduler/report.h"
#include "scheduler/simulator.h"

namespace cs = crius::scheduler;
namespace ce = crius::estimator;

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int fail(int code, const std::string& msg) {
  std::cerr << "crius-sim: " << msg << "\n";
  return code;
}

// One line, rewritten in place; only on a terminal.
class ProgressBar {
 public:
  explicit ProgressBar(bool on) : m_on(on) {}
  void show(const std::string& label, double f) {
    if (!m_on) return;
    int pct = static_cast<int>(f * 100);
    if (pct == m_last) return;
    m_last = pct;
    int fill = pct * 30 / 100;
    std::fprintf(stderr, "\r%-15s [%s%s] %3d%%", label.c_str(), std::string(fill, '#').c_str(),
                 std::string(30 - fill, '.').c_str(), pct);
    std::fflush(stderr);
  }
  void done() {
    if (m_on) std::fprintf(stderr, "\r%60s\r", "");
    m_last = -1;
  }

 private:
  bool m_on;
  int m_last = -1;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"crius-sim: simulate the crius scheduler and its baselines on a job trace"};
  std::string trace, cluster_file, policy = "crius", json_file, jobs_csv, plot_dir, table_file;
  std::string runtime_name, framework_name, save_table, replay_jobs, restart_model = "flat", truth_mode = "noisy";
  double truth_sigma = 0.15;
  std::uint64_t truth_seed = 1;
  std::vector<std::string> live;
  bool table_only = false;
  cs::PolicyOptions popt;
  double iter_scale = 1.0;
  bool no_check = false, timing = false;
  app.add_option("--trace", trace, "job trace CSV (the Crius artifact's columns)")->required();
  app.add_option("--cluster", cluster_file, "cluster file (crius.toml(5))")->required();
  app.add_option("--policy", policy, "crius, fcfs, gandiva, gavel, elasticflow-ls, sia, all, or none");
  app.add_option("--live", live, "NAME=FILE: summarise a replay's runs (crius-replay(1)) beside the policies");
  app.add_option("--replay-jobs", replay_jobs,
                 "write what crius-replay submits for each job (Slurm alone: shape and speed), then exit");
  app.add_option("--interval", popt.interval_s, "seconds between scheduling rounds (300)");
  app.add_option("--iter-scale", iter_scale,
                 "multiply iterations by F and divide deadline budgets by F (1; the paper: 0.2)");
  app.add_option("--seed", popt.seed, "seed of the placement tie-breaking (1)");
  app.add_option("--restart-cost", popt.restart_cost_s,
                 "seconds a moved, resized or resumed job loses (60)");
  double policy_restart_cost = 0;
  auto* policy_restart_opt = app.add_option("--policy-restart-cost", policy_restart_cost,
                 "seconds the policy weighs a move at, where it differs from --restart-cost (criusd's "
                 "restart_cost_s; default: --restart-cost)");
  auto* truth_opt = app.add_option("--truth", truth_mode,
                 "noisy (default: policies decide with the estimator; jobs run at measured speeds, else the "
                 "estimator's with a per-shape error) or oracle (policies decide with the speeds jobs run at)")
      ->check(CLI::IsMember({"oracle", "noisy"}));
  bool oracle = false;
  app.add_flag("--oracle", oracle, "the same as --truth oracle")->excludes(truth_opt);
  app.add_option("--truth-sigma", truth_sigma,
                 "noisy: the log-normal sigma of the per-shape error (0.15: median 10%, p90 28%)")
      ->check(CLI::Range(0.0, 2.0));
  app.add_option("--truth-seed", truth_seed, "noisy: the seed of the per-shape errors (1)");
  app.add_option("--restart-model", restart_model,
                 "flat (--restart-cost for every move), paper (per GPU, capped: crius 10 s up to 40 s, "
                 "the baselines 150 s up to 600 s, accrued as time debt) or live (Slurm with job_submit and "
                 "criusd: Cells given at submission, Slurm's starts every --tick, a move costs "
                 "--checkpoint-grace + --restart-cost, a start --start-latency)")
      ->check(CLI::IsMember({"flat", "paper", "live"}));
  double tick_s = 30, start_latency_s = 0;
  std::string objective = "adaptive";
  app.add_option("--tick", tick_s, "live: seconds between Slurm's scheduling passes (30; divides --interval)");
  app.add_option("--start-latency", start_latency_s,
                 "live: seconds from a job's start to its first iteration (0)");
  app.add_option("--checkpoint-grace", popt.checkpoint_grace_s,
                 "live: seconds between a move's checkpoint signal and its requeue, as criusd's "
                 "checkpoint_grace_s (0)");
  app.add_option("--objective", objective,
                 "crius: the Cell a job takes among those that fit, as [job_submit] objective: adaptive "
                 "(the default: the fastest while no other job waits, else the most per GPU), throughput "
                 "or efficiency");
  app.add_flag("--deadline-mode", popt.deadline_mode,
               "every policy takes its queue earliest deadline first (the baselines' EDF variants, named "
               "NAME-edf) and crius chooses Cells that meet deadlines (crius-deadline)");
  app.add_option("--max-gpus", popt.max_gpus,
                 "crius: the largest allocation of one job, as [job_submit] max_gpus bounds criusd (0 = none)")
      ->check(CLI::Range(0, 1000000));
  std::string crius_without;
  app.add_option("--crius-without", crius_without,
                 "crius: mechanisms turned off for an ablation, comma-separated: search, scaling, type-change, "
                 "migration, opportunistic, upgrade");
  int search_depth = popt.crius.search_depth;
  app.add_option("--search-depth", search_depth,
                 "crius: running jobs one search may shrink, one after another, to admit a waiting job (" +
                     std::to_string(popt.crius.search_depth) + ")")
      ->check(CLI::Range(1, 64));
  int search_fits = popt.crius.search_fits, search_jobs = popt.crius.search_jobs;
  app.add_option("--search-fits", search_fits,
                 "crius: jobs that fit poorly searched per round (" + std::to_string(search_fits) + ")")
      ->check(CLI::Range(0, 100000));
  app.add_option("--search-jobs", search_jobs,
                 "crius: running jobs, the largest, one search tries (" + std::to_string(search_jobs) + ")")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-moves-per-round", popt.max_moves_per_round,
                 "running jobs preempted, moved or resized per round, for every policy, as criusd's "
                 "max_moves_per_round (-1 = none, the default)")
      ->check(CLI::Range(-1, 10000));
  app.add_option("--min-runtime", popt.min_runtime_s,
                 "a running job is preempted, moved or resized only after running this long since its last "
                 "start, as criusd's min_runtime_s (0 = no bound, the default)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--max-moves-per-job-per-hour", popt.max_moves_per_job,
                 "changes of one running job per --rate-window, as criusd's max_moves_per_job_per_hour "
                 "(-1 = no bound, the default)")
      ->check(CLI::Range(-1, 10000));
  app.add_option("--rate-window", popt.rate_window_s,
                 "the hour of --max-moves-per-job-per-hour, in seconds, as criusd's rate_window_s (3600)")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--runtime", runtime_name, "estimator runtime profile: alpa (the default without --framework), megatron or megatron-core "
                 "(with --framework, the framework's default, crius(7) FRAMEWORKS)");
  app.add_option("--framework", framework_name,
                 "what runs the jobs: crius-train, megatron[:MAJOR.MINOR] or torchtitan[:MAJOR.MINOR] (default: the cluster file's)");
  app.add_option("--throughput-table", table_file,
                 "measured iteration times (CSV); missing shapes use the estimator");
  app.add_flag("--table-only", table_only,
               "with --throughput-table: no estimator for missing shapes (they do not fit)");
  app.add_option("--save-throughput", save_table,
                 "write every speed the run used as a --throughput-table file");
  app.add_option("--json", json_file, "write the summary as JSON");
  app.add_option("--jobs-csv", jobs_csv, "write one row per job and policy");
  app.add_option("--plot", plot_dir, "draw JCT CDF and throughput plots (PNG, SVG) here");
  app.add_flag("--no-check", no_check, "skip the invariant check after every round");
  app.add_flag("--timing", timing, "print the 99th-percentile and longest wall time of a round");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(kExitUsage, e.what());
  }

  if (auto m = cs::crius_without(crius_without)) {
    popt.crius = *m;
    popt.crius.search_depth = search_depth;
    popt.crius.search_fits = search_fits;
    popt.crius.search_jobs = search_jobs;
  } else {
    return fail(kExitUsage, "--crius-without: " + m.error());
  }
  if (!(popt.interval_s >= 1 && popt.interval_s <= 86400))
    return fail(kExitUsage, "--interval must be 1 to 86400 seconds, got " + crius::util::fmt(popt.interval_s));
  if (!(iter_scale >= 1e-6 && iter_scale <= 1e6))
    return fail(kExitUsage, "--iter-scale must be from 1e-6 to 1e6, got " + crius::util::fmt(iter_scale));
  if (!(popt.restart_cost_s >= 0 && popt.restart_cost_s <= 1e7))
    return fail(kExitUsage, "--restart-cost must be 0 to 1e7 seconds, got " + crius::util::fmt(popt.restart_cost_s));
  if (!(popt.restart_cost_s >= 0))
    return fail(kExitUsage,
                "--restart-cost must be >= 0 seconds, got " + std::to_string(popt.restart_cost_s));
  const double charged_restart_cost = popt.restart_cost_s;
  if (policy_restart_opt->count()) {
    if (!(policy_restart_cost >= 0 && policy_restart_cost <= 1e7))
      return fail(kExitUsage, "--policy-restart-cost must be 0 to 1e7 seconds, got " + crius::util::fmt(policy_restart_cost));
    popt.restart_cost_s = policy_restart_cost;
  }

  if (oracle) truth_mode = "oracle";
  popt.restart_model = restart_model == "paper" ? cs::RestartModel::paper
                       : restart_model == "live" ? cs::RestartModel::live
                                                 : cs::RestartModel::flat;
  if (auto o = cs::parse_objective(objective)) popt.objective = *o;
  else return fail(kExitUsage, "--objective: " + o.error());
  struct Seconds { const char* name; double value, least; };
  for (const Seconds& o : {Seconds{"--tick", tick_s, 1}, Seconds{"--start-latency", start_latency_s, 0},
                           Seconds{"--checkpoint-grace", popt.checkpoint_grace_s, 0}})
    if (!(o.value >= o.least && o.value <= 86400))
      return fail(kExitUsage, std::string(o.name) + " must be " + crius::util::fmt(o.least) +
                                  " to 86400 seconds, got " + crius::util::fmt(o.value));
  if (popt.restart_model == cs::RestartModel::live) {
    const double k = popt.interval_s / tick_s;
    if (tick_s > popt.interval_s || std::abs(k - std::round(k)) > 1e-9)
      return fail(kExitUsage, "--tick " + crius::util::fmt(tick_s) + " must divide --interval " +
                                  crius::util::fmt(popt.interval_s));
  } else if (app.count("--tick") || app.count("--start-latency") || app.count("--checkpoint-grace")) {
    return fail(kExitUsage, "--tick, --start-latency and --checkpoint-grace need --restart-model live");
  }

  std::vector<std::string> policies;
  if (policy == "all") {
    policies = cs::policy_names();
  } else if (policy == "none") {
    if (live.empty() && replay_jobs.empty()) return fail(kExitUsage, "--policy none: give --live or --replay-jobs");
  } else {
    auto p = cs::make_policy(policy, popt);
    if (!p) return fail(kExitUsage, "--policy: " + p.error());
    policies = {policy};
  }

  auto cluster = ce::load_cluster(cluster_file);
  if (!cluster) return fail(kExitUsage, cluster.error());
  cs::ClusterState state = cs::cluster_state(*cluster);
  if (state.nodes.empty()) return fail(kExitUsage, cluster_file + ": the cluster has no nodes");
  if (!framework_name.empty()) {
    auto fw = ce::parse_framework(framework_name);
    if (!fw) return fail(kExitUsage, "--framework: " + fw.error());
    cluster->framework = *fw;
  }
  // The Arena traces were measured on Alpa: its profile, unless a profile is named or the jobs'
  // framework (--framework, the cluster file's) is one that does not run Alpa's schedule.
  crius::Result<ce::Runtime> runtime = ce::Runtime::alpa;
  if (!runtime_name.empty()) runtime = ce::parse_runtime(runtime_name);
  else if (cluster->framework != ce::Framework{}) runtime = ce::default_runtime(cluster->framework);
  if (!runtime) return fail(kExitUsage, "--runtime: " + runtime.error());

  // oracle: the policies decide with what jobs run at (the table where it has the shape, else
  // the estimator). noisy: they decide with the estimator; jobs run at the table's measured
  // speed where it has the shape, else at the estimator's with a fixed per-shape error.
  cs::EstimatorThroughput est(*cluster, *runtime);
  cs::NoisyThroughput noisy_est(est, truth_sigma, truth_seed);
  const bool noisy = truth_mode == "noisy";
  std::unique_ptr<cs::TableThroughput> table;
  cs::ThroughputSource* truth_source = noisy ? static_cast<cs::ThroughputSource*>(&noisy_est) : &est;
  if (!table_file.empty()) {
    auto t = cs::TableThroughput::load(table_file);
    if (!t) return fail(kExitUsage, "--throughput-table: " + t.error());
    table = std::move(t.value());
    if (!table_only) table->set_fallback(truth_source);
    truth_source = table.get();
  }
  if (table_only && !table)
    return fail(kExitUsage, "--table-only needs --throughput-table");
  cs::CachedThroughput truth(*truth_source);
  cs::CachedThroughput belief(est);
  cs::CachedThroughput& tput = noisy ? belief : truth;  // what the policies decide with

  auto jobs = cs::load_trace(trace, iter_scale);
  if (!jobs) return fail(kExitUsage, jobs.error());
  if (auto ok = cs::validate_trace(trace, *jobs, tput, cs::gpu_ids(*cluster)); !ok)
    return fail(kExitUsage, ok.error());

  if (!replay_jobs.empty()) {
    if (auto r = cs::write_replay_jobs(replay_jobs, *jobs, state, tput); !r) return fail(kExitFailure, r.error());
    return 0;
  }

  ProgressBar bar(isatty(STDERR_FILENO));
  std::vector<cs::SimResult> runs;
  std::vector<cs::Summary> summaries;
  for (const std::string& name : policies) {
    auto pol = cs::make_policy(name, popt);
    cs::SimOptions sopt;
    sopt.policy = popt;
    sopt.check_invariants = !no_check;
    sopt.progress = [&](double f) { bar.show(name, f); };
    sopt.truth = &truth;
    sopt.tick_s = tick_s;
    sopt.start_latency_s = start_latency_s;
    sopt.charged_restart_cost_s = charged_restart_cost;
    auto res = cs::simulate(state, *jobs, **pol, tput, sopt);
    bar.done();
    if (!res) return fail(kExitFailure, res.error());
    if (popt.deadline_mode && name != "elasticflow-ls") res->policy += name == "crius" ? "-deadline" : "-edf";
    for (const std::string& msg : res->unrunnable)
      std::cerr << "crius-sim: " << name << ": " << msg << "\n";
    summaries.push_back(cs::summarize(*res, state));
    std::cout << cs::format_summary(summaries.back(), timing) << std::flush;
    runs.push_back(std::move(res.value()));
  }
  for (const std::string& spec : live) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return fail(kExitUsage, "--live '" + spec + "': want NAME=FILE");
    auto res = cs::load_live(spec.substr(eq + 1), spec.substr(0, eq), *jobs);
    if (!res) return fail(kExitUsage, "--live: " + res.error());
    summaries.push_back(cs::summarize(*res, state));
    std::cout << cs::format_summary(summaries.back()) << std::flush;
    runs.push_back(std::move(res.value()));
  }
  if (summaries.size() > 1) std::cout << "\n" << cs::format_comparison(summaries);

  if (!json_file.empty()) {
    std::ofstream out(json_file);
    out << cs::to_json(summaries).dump(2) << "\n";
    if (!out) return fail(kExitFailure, json_file + ": cannot write");
  }
  if (!jobs_csv.empty())
    if (auto r = cs::write_jobs_csv(jobs_csv, runs); !r) return fail(kExitFailure, r.error());
  if (!save_table.empty())
    if (auto r = truth.save(save_table); !r) return fail(kExitFailure, r.error());
  if (!plot_dir.empty())
    if (auto r = cs::write_plots(plot_dir, runs); !r) return fail(kExitFailure, r.error());
  return 0;
}
