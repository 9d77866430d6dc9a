// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: the job_submit plugin's request parser and rewrite path.
// Input: newline-separated spank_job_env entries (what any libslurm client can send).
// Every input must give either a clean error or a decision whose environment and
// record are well formed; crashes, leaks and UB are caught by ASan/UBSan.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "job/record.h"
#include "slurm_plugin/request.h"
#include "slurm_plugin/submit.h"

namespace {
std::unique_ptr<crius::slurm::Loaded> g_conf;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* path = std::getenv("CRIUS_FUZZ_CONF");
  if (!path) path = "etc/crius/crius.toml";
  auto r = crius::slurm::load_config(path);
  if (!r) {
    std::fprintf(stderr, "fuzz_request: %s\n", r.error().c_str());
    std::abort();
  }
  g_conf = std::make_unique<crius::slurm::Loaded>(std::move(*r));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> env;
  std::size_t start = 0;
  while (start <= in.size()) {
    std::size_t nl = in.find('\n', start);
    if (nl == std::string_view::npos) nl = in.size();
    env.push_back(in.substr(start, nl - start));
    start = nl + 1;
  }
  // Raw single values through every option checker.
  for (const auto& o : crius::slurm::options()) (void)crius::slurm::check_option(o.id, in.substr(0, 256));
  // A model spec either reads or gives an error, and what reads writes back the same.
  if (auto m = crius::estimator::parse_model_spec(in.substr(0, 600), "fuzz"); m) {
    auto again = crius::estimator::parse_model_spec(crius::estimator::to_spec(*m), "fuzz");
    if (!again || crius::estimator::to_spec(*again) != crius::estimator::to_spec(*m)) std::abort();
  }

  auto req = crius::slurm::parse_request(env);
  if (!req) {
    if (req.error().empty()) std::abort();
    return 0;
  }
  std::string parts;
  if (!env.empty() && env.back().rfind("PARTITIONS=", 0) == 0) parts = std::string(env.back().substr(11, 64));
  auto d = crius::slurm::decide(*req, *g_conf, parts);
  if (!d) {
    if (d.error().empty()) std::abort();
    return 0;
  }
  // The rewrite's invariants: a real partition, a positive shape, NAME=value entries.
  if (!g_conf->cluster.find_partition(d->chosen.cell.partition)) std::abort();
  if (d->chosen.cell.nodes < 1 || d->chosen.cell.gpus_per_node < 1 || !d->chosen.feasible) std::abort();
  for (const auto& [name, value] : d->env)
    if (name.rfind("CRIUS_", 0) != 0 || name.find('=') != std::string::npos || value.find('\n') != std::string::npos)
      std::abort();
  // The record reads back as written (one codec).
  auto back = crius::job::parse_record(crius::job::to_text(d->record));
  if (!back || !*back || !(back->value() == d->record)) std::abort();
  return 0;
}
