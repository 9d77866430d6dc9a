// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Megatron-LM's arguments for a plan (megatron.h). Flag names and the releases that have them
// are those of megatron/training/arguments.py at each Megatron-Core release (crius(7), FRAMEWORKS).
#include "launcher/megatron.h"

#include <numeric>

#include "common/util.h"

namespace crius::launcher {

namespace est = crius::estimator;

Result<std::vector<std::string>> megatron_args(const est::Plan& plan, const est::Model& m, const est::StackSwitches& stack,
                                               const est::Framework& f) {
  if (f.kind != est::Framework::Kind::megatron) return make_error("framework " + est::to_string(f) + " is not Megatron-LM");
  if (auto ok = est::check_plan(f, m, plan, &stack); !ok) return make_error(ok.error());
  const int tp = plan.stages[0].tp, dp = plan.stages[0].dp, pp = plan.pp();
  const bool interleaved = plan.schedule.kind == est::Schedule::Kind::interleaved;
  std::vector<std::string> a;
  auto add = [&](std::initializer_list<std::string> xs) { a.insert(a.end(), xs); };
  auto num = [](long long v) { return std::to_string(v); };

  // The parallel layout and the batch.
  add({"--tensor-model-parallel-size", num(tp), "--pipeline-model-parallel-size", num(pp)});
  // Megatron-Core's default rank order is tp-cp-ep-dp-pp, crius's layout's (launcher/layout.h).
  if (plan.stages[0].cp > 1) add({"--context-parallel-size", num(plan.stages[0].cp)});
  if (plan.sequence_parallel && tp > 1) add({"--sequence-parallel"});
  if (plan.zero >= 1) add({"--use-distributed-optimizer"});
  if (plan.zero >= 2) {
    // Megatron-FSDP; its overlaps are always on. Before 0.14 it refuses the fused gradient
    // accumulation with sharded gradients; from 0.14 it saves only its own checkpoint format.
    add({f.version >= est::kMegatronFsdpFlag ? "--use-megatron-fsdp" : "--use-custom-fsdp", "--data-parallel-sharding-strategy",
         plan.zero == 3 ? "optim_grads_params" : "optim_grads"});
    if (f.version < est::kMegatronFsdpFlag) add({"--no-gradient-accumulation-fusion"});
    else add({"--ckpt-format", "fsdp_dtensor"});
  }
  add({"--micro-batch-size", num(plan.micro_batch_size), "--global-batch-size",
       num(static_cast<long long>(plan.micro_batch_size) * plan.micro_batches * dp)});

  // The layers of each stage: with an interleaved schedule, each stage's V chunks in turn.
  const int L = m.layers;
  const int V = interleaved ? plan.schedule.virtual_stages : 1;
  add({"--num-layers", num(L)});
  bool even = true;
  if (plan.has_layers() && pp > 1) {
    std::vector<int> len;
    for (const auto& s : plan.stages) len.push_back(s.layer_end - s.layer_begin);
    for (int l : len) even = even && l == len[0] && l % V == 0;  // every chunk the same
    if (!even && f.version >= est::kMegatronLayout) {
      // E: the embedding, t: a transformer layer, L: the output layer and loss; '|' ends a chunk.
      // Chunks in the model's order: chunk 0 of every stage, then chunk 1, ...; a stage's chunks
      // differ by one layer at most.
      std::string layout;
      for (int c = 0; c < V; ++c)
        for (int i = 0; i < pp; ++i)
          layout += (c == 0 && i == 0 ? "E" : "|") + std::string("t*") + num(len[i] / V + (c < len[i] % V ? 1 : 0)) +
                    (c == V - 1 && i == pp - 1 ? "L" : "");
      add({"--pipeline-model-parallel-layout", layout});
    } else if (!even) {
      // first_last (check_plan): the stages between the first and the last share one count.
      if (pp == 2 || len[0] != len[1]) add({"--decoder-first-pipeline-num-layers", num(len[0])});
      if (pp > 2 && len[pp - 1] != len[1]) add({"--decoder-last-pipeline-num-layers", num(len[pp - 1])});
    }
  }
  if (interleaved) {
    if (even)
      add({"--num-layers-per-virtual-pipeline-stage", num(L / (pp * V))});
    else if (f.version < est::kMegatronLayout)
      add({"--num-virtual-stages-per-pipeline-rank", num(V)});  // the layout gives it from 0.13
    if (!stack.overlap_p2p_comm) add({"--no-overlap-p2p-communication"});
  }
  if (plan.recompute == est::Recompute::selective) add({"--recompute-granularity", "selective"});
  if (plan.recompute == est::Recompute::full)
    add({"--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"});

  // The runtime profile's switches (estimator::StackSwitches), as the plan uses them.
  if (f.version >= est::kMegatronAttentionBackend)
    add({"--transformer-impl", "transformer_engine", "--attention-backend", stack.fused_attention ? "fused" : "unfused"});
  else if (stack.fused_attention)
    add({"--transformer-impl", "transformer_engine"});
  else if (stack.tp_comm_overlap && plan.sequence_parallel && tp > 1)
    return make_error("Megatron-LM before 0.11 has unfused attention only without Transformer Engine, and overlaps TP "
                      "communication only with it: the runtime profile asks for both");
  else
    add({"--transformer-impl", "local"});
  if (stack.overlap_grad_reduce) add({"--overlap-grad-reduce"});
  if (stack.overlap_param_gather && plan.zero >= 1) add({"--overlap-param-gather"});
  if (stack.tp_comm_overlap && plan.sequence_parallel && tp > 1) add({"--tp-comm-overlap"});
  if (stack.master_param_remainders && m.dtype == est::Dtype::bf16) add({"--use-precision-aware-optimizer"});

  // The model, as the catalogue has it (the tokenizer stays the user's).
  add({"--hidden-size", num(m.hidden), "--num-attention-heads", num(m.heads), "--ffn-hidden-size", num(m.ffn_hidden),
       "--seq-length", num(m.seq_len), "--max-position-embeddings", num(m.seq_len)});
  const int groups = m.kv_heads ? m.kv_heads : m.heads;
  if (groups != m.heads) add({"--group-query-attention", "--num-query-groups", num(groups)});
  if (m.swiglu) add({"--swiglu"});
  add({"--position-embedding-type", m.rope ? "rope" : "learned_absolute"});
  if (m.dtype == est::Dtype::fp16) add({"--fp16"});
  if (m.dtype == est::Dtype::bf16) add({"--bf16"});
  add({"--hidden-dropout", util::fmt(m.dropout), "--attention-dropout", util::fmt(m.dropout)});
  add({"--optimizer", m.optimizer == est::Optimizer::sgd ? "sgd" : "adam"});
  if (m.family == est::Family::moe) {
    const int ep = plan.expert_parallel ? std::gcd(m.experts, dp) : 1;
    add({"--num-experts", num(m.experts), "--moe-router-topk", num(m.top_k), "--expert-model-parallel-size", num(ep),
         "--disable-bias-linear"});
    if (m.expert_every > 1) add({"--moe-layer-freq", num(m.expert_every)});
    // crius's cost model sends the tokens to their experts with all-to-all.
    if (ep > 1) add({"--moe-token-dispatcher-type", "alltoall"});
  }
  return a;
}

Result<void> check_command(const std::vector<std::string>& command, const std::vector<std::string>& args) {
  // torchtitan's parser (tyro) takes a flag's '_' as '-' too.
  auto same = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (a[k] != b[k] && !((a[k] == '_' || a[k] == '-') && (b[k] == '_' || b[k] == '-'))) return false;
    return true;
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    const bool has_value = i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0;
    if (!has_value) continue;
    const std::string& want = args[++i];
    for (std::size_t j = 0; j < command.size(); ++j) {
      std::string given;
      const std::string_view c = command[j];
      if (same(c, flag) && j + 1 < command.size()) given = command[j + 1];
      else if (c.size() > flag.size() && c[flag.size()] == '=' && same(c.substr(0, flag.size()), flag))
        given = command[j].substr(flag.size() + 1);
      else continue;
      if (given != want)
        return make_error("the command gives " + flag + " " + util::printable(given, 60) + ", the plan " + want +
                          " (drop it from the command: crius hands the plan's over)");
    }
  }
  return {};
}

}  // namespace crius::launcher
