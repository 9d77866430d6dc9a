// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-launch's parts (crius-launch(1)): launch_main.cpp reads the options and
// the plan and builds the mpirun/srun command; watch.cpp runs it and stops every
// rank when one fails; rank_exec.cpp is the per-rank shim mpirun/srun start.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "job/progress.h"

namespace crius::launcher {

inline constexpr const char* kProg = "crius-launch";
inline constexpr int kExitUsage = 2;
inline constexpr int kExitFailure = 1;

// The environment variable, unset or empty = nullopt.
std::optional<std::string> env(const char* name);
std::optional<int> env_int(const char* name);
// SLURMD_NODENAME (the fake nodes of one host differ there), else the host name.
std::string hostname();
std::string signal_name(int sig);

// The per-rank shim: the rank's environment from CRIUS_LAUNCH_SPEC, then PROGRAM.
int rank_exec(const std::vector<std::string>& command);
// Runs the MPI launcher; when a rank reports a failure, stops the others within
// kill_after_s. Returns the failed rank's status (or the launcher's).
// The program's "crius-progress: DONE/TOTAL" lines (job/progress.h) are taken out of its
// output and the latest, when it changed, is given to on_progress at most every
// progress_interval_s, at once when it is the last iteration, and at the end.
using ProgressSink = std::function<void(const job::Progress&)>;
int run_and_watch(const std::vector<std::string>& cmd, int kill_after_s, const ProgressSink& on_progress = {},
                  double progress_interval_s = 1200);

}  // namespace crius::launcher
