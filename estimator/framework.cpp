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
  return "megatron:" + std::to_string(f.version / 100) + "." + std::to_string(f.version % 100);
}

Result<Framework> parse_framework(std::string_view t) {
  const std::string expected = " (expected crius-train, megatron or megatron:MAJOR.MINOR, a Megatron-Core release from 0.8 on)";
  if (t == "crius-train") return Framework{};
  if (t == "megatron") return Framework{Framework::Kind::megatron, kMegatronNewest};
  constexpr std::string_view prefix = "megatron:";
  if (t.substr(0, prefix.size()) != prefix) return make_error(util::shown(t) + " is not a framework" + expected);
  const std::string_view v = t.substr(prefix.size());
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
  if (version < kMegatronOldest)
    return make_error(util::shown(t) + ": Megatron-Core releases before 0.8 are not known to crius" + expected);
  return Framework{Framework::Kind::megatron, version};
}

SplitRule split_rule(const Framework& f, const Schedule& s) {
  if (f.kind == Framework::Kind::crius_train) return SplitRule::any;
  // crius's interleaved plans split evenly; Megatron's --num-layers-per-virtual-pipeline-stage
  // (every release) and its layout (0.13 on) both express that.
  if (s.kind == Schedule::Kind::interleaved) return SplitRule::even;
  if (f.version >= kMegatronLayout) return SplitRule::any;
  if (f.version >= kMegatronFirstLast) return SplitRule::first_last;
  return SplitRule::even;
}

bool split_allowed(SplitRule rule, const int* ends, int stages) {
  if (rule == SplitRule::any || stages <= 1) return true;
  auto len = [&](int i) { return ends[i] - (i == 0 ? 0 : ends[i - 1]); };
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
  return f.kind == Framework::Kind::megatron ? Runtime::megatron_core : Runtime::megatron;
}

static std::string megatron_name(const Framework& f) {
  return "Megatron-LM (Megatron-Core " + to_string(f).substr(std::string_view("megatron:").size()) + ")";
}

Result<void> check_request(const Framework& f, const Model& m, Runtime runtime) {
  if (f.kind == Framework::Kind::crius_train) return {};
  const std::string who = "framework " + to_string(f) + ": " + megatron_name(f);
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

bool expert_parallel_allowed(const Framework& f, const Model& m) {
  return f.kind == Framework::Kind::crius_train || m.dtype != Dtype::fp16 || f.version >= kMegatronFp16Experts;
}

Result<void> check_plan(const Framework& f, const Model& m, const Plan& plan, const StackSwitches* stack) {
  if (f.kind == Framework::Kind::crius_train) return {};
  const std::string who = megatron_name(f);
  if (auto ok = check_request(f, m, plan.runtime); !ok) return ok;
  if (plan.stages.empty()) return make_error("the plan has no stages");
  if (!plan.uniform())
    return make_error(who + " needs one TP and one DP size for all stages; this plan has per-stage shapes");
  const int tp = plan.stages[0].tp, dp = plan.stages[0].dp, pp = plan.pp();
  const bool interleaved = plan.schedule.kind == Schedule::Kind::interleaved;
  if (plan.schedule.kind == Schedule::Kind::gpipe) return make_error(who + " has no GPipe schedule (1F1B or interleaved)");
  if (m.heads % tp != 0)
    return make_error(who + ": tensor parallelism " + std::to_string(tp) + " does not divide the " + std::to_string(m.heads) +
                      " attention heads");
  const int groups = m.kv_heads ? m.kv_heads : m.heads;
  if (groups % tp != 0)
    return make_error(who + ": tensor parallelism " + std::to_string(tp) + " does not divide the " + std::to_string(groups) +
                      " query groups (--num-query-groups must be a multiple of TP)");
  if (m.family == Family::moe && plan.expert_parallel && std::gcd(m.experts, dp) > 1) {
    if (!expert_parallel_allowed(f, m))
      return make_error(who + " runs expert parallelism only in bf16 or fp32 (fp16 from 0.19); model '" + m.id + "' is fp16");
    if (tp > 1 && !plan.sequence_parallel)
      return make_error(who + ": expert parallelism with tensor parallelism needs sequence parallelism");
  }
  if (interleaved) {
    const int v = plan.schedule.virtual_stages;
    if (pp < 2 || (plan.has_layers() && plan.num_layers() % (pp * v) != 0))
      return make_error(who + ": interleaved:" + std::to_string(v) + " needs the layers divisible by stages x " +
                        std::to_string(v));
    if (plan.micro_batches % pp != 0 || plan.micro_batches < pp)
      return make_error(who + ": an interleaved schedule needs the micro-batches (" + std::to_string(plan.micro_batches) +
                        ") a multiple of the " + std::to_string(pp) + " stages");
  }
  if (stack) {
    // The estimate keeps a bf16 model's fp32 master copy as its low 16 bits (master_param_remainders):
    // Megatron-Core's precision-aware optimizer, which shards the states (ZeRO-1).
    if (stack->master_param_remainders && m.dtype == Dtype::bf16) {
      if (f.version < kMegatronParamRemainders)
        return make_error(who + " keeps the fp32 master copy whole (the precision-aware optimizer's parameter "
                                "remainders come with 0.13); the runtime profile keeps its low bits only");
      if (plan.zero != 1)
        return make_error(who + " keeps only the master copy's low bits with the distributed optimizer (ZeRO-1)");
    }
    if (stack->overlap_param_gather && plan.zero == 1 && !stack->overlap_grad_reduce)
      return make_error(who + " overlaps the parameter all-gather only with the gradient reduction overlapped too");
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
  if (!split_allowed(rule, ends.data(), pp)) {
    std::string ranges;
    for (const auto& s : plan.stages)
      ranges += (ranges.empty() ? "" : ",") + std::to_string(s.layer_begin) + "-" + std::to_string(s.layer_end - 1);
    return make_error(who + " cannot express these stage layer ranges (" + ranges + "): " +
                      (rule == SplitRule::first_last ? "only the first and last stage may differ (any split comes with 0.13)"
                       : interleaved                 ? "an interleaved schedule needs every stage the same layers"
                                                     : "every stage needs the same layers (the first and last may differ from 0.10)"));
  }
  return {};
}

}  // namespace crius::estimator
