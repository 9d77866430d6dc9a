// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The Cell and the Plan: the one definition every part of crius uses (the
// estimator, the scheduler, job_submit, criusd, crius-launch and the runtime),
// with their one codec: a text form for Cells and a versioned JSON form for
// both.  See crius(7) for how a job's Cell and plan travel.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimator/framework.h"
#include "estimator/result.h"

namespace crius::estimator {

// The training stack a plan runs on (crius-estimate(1), RUNTIME PROFILES): megatron, the
// 2021-2022 Megatron-LM (unfused attention, no overlap); megatron-core, today's Megatron-Core /
// NeMo with Transformer Engine (fused attention, communication overlapped; each a switch of
// the profile); alpa, the Crius artifact's Alpa.
enum class Runtime { megatron, alpa, megatron_core };
// Megatron-LM's plan space (tensor, sequence and pipeline parallelism, its schedules).
inline bool megatron_family(Runtime r) { return r != Runtime::alpa; }
enum class Recompute { none, selective, full };

std::string_view to_string(Runtime r);
std::string_view to_string(Recompute r);
Result<Runtime> parse_runtime(std::string_view text);      // "megatron" | "megatron-core" | "alpa"
Result<Recompute> parse_recompute(std::string_view text);  // "none" | "selective" | "full"

// Pipeline schedule: gpipe, 1f1b, or interleaved 1F1B with `virtual_stages`
// model chunks per GPU (written "interleaved:V", V >= 2).
struct Schedule {
  enum class Kind { gpipe, one_f_one_b, interleaved };
  Kind kind = Kind::one_f_one_b;
  int virtual_stages = 1;  // V; 1 unless interleaved
  bool operator==(const Schedule&) const = default;
};
std::string to_string(const Schedule& s);  // "gpipe", "1f1b", "interleaved:2"
Result<Schedule> parse_schedule(std::string_view text);

// ---- Cell -------------------------------------------------------------------

// A job's resources and pipeline depth: GPU type, nodes x GPUs per node, stages,
// in a partition.  A partial Cell (a user's --crius-cell pin, a scheduler shape)
// leaves fields empty or 0: "any".
struct Cell {
  std::string partition, gpu;
  int nodes = 0, gpus_per_node = 0, stages = 0;
  int gpus() const { return nodes * gpus_per_node; }
  bool operator==(const Cell&) const = default;
};

// Text form without the partition: "a100:2x8:1" (":STAGES" left out when 0),
// "a100:2x8", "a100", and "auto" for a Cell without a GPU type.
std::string to_string(const Cell& c);
// "a100:2x8:1 in a100": the text form and the partition, for logs and messages.
std::string describe(const Cell& c);
// Reads the text form (the partition stays empty): auto | TYPE[:NODESxGPUS[:STAGES]].
// TYPE: lower-case letters, digits, '-' and '_', not starting with a digit or '-', at
// most 32 characters; numbers within the limits below.  Errors start with the text
// quoted (util::shown), so a caller prefixes the option it came from.
Result<Cell> parse_cell(std::string_view text);
inline constexpr int kMaxCellNodes = 65536, kMaxGpusPerNode = 64, kMaxStages = 1024;

nlohmann::json to_json(const Cell& c);  // {"partition","gpu","nodes","gpus_per_node","stages"}
Result<Cell> cell_from_json(const nlohmann::json& j, const std::string& what);

// ---- Plan -------------------------------------------------------------------

struct StagePlan {
  // [begin, end) over the model's layers; both 0 in a plan that names no layers.
  int layer_begin = 0, layer_end = 0;
  int dp = 1, tp = 1;
  // Context parallelism: each sequence split over `cp` ranks, which exchange keys and values in a
  // ring around the attention (Megatron-Core's p2p context parallelism). The weights are
  // replicated over dp x cp ranks; the global batch counts only dp.
  int cp = 1;
  int gpus() const { return dp * tp * cp; }
  bool operator==(const StagePlan&) const = default;
};

struct Plan {
  std::vector<StagePlan> stages;
  int micro_batch_size = 1;  // samples per micro-batch on one DP rank
  int micro_batches = 1;     // per iteration; global_batch = mbs * micro_batches * dp
  Schedule schedule;
  Recompute recompute = Recompute::none;
  bool sequence_parallel = false;
  // ZeRO stage: 0 every DP rank holds everything; 1 the optimizer states sharded (gradients
  // reduce-scattered and parameters all-gathered once per step); 2 the gradients too (reduced in
  // every micro-batch's backward); 3 the parameters too (gathered for every micro-batch's forward
  // and again for its backward).
  int zero = 0;
  Runtime runtime = Runtime::megatron;
  // A MoE model's experts sharded over the DP ranks (expert parallelism, all-to-all), or every
  // expert on each rank (false; Alpa's forced data parallelism). Other models: true.
  bool expert_parallel = true;
  // The framework the plan was made for (framework.h): what crius-launch hands it to.
  Framework framework;

  int pp() const { return static_cast<int>(stages.size()); }
  int world_size() const;     // GPUs (ranks) over all stages
  bool has_layers() const;    // the stages carry layer ranges
  int num_layers() const;     // 0 without layer ranges
  bool uniform() const;       // all stages share dp, tp and cp
  bool operator==(const Plan&) const = default;
};

// Checks a plan: stages present, positive sizes, layer ranges either on every stage
// (contiguous from 0, none empty) or on none.  `what` names the source in messages.
Result<void> validate(const Plan& plan, const std::string& what);

// The JSON codec (version kPlanVersion):
//   {"version":1, "stages":[{"layers":[BEGIN,END],"dp":D,"tp":T,"cp":C},...],
//    "micro_batch_size":N, "micro_batches":M, "schedule":"1f1b", "recompute":"none",
//    "sequence_parallel":false, "zero":0, "runtime":"megatron"}
// "layers" is absent in a plan without layer ranges; "cp" only when above 1; "expert_parallel":false is written only
// when false (read as true when absent); "framework" ("megatron:0.13") only when not crius-train.  The reader is strict: unknown
// keys, wrong types and other versions are errors naming the key.
inline constexpr int kPlanVersion = 1;
nlohmann::json to_json(const Plan& plan);
Result<Plan> plan_from_json(const nlohmann::json& j, const std::string& what);
Result<Plan> plan_from_json_text(std::string_view text, const std::string& what);
// Compact JSON text of to_json(plan): the form in the job record and CRIUS_PLAN.
std::string plan_text(const Plan& plan);
// FNV-1a of plan_text(): equal on every rank that holds the same plan.
std::uint64_t plan_hash(const Plan& plan);

}  // namespace crius::estimator
