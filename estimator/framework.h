// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The training framework that runs a job's plan, and the one rule of what it can express
// (crius(7), FRAMEWORKS). The plan search, the Cell enumeration, job_submit, criusd, crius-sim
// and crius-launch all ask this rule: a Cell whose best plan the framework cannot run is not a
// Cell for that job, and crius-launch hands over only plans the rule admits.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "estimator/result.h"

namespace crius::estimator {

struct Model;
struct Plan;
struct Schedule;
struct StackSwitches;
enum class Runtime;

// crius-train: crius's reference trainer, which runs every plan crius makes (any layer split,
// per-stage shapes, GPipe, every model family). megatron: Megatron-LM on Megatron-Core release
// `version` (major * 100 + minor: 8 is core 0.8, 13 is core 0.13). torchtitan: PyTorch's
// torchtitan release `version` (1 is 0.1, 2 is 0.2), its Llama 3 models.
struct Framework {
  enum class Kind { crius_train, megatron, torchtitan };
  Kind kind = Kind::crius_train;
  int version = 0;
  bool operator==(const Framework&) const = default;
};

// What changed between the Megatron-Core releases crius knows (crius(7), FRAMEWORKS, names the
// source of each): the oldest; --decoder-first/last-pipeline-num-layers and --moe-layer-freq
// (0.10); --attention-backend and --num-virtual-stages-per-pipeline-rank, uneven stages with an
// interleaved schedule (0.11); Megatron-FSDP's sharded gradients and parameters
// (--use-custom-fsdp with --data-parallel-sharding-strategy, 0.12; --use-megatron-fsdp, 0.14);
// --pipeline-model-parallel-layout and the precision-aware
// optimizer's parameter remainders (0.13); expert parallelism in fp16 (0.19, the newest checked). "megatron" alone is the newest.
inline constexpr int kMegatronOldest = 8, kMegatronFirstLast = 10, kMegatronMoeLayerFreq = 10,
                     kMegatronAttentionBackend = 11, kMegatronUnevenVirtual = 11, kMegatronLayout = 13, kMegatronParamRemainders = 13,
                     kMegatronFsdp = 12, kMegatronFsdpFlag = 14, kMegatronFp16Experts = 19,
                     kMegatronNewest = 19;

// torchtitan's releases crius knows (crius(7), FRAMEWORKS): 0.1 (2025-06) names pipeline splits
// with --parallelism.pipeline_parallel_split_points; 0.2 with --parallelism.module_fqns_per_model_part,
// checks the sequence length against TP and moves the compile switch to --compile.enable.
inline constexpr int kTorchtitanOldest = 1, kTorchtitanModuleFqns = 2, kTorchtitanNewest = 2;

// "crius-train", "megatron:0.13", "torchtitan:0.2".
std::string to_string(const Framework& f);
// crius-train | megatron[:MAJOR.MINOR] (a Megatron-Core release from 0.8 on) |
// torchtitan[:MAJOR.MINOR] (from 0.1). The name alone is the newest known; a release newer than
// that is read with the newest's rules. Errors quote the text (util::shown).
Result<Framework> parse_framework(std::string_view text);

// The torchtitan Llama 3 flavor ("8B", "70B", "405B") whose dimensions are the model's, or ""
// (torchtitan builds its models from its own flavor tables, not from dimensions).
std::string torchtitan_flavor(const Model& m);

// How a framework may split the layers over the pipeline stages.
//   any:        every stage its own layer count (crius-train; Megatron-Core >= 0.13's layout)
//   first_last: the first and the last stage their own, the others equal (Megatron-Core 0.10-0.12;
//               with an interleaved schedule from 0.11)
//   even:       every stage the same (older releases; torchtitan's interleaved schedules)
// With an interleaved schedule of V chunks per stage, a stage's layers are its V chunks: under
// `any` every stage holds at least V layers (its chunks differ by one layer at most), under the
// other two a multiple of V (Megatron checks each stage's count against V).
enum class SplitRule { any, first_last, even };
SplitRule split_rule(const Framework& f, const Schedule& s);
// Whether `ends` (each stage's end layer) is a split `rule` allows with `virtual_stages` chunks per stage.
bool split_allowed(SplitRule rule, const int* ends, int stages, int virtual_stages = 1);
// Whether the framework can split `layers` layers into `stages` stages at all (Cell enumeration).
bool stages_allowed(const Framework& f, int layers, int stages);

// The runtime profile a job gets when it names none: the one that models the stack the framework
// runs by default. crius-train: megatron (unfused attention, nothing overlapped, as crius-train
// runs); Megatron-LM: megatron-core (fused attention and overlapped communication, the flags
// crius-launch hands over).
Runtime default_runtime(const Framework& f);

// What a request must satisfy before any Cell is looked at: the model's family, shape and
// optimizer, the runtime profile's schedule. The error names the framework and says why.
Result<void> check_request(const Framework& f, const Model& m, Runtime runtime);
// Whether the framework runs ZeRO stage `zero` (Plan::zero) with `dp` data-parallel ranks,
// `stages` pipeline stages and `micro_batches` micro-batches, given the runtime profile's `stack`
// (may be null). crius-train and Megatron-Core before 0.12: 0 and 1 (its distributed optimizer).
// Megatron-Core from 0.12: 0-3 (2 and 3 are Megatron-FSDP's optim_grads and optim_grads_params).
// torchtitan: with a pipeline 0 and 1 (its schedules hold FSDP's gathered parameters and
// reduction to the last micro-batch); without, 0, 1 and 3 for one micro-batch and only 3 (FSDP
// resharding after forward, reducing in every backward) for more. The error says why not.
Result<void> check_zero(const Framework& f, const Model& m, int zero, int dp, int stages, int micro_batches,
                        const StackSwitches* stack);
// The ZeRO stages check_zero allows with more than one DP rank, least sharded first.
std::vector<int> zero_stages(const Framework& f, const Model& m, int stages, int micro_batches, const StackSwitches* stack);
// Whether the framework runs context parallelism of `cp` ranks (StagePlan::cp) for `m` with the
// runtime profile's `stack` (may be null): Megatron-Core's, in every release crius knows, needs
// Transformer Engine's attention (fused_attention) and the sequence in 2 x cp chunks. crius plans
// it for dense transformers on Megatron-LM only: not crius-train, not torchtitan (its
// --parallelism.context_parallel_degree is not handed over), not MoE models (whose expert
// parallelism Megatron folds over context parallelism). The error says why not.
Result<void> check_context_parallel(const Framework& f, const Model& m, int cp, const StackSwitches* stack);
// The context-parallel sizes the plan search tries: 1 and the powers of two up to
// kMaxSearchContextParallel that check_context_parallel allows.
inline constexpr int kMaxSearchContextParallel = 32;
std::vector<int> context_parallel_sizes(const Framework& f, const Model& m, const StackSwitches* stack);
// Whether the framework may shard a MoE model's experts over the data-parallel ranks.
bool expert_parallel_allowed(const Framework& f, const Model& m);
// Whether the framework can run `plan` for `m` exactly as planned: layer split, query groups
// per TP rank, experts per EP rank, schedule, interleaving and, given `stack` (the runtime
// profile's switches), each switch as the plan uses it. The error says which and why.
Result<void> check_plan(const Framework& f, const Model& m, const Plan& plan, const StackSwitches* stack = nullptr);

}  // namespace crius::estimator
