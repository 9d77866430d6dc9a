#include "scheduler/objective.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace crius::scheduler {

std::optional<std::size_t> choose_cell(const std::vector<CellOption>& options, Objective objective) {
  if (options.empty()) return std::nullopt;
  auto per_gpu = [&](std::size_t i) { return options[i].speed / std::max(1, options[i].gpus); };
  // better(a, b): a wins on `value`, then on fewer GPUs; the earlier option keeps a full tie.
  auto pick = [&](auto value, auto eligible) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < options.size(); ++i) {
      if (!eligible(i)) continue;
      if (!best || value(i) > value(*best) ||
          (value(i) == value(*best) && options[i].gpus < options[*best].gpus))
        best = i;
    }
    return best;
  };
  auto any = [](std::size_t) { return true; };
  auto speed = [&](std::size_t i) { return options[i].speed; };
  switch (objective) {
    case Objective::throughput: return pick(speed, any);
    case Objective::efficiency: return pick(per_gpu, any);
    case Objective::balanced: break;
  }
  const std::size_t base = *pick(per_gpu, any);
  const CellOption& b = options[base];
  return pick(speed, [&](std::size_t i) {
    const CellOption& o = options[i];
    if (o.gpus <= b.gpus) return o.speed >= b.speed;
    const double doublings = std::log2(static_cast<double>(o.gpus) / std::max(1, b.gpus));
    return o.speed >= b.speed * std::pow(kGainPerDoubling, doublings);
  });
}

const char* to_string(Objective o) {
  switch (o) {
    case Objective::throughput: return "throughput";
    case Objective::efficiency: return "efficiency";
    case Objective::balanced: return "balanced";
  }
  return "?";
}

Result<Objective> parse_objective(std::string_view name) {
  for (Objective o : {Objective::throughput, Objective::efficiency, Objective::balanced})
    if (name == to_string(o)) return o;
  return make_error("unknown objective '" + std::string(name.substr(0, 64)) +
                    "' (known: throughput, efficiency, balanced)");
}

}  // namespace crius::scheduler
