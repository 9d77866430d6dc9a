// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// In-process speed of job_submit/crius: what the plugin adds per submission.
// Usage: job_submit-bench CRIUS_TOML MODEL GLOBAL_BATCH [REPEATS]
//   MODEL: a catalogue name, or "spec:" and a model spec (estimator::to_spec), as the SPANK
//   plugin sends a model file.
// Prints p50/p99/max of (parse_request + decide) for a crius job, and of the
// pass-through check for a job without crius options.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "slurm_plugin/request.h"
#include "slurm_plugin/submit.h"

namespace {
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  std::size_t i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: job_submit-bench CRIUS_TOML MODEL GLOBAL_BATCH [REPEATS]\n");
    return 2;
  }
  int repeats = argc > 4 ? std::atoi(argv[4]) : 200;
  auto t0 = std::chrono::steady_clock::now();
  auto conf = crius::slurm::load_config(argv[1]);
  if (!conf) {
    std::fprintf(stderr, "job_submit-bench: %s\n", conf.error().c_str());
    return 2;
  }
  double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::string model = argv[2];
  const bool spec = model.rfind("spec:", 0) == 0;
  std::vector<std::string> env = {
      crius::slurm::option_env_name(crius::slurm::Option::model) + "=" + (spec ? "./model.toml" : model),
      crius::slurm::option_env_name(crius::slurm::Option::global_batch) + "=" + argv[3],
  };
  if (spec) env.push_back(std::string(crius::slurm::kModelSpecVar) + "=" + model.substr(5));
  std::vector<std::string_view> view(env.begin(), env.end());
  std::vector<double> ms, cpu;
  std::string chosen;
  bool partial = false;
  std::size_t cells = 0;
  for (int i = 0; i < repeats; ++i) {
    double c0 = cpu_ms();
    auto a = std::chrono::steady_clock::now();
    auto req = crius::slurm::parse_request(view);
    if (!req) {
      std::fprintf(stderr, "job_submit-bench: %s\n", req.error().c_str());
      return 1;
    }
    auto d = crius::slurm::decide(*req, *conf, "");
    auto b = std::chrono::steady_clock::now();
    cpu.push_back(cpu_ms() - c0);
    if (!d) {
      std::fprintf(stderr, "job_submit-bench: %s\n", d.error().c_str());
      return 1;
    }
    chosen = "CRIUS_CELL=" + crius::estimator::to_string(d->record.cell);
    partial = d->partial;
    cells = d->ranked.size();
    ms.push_back(std::chrono::duration<double, std::milli>(b - a).count());
  }
  // Pass-through: a plain job's spank_job_env (typical: empty or a few foreign entries).
  const char* plain[] = {"SLURM_SPANK_OTHER=1", "FOO=bar", nullptr};
  std::vector<double> us;
  volatile bool hit = false;
  for (int i = 0; i < 100000; ++i) {
    auto a = std::chrono::steady_clock::now();
    hit = crius::slurm::has_request(plain, 2);
    auto b = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(b - a).count());
  }
  (void)hit;
  std::printf("config load (once, in init): %.1f ms; %zu partitions\n", load_ms, conf->cluster.partitions.size());
  std::printf("crius job, model %s, global batch %s, %d runs: p50 %.3f ms  p99 %.3f ms  max %.3f ms  (%s%s)\n",
              spec ? "from a model file" : argv[2], argv[3], repeats, pct(ms, 50), pct(ms, 99),
              *std::max_element(ms.begin(), ms.end()), chosen.c_str(), partial ? ", work budget reached" : "");
  std::printf("  same, thread CPU time:     p50 %.3f ms  p99 %.3f ms  (wall minus CPU = waiting for a core)\n",
              pct(cpu, 50), pct(cpu, 99));
  std::printf("plain job pass-through check: p50 %.3f us  p99 %.3f us\n", pct(us, 50), pct(us, 99));
  (void)cells;
  return 0;
}
