// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/objective.h"

#include <algorithm>
#include <string>

namespace crius::scheduler {

namespace {
double value(const CellOption& o, bool per_gpu) { return per_gpu ? o.speed / std::max(1, o.gpus) : o.speed; }
// `a` goes before `b`: more value, then fewer GPUs (the earlier option keeps a full tie).
bool preferred(const CellOption& a, const CellOption& b, bool per_gpu) {
  const double va = value(a, per_gpu), vb = value(b, per_gpu);
  return va > vb || (va == vb && a.gpus < b.gpus);
}
}  // namespace

bool efficient(Objective objective, bool others_wait) {
  return objective == Objective::efficiency || (objective == Objective::adaptive && others_wait);
}

std::optional<std::size_t> choose_cell(const std::vector<CellOption>& options, Objective objective,
                                       bool others_wait, double floor_speed) {
  const bool per_gpu = efficient(objective, others_wait);
  auto best_of = [&](double floor) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < options.size(); ++i)
      if (options[i].speed >= floor && (!best || preferred(options[i], options[*best], per_gpu))) best = i;
    return best;
  };
  if (per_gpu && floor_speed > 0)
    if (auto b = best_of(floor_speed)) return b;
  return best_of(0);
}

std::vector<std::size_t> preference_order(const std::vector<CellOption>& options, bool per_gpu) {
  std::vector<std::size_t> order(options.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return preferred(options[a], options[b], per_gpu); });
  return order;
}

const char* to_string(Objective o) {
  switch (o) {
    case Objective::adaptive: return "adaptive";
    case Objective::throughput: return "throughput";
    case Objective::efficiency: return "efficiency";
  }
  return "?";
}

Result<Objective> parse_objective(std::string_view name) {
  for (Objective o : {Objective::adaptive, Objective::throughput, Objective::efficiency})
    if (name == to_string(o)) return o;
  return make_error("unknown objective '" + std::string(name.substr(0, 64)) +
                    "' (known: adaptive, throughput, efficiency)");
}

}  // namespace crius::scheduler
