// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Which of a job's Cells it gets: the one rule that job_submit applies at submission,
// crius-sim at an arrival, and the crius policy in every round (its fit step), so that a
// site's [job_submit] objective means the same wherever a Cell is chosen (job_submit_crius(8)).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "estimator/result.h"

namespace crius::scheduler {

enum class Objective {
  adaptive,    // throughput while no other job waits for GPUs, else efficiency (the default)
  throughput,  // the fastest Cell
  efficiency,  // the most samples per second per GPU
};

struct CellOption {
  double speed = 0;  // samples/s of the Cell's best plan (> 0)
  int gpus = 0;
};

// A job that keeps the Cell it starts in for life (a crius job without --crius-movable): where
// the objective takes Cells by speed per GPU, it takes the most efficient of those at least this
// share of the job's fastest Cell's speed, where one is among the options. A Cell chosen for
// this minute's queue would otherwise stay the job's long after the queue is gone.
inline constexpr double kKeptCellFloor = 1.0 / 3;

// The index into `options` of the Cell the objective takes; ties go to fewer GPUs, then to
// the earlier option. nullopt when `options` is empty. `others_wait`: another job waits for
// GPUs, or none of `options` fits now (the job itself waits); adaptive then takes the most
// efficient Cell, so that a job grows past it only into GPUs nobody is waiting for, of those at
// least `floor_speed` fast where there are such (kKeptCellFloor; 0: any).
std::optional<std::size_t> choose_cell(const std::vector<CellOption>& options, Objective objective,
                                       bool others_wait, double floor_speed = 0);

// The options in the order the objective prefers them: choose_cell over any subset of `options`
// takes that subset's first in this order (`per_gpu`: by speed per GPU, else by speed).
std::vector<std::size_t> preference_order(const std::vector<CellOption>& options, bool per_gpu);
// The objective takes Cells by speed per GPU (choose_cell's rule).
bool efficient(Objective objective, bool others_wait);

const char* to_string(Objective o);
Result<Objective> parse_objective(std::string_view name);  // "adaptive", "throughput", "efficiency"

}  // namespace crius::scheduler
