// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The --json cell object of crius-estimate.
#include "estimator/estimator.h"

namespace crius::estimator {

nlohmann::json to_json(const Estimate& e) {
  nlohmann::json j = to_json(e.cell);  // the Cell's keys, then the estimate's
  j["feasible"] = e.feasible;
  if (!e.feasible) {
    j["why"] = e.why;
    return j;
  }
  j["iter_time_s"] = e.iter_time_s;
  j["samples_per_s"] = e.samples_per_s;
  j["memory_gib"] = e.memory_gib;
  j["plan"] = to_json(e.plan);
  j["breakdown"] = {{"compute", e.breakdown.compute},   {"tp_comm", e.breakdown.tp_comm},
                    {"dp_comm", e.breakdown.dp_comm},   {"pp_comm", e.breakdown.pp_comm},
                    {"moe_comm", e.breakdown.moe_comm}, {"cp_comm", e.breakdown.cp_comm},
                    {"bubble", e.breakdown.bubble},
                    {"optimizer", e.breakdown.optimizer}};
  j["memory"] = {{"params", e.memory.params},           {"grads", e.memory.grads},
                 {"optimizer", e.memory.optimizer},     {"activations", e.memory.activations},
                 {"workspace", e.memory.workspace},     {"capacity", e.gpu_memory_gib}};
  return j;
}

}  // namespace crius::estimator
