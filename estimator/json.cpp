// The --json cell object of crius-estimate.
#include "estimator/estimator.h"

namespace crius::estimator {

nlohmann::json to_json(const Estimate& e) {
  nlohmann::json j;
  j["partition"] = e.cell.partition;
  j["gpu"] = e.cell.gpu;
  j["nodes"] = e.cell.nodes;
  j["gpus_per_node"] = e.cell.gpus_per_node;
  j["stages"] = e.cell.stages;
  j["feasible"] = e.feasible;
  if (!e.feasible) {
    j["why"] = e.why;
    return j;
  }
  j["iter_time_s"] = e.iter_time_s;
  j["samples_per_s"] = e.samples_per_s;
  j["memory_gib"] = e.memory_gib;
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : e.plan.stages)
    stages.push_back({{"layers", {s.layer_begin, s.layer_end}}, {"dp", s.dp}, {"tp", s.tp}});
  j["plan"] = {{"stages", stages},
               {"micro_batch_size", e.plan.micro_batch_size},
               {"micro_batches", e.plan.micro_batches},
               {"schedule", to_string(e.plan.schedule)},
               {"recompute", std::string(to_string(e.plan.recompute))},
               {"sequence_parallel", e.plan.sequence_parallel},
               {"zero", e.plan.zero},
               {"runtime", std::string(to_string(e.plan.runtime))}};
  j["breakdown"] = {{"compute", e.breakdown.compute},   {"tp_comm", e.breakdown.tp_comm},
                    {"dp_comm", e.breakdown.dp_comm},   {"pp_comm", e.breakdown.pp_comm},
                    {"moe_comm", e.breakdown.moe_comm}, {"bubble", e.breakdown.bubble},
                    {"optimizer", e.breakdown.optimizer}};
  j["memory"] = {{"params", e.memory.params},           {"grads", e.memory.grads},
                 {"optimizer", e.memory.optimizer},     {"activations", e.memory.activations},
                 {"workspace", e.memory.workspace},     {"capacity", e.gpu_memory_gib}};
  return j;
}

}  // namespace crius::estimator
