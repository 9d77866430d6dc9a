// criusd: re-decides the Cells of all crius jobs every round through Slurm.
// See criusd(8).
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "estimator/estimator.h"
#include "slurm_plugin/criusd/controller.h"
#include "slurm_plugin/criusd/slurm_client.h"

namespace {

using namespace crius;
using namespace crius::slurm;

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

std::string timestamp() {
  char buf[32];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  return buf;
}


Result<void> apply(SlurmClient& slurm, const ControllerOptions& o, const Action& a) {
  switch (a.kind) {
    case Action::Kind::update_pending:
    case Action::Kind::finish_move:
      return slurm.update_pending(a.job, a.to, a.record, a.kind == Action::Kind::finish_move);
    case Action::Kind::checkpoint:
      // Record the move before acting, so a restarted criusd finishes it.
      if (auto r = slurm.set_admin_comment(a.job, a.record); !r) return r;
      return slurm.signal(a.job, o.checkpoint_signal);
    case Action::Kind::requeue:
      if (auto r = slurm.set_admin_comment(a.job, a.record); !r) return r;
      return slurm.requeue(a.job);
  }
  return {};
}

void print_status(const Round& r) {
  std::printf("%-8s %-10s %-18s %6s  %-28s %12s  %s\n", "JOBID", "STATE", "MODEL", "BATCH",
              "CELL", "EST_ITER_S", "MOVE/PROBLEM");
  for (const auto& s : r.jobs) {
    std::string extra = !s.problem.empty() ? s.problem : s.move;
    std::printf("%-8u %-10s %-18s %6d  %-28s %12.3f  %s\n", s.job, s.state.c_str(), s.model.c_str(),
                s.global_batch, estimator::describe(s.cell).c_str(), s.est_iter_time_s, extra.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"criusd: re-decides the Cells of crius jobs every round through Slurm"};
  std::string config, slurm_conf, state_file, save_state, policy;
  double interval = 0;
  int max_moves = -1, repeat = 1;
  bool once = false, dry_run = false, json = false, status = false;
  app.add_option("--config", config, "crius.toml (default: $CRIUS_CONF, else beside slurm.conf)");
  app.add_option("--slurm-conf", slurm_conf, "slurm.conf of the cluster (default: $SLURM_CONF)");
  app.add_option("--interval", interval, "seconds between rounds (overrides [criusd] interval_s)")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--policy", policy, "scheduling policy (default: crius)");
  app.add_option("--max-moves", max_moves, "running jobs moved per round at most")->check(CLI::Range(0, 10000));
  app.add_flag("--once", once, "run one round, then exit");
  app.add_flag("--dry-run", dry_run, "decide and print, change nothing");
  app.add_flag("--json", json, "print each round's decisions as JSON");
  app.add_flag("--status", status, "print each crius job's Cell and estimate, then exit");
  app.add_option("--state", state_file, "decide on a saved snapshot instead of Slurm (implies --once --dry-run)");
  app.add_option("--repeat", repeat, "with --state: decide N times, as N rounds of a running criusd (timing)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--save-state", save_state, "write the snapshot read from Slurm to FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  // crius.toml: --config, else found as the plugins find it ($CRIUS_CONF, beside slurm.conf).
  if (!slurm_conf.empty()) setenv("SLURM_CONF", slurm_conf.c_str(), 1);
  std::string path = config.empty() ? estimator::find_crius_conf(CRIUS_SLURM_SYSCONFDIR) : config;
  auto cluster = estimator::load_cluster(path);
  if (!cluster) {
    std::cerr << "criusd: " << cluster.error() << "\n";
    return 2;
  }
  auto options = load_controller_options(*cluster);
  if (!options) {
    std::cerr << "criusd: " << options.error() << "\n";
    return 2;
  }
  if (interval > 0) options->interval_s = interval;
  if (!policy.empty()) options->policy = policy;
  if (max_moves >= 0) options->max_moves_per_round = max_moves;
  Controller controller(*cluster, *options);

  if (!state_file.empty()) {
    std::ifstream in(state_file);
    if (!in) {
      std::cerr << "criusd: cannot open --state " << state_file << "\n";
      return 2;
    }
    auto j = nlohmann::json::parse(in, nullptr, false);
    auto snap = snapshot_from_json(j, state_file);
    if (j.is_discarded() || !snap) {
      std::cerr << "criusd: " << (j.is_discarded() ? state_file + ": not JSON" : snap.error()) << "\n";
      return 2;
    }
    auto round = controller.decide(*snap);
    if (!round) {
      std::cerr << "criusd: " << round.error() << "\n";
      return 1;
    }
    for (int i = 1; i < repeat; ++i) {  // later rounds reuse the daemon's estimate cache
      auto again = controller.decide(*snap);
      if (!again) {
        std::cerr << "criusd: " << again.error() << "\n";
        return 1;
      }
      std::cerr << "criusd: round " << i + 1 << " decided in " << again->decide_ms << " ms\n";
    }
    if (json) std::cout << to_json(*round).dump(2) << "\n";
    else if (status) print_status(*round);
    else
      for (const auto& a : round->actions)
        std::cout << "job " << a.job << ": " << to_string(a.kind) << " " << estimator::describe(a.from) << " -> "
                  << estimator::describe(a.to) << " (" << a.reason << ")\n";
    std::cerr << "criusd: decided in " << round->decide_ms << " ms\n";
    return 0;
  }

  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  SlurmClient slurm(slurm_conf);
  if (status) once = dry_run = true;
  int failures = 0;
  do {
    auto snap = slurm.snapshot();
    if (!snap) {
      std::cerr << timestamp() << " criusd: cannot read Slurm: " << snap.error() << "\n";
      ++failures;
    } else {
      if (!save_state.empty()) std::ofstream(save_state) << to_json(*snap).dump(1) << "\n";
      auto round = controller.decide(*snap);
      if (!round) {
        std::cerr << timestamp() << " criusd: " << round.error() << "\n";
        ++failures;
      } else if (status) {
        print_status(*round);
      } else {
        if (json) std::cout << to_json(*round).dump() << std::endl;
        for (const auto& note : round->notes) std::cerr << timestamp() << " criusd: " << note << "\n";
        for (const auto& a : round->actions) {
          char speeds[112] = "";
          if (a.from_samples_per_s > 0 || a.to_samples_per_s > 0)  // 0: a move in flight continues
            std::snprintf(speeds, sizeof speeds, "; estimated %.2f -> %.2f samples/s", a.from_samples_per_s,
                          a.to_samples_per_s);
          std::cerr << timestamp() << " criusd: " << (dry_run ? "would " : "") << to_string(a.kind)
                    << " job " << a.job << " " << estimator::describe(a.from) << " -> " << estimator::describe(a.to)
                    << " (" << a.reason << speeds << ")\n";
          if (dry_run) continue;
          if (auto r = apply(slurm, *options, a); !r) {
            std::cerr << timestamp() << " criusd: job " << a.job << ": " << r.error() << "\n";
            ++failures;
          }
        }
      }
    }
    if (once) break;
    for (double waited = 0; waited < options->interval_s && !g_stop; waited += 0.2)
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (!g_stop);
  return once && failures ? 1 : 0;
}
