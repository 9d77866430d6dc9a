// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The one rule of what a training framework can run (framework.h). Megatron-LM's rules are
// those of its arguments.py and Megatron-Core's model-parallel checks, per release
// (crius(7), FRAMEWORKS, names the files).
#include "estimator/framework.h"

#include <charconv>
#include <numeric>

#include "common/util.h"
#include "estimator/estimator.h"

namespace crius::estimator {

std::string to_string(const Framework& f) {
  if (f.kind == Framework::Kind::crius_train) return "crius-train";
  return std::string(f.kind == Framework::Kind::megatron ? "megatron:" : "torchtitan:") + std::to_string(f.version / 100) +
         "." + std::to_string(f.version % 100);
}

Result<Framework> parse_framework(std::string_view t) {
  const std::string expected =
      " (expected crius-train, megatron, megatron:MAJOR.MINOR (a Megatron-Core release from 0.8 on), torchtitan or "
      "torchtitan:MAJOR.MINOR (from 0.1))";
  if (t == "crius-train") return Framework{};
  if (t == "megatron") return Framework{Framework::Kind::megatron, kMegatronNewest};
  if (t == "torchtitan") return Framework{Framework::Kind::torchtitan, kTorchtitanNewest};
  const auto colon = t.find(':');
  const std::string_view name = t.substr(0, colon);
  if (colon == std::string_view::npos || (name != "megatron" && name != "torchtitan"))
    return make_error(util::shown(t) + " is not a framework" + expected);
  const std::string_view v = t.substr(colon + 1);
  const auto dot = v.find('.');
  int major = -1, minor = -1;
  auto num = [](std::string_view s, int& out) {
    if (s.empty() || s.size() > 3) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
  };
  if (dot == std::string_view::npos || !num(v.substr(0, dot), major) || !num(v.substr(dot + 1), minor) || minor > 99)
    return make_error(util::shown(t) + ": the release must be MAJOR.MINOR" + expected);
  const int version = major * 100 + minor;
  if (name == "torchtitan") {
    if (version < kTorchtitanOldest) return make_error(util::shown(t) + ": torchtitan has no release before 0.1" + expected);
    return Framework{Framework::Kind::torchtitan, version};
  }
  if (version < kMegatronOldest)
    return make_error(util::shown(t) + ": Megatron-Core releases before 0.8 are not known to crius" + expected);
  return Framework{Framework::Kind::megatron, version};
}

std::string torchtitan_flavor(const Model& m) {
  // torchtitan/models/llama3/__init__.py (0.1 and 0.2): dim, n_layers, n_heads, n_kv_heads, and
  // the FFN size its ffn_dim_multiplier and multiple_of give; the Llama 3 tokenizer's vocabulary.
  struct Flavor { const char* name; int layers, hidden, heads, kv_heads, ffn; };
  static constexpr Flavor kLlama3[] = {{"8B", 32, 4096, 32, 8, 14336}, {"70B", 80, 8192, 64, 8, 28672},
                                       {"405B", 126, 16384, 128, 8, 53248}};
  if (m.family != Family::transformer || !m.swiglu || !m.rope || m.vocab != 128256) return "";
  for (const Flavor& f : kLlama3)
    if (m.layers == f.layers && m.hidden == f.hidden && m.heads == f.heads && m.kv_heads == f.kv_heads && m.ffn_hidden == f.ffn)
      return f.name;
  return "";
}

SplitRule split_rule(const Framework& f, const Schedule& s) {
  if (f.kind == Framework::Kind::crius_train) return SplitRule::any;
  // torchtitan names the first layer of every stage (split points, or each stage's modules).
  if (f.kind == Framework::Kind::torchtitan) return s.kind == Schedule::Kind::interleaved ? SplitRule::even : SplitRule::any;
  // Interleaved: --num-layers-per-virtual-pipeline-stage (every release) splits evenly; 0.11 adds
  // --num-virtual-stages-per-pipeline-rank beside --decoder-first/last-pipeline-num-layers, 0.13
  // the layout, which names every chunk's layers.
  if (f.version >= kMegatronLayout) return SplitRule::any;
  if (s.kind == Schedule::Kind::interleaved) return f.version >= kMegatronUnevenVirtual ? SplitRule::first_last : SplitRule::even;
  if (f.version >= kMegatronFirstLast) return SplitRule::first_last;
  return SplitRule::even;
}

bool split_allowed(SplitRule rule, const int* ends, int stages, int virtual_stages) {
  auto len = [&](int i) { return ends[i] - (i == 0 ? 0 : ends[i - 1]); };
  for (int i = 0; i < stages && virtual_stages > 1; ++i)
    if (rule == SplitRule::any ? len(i) < virtual_stages : len(i) % virtual_stages != 0) return false;
  if (rule == SplitRule::any || stages <= 1) return true;
  if (rule == SplitRule::even) {
    for (int i = 1; i < stages; ++i)
      if (len(i) != len(0)) return false;
    return true;
  }
  for (int i = 2; i < stages - 1; ++i)
    if (len(i) != len(1)) return false;
  return true;
}

bool stages_allowed(const Framework& f, int layers, int stages) {
  if (stages < 1 || layers < stages) return false;
  return split_rule(f, Schedule{}) != SplitRule::even || layers % stages == 0;
}

Runtime default_runtime(const Framework& f) {
  return f.kind == Framework::Kind::crius_train ? Runtime::megatron : Runtime::megatron_core;
}

static std::string framework_name(const Framework& f) {
  const std::string release = to_string(f).substr(to_string(f).find(':') + 1);
  return f.kind == Framework::Kind::torchtitan ? "torchtitan " + release : "Megatron-LM (Megatron-Core " + release + ")";
}

static Result<void> check_torchtitan_request(const Framework& f, const Model& m, Runtime runtime) {
  const std::string who = "framework " + to_string(f) + ": " + framework_name(f);
  if (m.family != Family::transformer)
    return make_error(who + " trains its Llama 3 transformers; model '" + m.id + "' is a " +
                      (m.family == Family::moe ? "moe" : "wide_resnet") + " (crius-train runs it)");
  if (torchtitan_flavor(m).empty())
    return make_error(who + " builds only its Llama 3 flavors 8B, 70B and 405B (their layers, hidden size, heads, 8 query "
                            "groups, FFN size, SwiGLU, RoPE and 128256-token vocabulary); model '" + m.id + "' is none of them");
  if (runtime == Runtime::alpa)
    return make_error(who + ": the alpa runtime profile models Alpa's runtime, not torchtitan's (use megatron-core)");
  if (m.dtype != Dtype::bf16 && m.dtype != Dtype::fp32)
    return make_error(who + " trains in bf16 or fp32 (--training.mixed_precision_param); model '" + m.id + "' is " +
                      (m.dtype == Dtype::fp16 ? "fp16" : "fp64"));
  if (m.optimizer != Optimizer::adam)
    return make_error(who + " has Adam and AdamW (--optimizer.name); model '" + m.id + "' trains with another optimizer");
  if (m.dropout != 0) return make_error(who + "'s Llama 3 has no dropout; model '" + m.id + "' has " + util::fmt(m.dropout));
  return {};
}

Result<void> check_request(const Framework& f, const Model& m, Runtime runtime) {
  if (f.kind == Framework::Kind::crius_train) return {};
  if (f.kind == Framework::Kind::torchtitan) return check_torchtitan_request(f, m, runtime);
  const std::string who = "framework " + to_string(f) + ": " + framework_name(f);
  if (m.family == Family::wide_resnet)
    return make_error(who + " trains transformers; model '" + m.id + "' is a wide_resnet (crius-train runs it)");
  if (runtime == Runtime::alpa)
    return make_error(who + " does not run the GPipe schedule the alpa runtime profile plans (use megatron or megatron-core)");
  if (m.optimizer == Optimizer::adafactor)
    return make_error(who + " has no Adafactor (its --optimizer is adam or sgd); model '" + m.id + "' trains with it");
  if (m.dtype == Dtype::fp64) return make_error(who + " does not train in fp64");
  if (m.heads < 1 || m.hidden % m.heads != 0)
    return make_error(who + " needs the hidden size (" + std::to_string(m.hidden) + ") divisible by the " +
                      std::to_string(m.heads) + " attention heads");
  if (m.family == Family::moe && m.expert_every > 1 && f.version < kMegatronMoeLayerFreq)
    return make_error(who + " puts experts in every layer; model '" + m.id + "' has them every " +
                      std::to_string(m.expert_every) + " layers (--moe-layer-freq comes with 0.10)");
  return {};
}

Result<void> check_zero(const Framework& f, const Model& m, int zero, int dp, int stages, int micro_batches,
                        const StackSwitches* stack) {
  // Its messages are built only for a refusal: the search asks for every stage of every combination.
  const auto z = [&] { return "ZeRO-" + std::to_string(zero); };
  if (f.kind == Framework::Kind::crius_train) {
    if (zero > 1) return make_error("crius-train reduces whole gradients into whole parameters (ZeRO-0 or 1); the plan is " + z());
    return {};
  }
  const auto who = [&] { return framework_name(f); };
  const bool remainders = stack && stack->master_param_remainders && m.dtype == Dtype::bf16;
  if (f.kind == Framework::Kind::torchtitan) {
    if (dp < 2) return {};
    if (zero == 2)
      return make_error(who() + "'s FSDP shards parameters and gradients together (ZeRO-3) or neither until the step ends; "
                              "it has no ZeRO-2");
    // train.py's gradient accumulation runs forward and backward per micro-batch with FSDP's (or
    // DDP's) reduction on; only the pipeline schedules hold it to the last micro-batch. FSDP
    // resharding after forward is ZeRO-3, which gathers and reduces in every micro-batch.
    if (stages == 1 && micro_batches > 1 && zero != 3)
      return make_error(who() + " reduces the gradients again in each of the " + std::to_string(micro_batches) +
                        " micro-batches it accumulates without a pipeline (FSDP, ZeRO-3); the plan reduces them once per step (" + z() + ")");
    if (stages > 1 && zero > 1)
      return make_error(who() + "'s pipeline schedules keep FSDP's gathered parameters and unreduced gradients until the last "
                              "micro-batch (ZeRO-1); the plan shards them (" + z() + ")");
    if (stack && zero >= 1 && !stack->overlap_param_gather)
      return make_error(who() + " always prefetches the next layer's parameter all-gather (FSDP); the runtime profile turns "
                              "overlap_param_gather off (use megatron-core)");
    return {};
  }
  // The estimate keeps a bf16 model's fp32 master copy as its low 16 bits (master_param_remainders):
  // Megatron-Core's precision-aware optimizer, which shards the states (ZeRO-1).
  if (remainders && f.version >= kMegatronParamRemainders && zero != 1)
    return make_error(who() + " keeps only the master copy's low bits with the distributed optimizer (ZeRO-1)");
  if (dp < 2) return {};
  if (zero > 1 && f.version < kMegatronFsdp)
    return make_error(who() + " shards gradients and parameters (" + z() +
                      ") with Megatron-FSDP, which comes with 0.12; before it, the distributed optimizer (ZeRO-1) is the most");
  if (!stack) return {};
  // Megatron-FSDP turns the overlaps on itself (arguments.py: optim_grads sets
  // overlap_grad_reduce, optim_grads_params both).
  if (zero >= 2 && !stack->overlap_grad_reduce)
    return make_error(who() + "'s FSDP (" + z() + ") always reduces gradients during the backward; the runtime profile turns "
                            "overlap_grad_reduce off");
  if (zero == 3 && !stack->overlap_param_gather)
    return make_error(who() + "'s FSDP (ZeRO-3) always prefetches the parameter all-gathers; the runtime profile turns "
                            "overlap_param_gather off");
  if (stack->overlap_param_gather && zero == 1 && !stack->overlap_grad_reduce)
    return make_error(who() + " overlaps the parameter all-gather only with the gradient reduction overlapped too");
  return {};
}

std::vector<int> zero_stages(const Framework& f, const Model& m, int stages, int micro_batches, const StackSwitches* stack) {
  std::vector<int> out;
  for (int z = 0; z <= 3; ++z)
    if (check_zero(f, m, z, 2, stages, micro_batches, stack)) out.push_back(z);
  return out;
}

Result<void> check_context_parallel(const Framework& f, const Model& m, int cp, const StackSwitches* stack) {
  if (cp == 1) return {};
  const auto c = [&] { return "context parallelism " + std::to_string(cp); };
  if (cp < 1) return make_error(c() + ": the size must be at least 1");
  if (f.kind == Framework::Kind::crius_train)
    return make_error("crius-train runs every sequence whole on a rank; the plan has " + c());
  if (f.kind == Framework::Kind::torchtitan)
    return make_error(framework_name(f) + ": crius does not hand context parallelism over to torchtitan; the plan has " + c());
  if (m.family != Family::transformer)
    return make_error(framework_name(f) + ": crius plans context parallelism for dense transformers; model '" + m.id +
                      "' is a " + (m.family == Family::moe ? "moe" : "wide_resnet"));
  // arguments.py: seq-length a multiple of 2 x context-parallel-size (each rank two chunks, one
  // from each end, to balance the causal mask).
  if (m.seq_len % (2 * cp) != 0)
    return make_error(framework_name(f) + " needs the sequence length (" + std::to_string(m.seq_len) +
                      ") divisible by 2 x the context-parallel size (" + std::to_string(2 * cp) + ")");
  if (stack && !stack->fused_attention)
    return make_error(framework_name(f) + " runs " + c() + " only in Transformer Engine's attention; the runtime profile "
                      "turns fused_attention off");
  return {};
}

std::vector<int> context_parallel_sizes(const Framework& f, const Model& m, const StackSwitches* stack) {
  std::vector<int> out{1};
  for (int cp = 2; cp <= kMaxSearchContextParallel; cp *= 2)
    if (check_context_parallel(f, m, cp, stack)) out.push_back(cp);
  return out;
}

bool expert_parallel_allowed(const Framework& f, const Model& m) {
  return f.kind == Framework::Kind::crius_train || m.dtype != Dtype::fp16 || f.version >= kMegatronFp16Experts;
}

Result<void> check_plan(const Framework& f, const Model& m, const Plan& plan, const StackSwitches* stack) {
  // ZeRO shards over every rank holding the same weights: dp x cp.
  const auto zero_ok = [&] {
    return check_zero(f, m, plan.zero, plan.stages[0].dp * plan.stages[0].cp, plan.pp(), plan.micro_batches, stack);
  };
  if (f.kind == Framework::Kind::crius_train) {
    if (plan.stages.empty()) return {};
    for (const StagePlan& s : plan.stages)
      if (auto ok = check_context_parallel(f, m, s.cp, stack); !ok) return ok;
    return zero_ok();
  }
  const std::string who = framework_name(f);
  const bool titan = f.kind == Framework::Kind::torchtitan;
  if (auto ok = check_request(f, m, plan.runtime); !ok) return ok;
  if (plan.stages.empty()) return make_error("the plan has no stages");
  if (auto ok = zero_ok(); !ok) return ok;
  if (!plan.uniform())
    return make_error(who + " needs one TP, CP and DP size for all stages; this plan has per-stage shapes");
  const int tp = plan.stages[0].tp, dp = plan.stages[0].dp, pp = plan.pp();
  if (auto ok = check_context_parallel(f, m, plan.stages[0].cp, stack); !ok) return ok;
  const bool interleaved = plan.schedule.kind == Schedule::Kind::interleaved;
  if (plan.schedule.kind == Schedule::Kind::gpipe && !titan)
    return make_error(who + " has no GPipe schedule (1F1B or interleaved)");
  if (m.heads % tp != 0)
    return make_error(who + ": tensor parallelism " + std::to_string(tp) + " does not divide the " + std::to_string(m.heads) +
                      " attention heads");
  const int groups = m.kv_heads ? m.kv_heads : m.heads;
  if (groups % tp != 0)
    return make_error(who + ": tensor parallelism " + std::to_string(tp) + " does not divide the " + std::to_string(groups) +
                      " query groups (" + (titan ? "each TP rank holds whole key/value heads" : "--num-query-groups must be a multiple of TP") + ")");
  if (titan) {
    // torchtitan/models/llama3/infra/parallelize.py: apply_tp shards the norms' sequence
    // (SequenceParallel) whenever TP > 1; apply_ddp refuses DDP beside any other dimension.
    if (tp > 1 && !plan.sequence_parallel)
      return make_error(who + "'s tensor parallelism always shards the sequence at the norms (sequence parallelism); this plan has TP " +
                        std::to_string(tp) + " without it");
    if (dp > 1 && plan.zero == 0 && (tp > 1 || pp > 1))
      return make_error(who + " runs unsharded data parallelism (DDP) only alone (\"DDP has not supported > 1D parallelism\"); "
                              "with TP or PP its data parallelism is FSDP, which shards the optimizer (ZeRO-1 or more)");
    if (plan.recompute == Recompute::selective)
      return make_error(who + "'s selective recomputation (per operator: every second matmul; or every Nth block) is not "
                              "the attention-core recomputation the estimate models (none or full)");
    if (f.version >= kTorchtitanModuleFqns && m.seq_len % (2 * tp) != 0)
      return make_error(who + " needs the sequence length (" + std::to_string(m.seq_len) + ") divisible by 2 x TP (" +
                        std::to_string(2 * tp) + ")");
  }
  if (m.family == Family::moe && plan.expert_parallel && std::gcd(m.experts, dp) > 1) {
    if (!expert_parallel_allowed(f, m))
      return make_error(who + " runs expert parallelism only in bf16 or fp32 (fp16 from 0.19); model '" + m.id + "' is fp16");
    if (tp > 1 && !plan.sequence_parallel)
      return make_error(who + ": expert parallelism with tensor parallelism needs sequence parallelism");
  }
  if (interleaved) {
    const int v = plan.schedule.virtual_stages;
    if (pp < 2 || (!plan.has_layers() && m.layers % (pp * v) != 0))
      return make_error(who + ": interleaved:" + std::to_string(v) + " needs the layers divisible by stages x " +
                        std::to_string(v));
    if (plan.micro_batches % pp != 0 || plan.micro_batches < pp)
      return make_error(who + ": an interleaved schedule needs the micro-batches (" + std::to_string(plan.micro_batches) +
                        ") a multiple of the " + std::to_string(pp) + " stages");
  }
  if (stack && titan) {
    // What torchtitan always does: attention as scaled_dot_product_attention, FSDP (or DDP)
    // reducing gradients during the backward and prefetching the all-gather, pipeline sends and
    // receives posted asynchronously; FSDP keeps the fp32 parameters whole, sharded.
    const auto always = [&](const char* what, const char* switch_name) {
      return make_error(who + " always " + what + "; the runtime profile turns " + switch_name + " off (use megatron-core)");
    };
    if (!stack->fused_attention) return always("runs attention as one fused kernel (scaled_dot_product_attention)", "fused_attention");
    if (dp > 1 && !stack->overlap_grad_reduce) return always("reduces gradients during the backward (FSDP, DDP)", "overlap_grad_reduce");
    if (interleaved && !stack->overlap_p2p_comm) return always("sends between stages asynchronously", "overlap_p2p_comm");
    if (stack->master_param_remainders && m.dtype == Dtype::bf16)
      return make_error(who + " keeps the fp32 parameters whole (FSDP shards them); the runtime profile keeps their low bits only");
  }
  if (stack && !titan) {
    if (stack->master_param_remainders && m.dtype == Dtype::bf16 && f.version < kMegatronParamRemainders)
      return make_error(who + " keeps the fp32 master copy whole (the precision-aware optimizer's parameter "
                              "remainders come with 0.13); the runtime profile keeps its low bits only");
    if (interleaved && !stack->overlap_p2p_comm && pp <= 2)
      return make_error(who + " runs an interleaved schedule without overlapped pipeline sends only on more than 2 stages");
  }
  if (!plan.has_layers()) return {};
  const int L = plan.num_layers();
  if (L != m.layers)
    return make_error("the plan's stages hold " + std::to_string(L) + " layers, model '" + m.id + "' has " +
                      std::to_string(m.layers));
  std::vector<int> ends;
  for (const auto& s : plan.stages) ends.push_back(s.layer_end);
  const SplitRule rule = split_rule(f, plan.schedule);
  const int v = interleaved ? plan.schedule.virtual_stages : 1;
  if (!split_allowed(rule, ends.data(), pp, v)) {
    std::string ranges;
    for (const auto& s : plan.stages)
      ranges += (ranges.empty() ? "" : ",") + std::to_string(s.layer_begin) + "-" + std::to_string(s.layer_end - 1);
    return make_error(who + " cannot express these stage layer ranges (" + ranges + "): " +
                      (interleaved && rule == SplitRule::any
                           ? "an interleaved schedule needs at least " + std::to_string(v) + " layers on every stage"
                       : interleaved && rule == SplitRule::first_last
                           ? "only the first and last stage may differ, each a multiple of " + std::to_string(v) +
                                 " layers (any split comes with 0.13)"
                       : interleaved ? "an interleaved schedule needs every stage the same layers, a multiple of " +
                                           std::to_string(v) + (f.kind == Framework::Kind::megatron ? " (uneven ones come with 0.11)" : "")
                       : rule == SplitRule::first_last ? "only the first and last stage may differ (any split comes with 0.13)"
                                                       : "every stage needs the same layers (the first and last may differ from 0.10)"));
  }
  return {};
}

}  // namespace crius::estimator
