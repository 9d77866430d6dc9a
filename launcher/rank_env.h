// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// What crius-launch hands each rank (crius-launch(1), ENVIRONMENT): the launch
// spec that travels to the per-rank shim in CRIUS_LAUNCH_SPEC, and the
// environment the shim builds from it for one rank.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimator/result.h"
#include "job/env.h"
#include "launcher/layout.h"

namespace crius::launcher {

struct LaunchSpec {
  estimator::Plan plan;
  std::vector<std::string> hosts;
  int gpus_per_node = 0;
  std::string master_addr;
  int master_port = 0;
  // The job's record as its ranks must see it (job::record_env) when crius-launch runs
  // the record's plan; empty otherwise.
  job::Env job_env;
  // Each rank bound to its own equal share of the CPUs its node lets it use (crius-launch
  // --bind-cpus): ranks that stand in for GPUs on a CPU-only machine then keep a fixed rate.
  bool bind_cpus = false;
};
nlohmann::json to_json(const LaunchSpec& s);
Result<LaunchSpec> launch_spec_from_json(const nlohmann::json& j, const std::string& what);

struct RankEnv {
  job::Env torchrun;  // RANK, LOCAL_RANK, ...: set only where the user has not set them
  job::Env crius;     // CRIUS_*: always set, so every rank and the runtime agree
};
// local_rank/local_size: what the MPI launcher says, when it says so.
RankEnv rank_env(const Layout& layout, const LaunchSpec& spec, int rank, std::optional<int> local_rank,
                 std::optional<int> local_size);

// --bind-cpus: the CPUs of `cpus` (those the node lets its ranks use) that local rank
// `local_rank` of `local_size` gets: an equal block of them, or, with more ranks than CPUs,
// one CPU shared by consecutive ranks (a tensor-parallel group stays together).
std::vector<int> cpu_share(const std::vector<int>& cpus, int local_rank, int local_size);

}  // namespace crius::launcher
