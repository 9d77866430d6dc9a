#include "scheduler/objective.h"

#include <algorithm>
#include <string>

namespace crius::scheduler {

std::optional<std::size_t> choose_cell(const std::vector<CellOption>& options, Objective objective,
                                       bool others_wait) {
  if (options.empty()) return std::nullopt;
  auto per_gpu = [&](std::size_t i) { return options[i].speed / std::max(1, options[i].gpus); };
  // The best by `value`, then fewer GPUs; the earlier option keeps a full tie.
  auto pick = [&](auto value) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < options.size(); ++i) {
      if (!best || value(i) > value(*best) ||
          (value(i) == value(*best) && options[i].gpus < options[*best].gpus))
        best = i;
    }
    return best;
  };
  auto speed = [&](std::size_t i) { return options[i].speed; };
  const bool efficient = objective == Objective::efficiency || (objective == Objective::adaptive && others_wait);
  return efficient ? pick(per_gpu) : pick(speed);
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
