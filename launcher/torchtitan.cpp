// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// torchtitan's flags for a plan (torchtitan.h). Flag names are those of torchtitan 0.1's
// torchtitan/config_manager.py and 0.2's torchtitan/config/job_config.py (crius(7), FRAMEWORKS).
#include "launcher/torchtitan.h"

namespace crius::launcher {

namespace est = crius::estimator;

Result<std::vector<std::string>> torchtitan_args(const est::Plan& plan, const est::Model& m, const est::StackSwitches& stack,
                                                 const est::Framework& f) {
  if (f.kind != est::Framework::Kind::torchtitan) return make_error("framework " + est::to_string(f) + " is not torchtitan");
  if (auto ok = est::check_plan(f, m, plan, &stack); !ok) return make_error(ok.error());
  return torchtitan_flags_unchecked(plan, m, stack, f);
}

std::vector<std::string> torchtitan_flags_unchecked(const est::Plan& plan, const est::Model& m,
                                                    const est::StackSwitches& stack, const est::Framework& f) {
  const int tp = plan.stages[0].tp, dp = plan.stages[0].dp, pp = plan.pp();
  const long long mbs = plan.micro_batch_size, mb = plan.micro_batches;
  std::vector<std::string> a;
  auto add = [&](std::initializer_list<std::string> xs) { a.insert(a.end(), xs); };
  auto num = [](long long v) { return std::to_string(v); };

  add({"--model.name", "llama3", "--model.flavor", est::torchtitan_flavor(m), "--training.seq_len", num(m.seq_len),
       "--training.mixed_precision_param", m.dtype == est::Dtype::bf16 ? "bfloat16" : "float32", "--optimizer.name", "AdamW"});
  // The batch: with a pipeline one local batch of micro-batches per step; without, torchtitan
  // accumulates global / (local x DP) local batches of one micro-batch each.
  add({"--training.local_batch_size", num(pp > 1 ? mbs * mb : mbs), "--training.global_batch_size", num(mbs * mb * dp)});

  // Data parallelism: DDP (replicate) alone at ZeRO-0, else FSDP that keeps the gathered
  // parameters until the step ends, as ZeRO-1 does, or reshards them after each forward (ZeRO-3).
  const bool ddp = dp > 1 && plan.zero == 0;
  add({"--parallelism.data_parallel_replicate_degree", num(ddp ? dp : 1), "--parallelism.data_parallel_shard_degree",
       num(ddp ? 1 : dp)});
  if (dp > 1 && !ddp) add({"--parallelism.fsdp_reshard_after_forward", plan.zero == 3 ? "always" : "never"});
  add({"--parallelism.tensor_parallel_degree", num(tp), "--parallelism.pipeline_parallel_degree", num(pp)});
  if (stack.tp_comm_overlap && tp > 1)
    add({"--parallelism.enable_async_tensor_parallel", f.version >= est::kTorchtitanModuleFqns ? "--compile.enable" : "--training.compile"});

  if (pp > 1) {
    const bool interleaved = plan.schedule.kind == est::Schedule::Kind::interleaved;
    add({"--parallelism.pipeline_parallel_schedule",
         interleaved ? "Interleaved1F1B" : plan.schedule.kind == est::Schedule::Kind::gpipe ? "GPipe" : "1F1B",
         "--parallelism.pipeline_parallel_microbatch_size", num(mbs)});
    // Each (virtual) stage's first layer: stage i of pp x v holds rank i % pp's chunk i / pp.
    std::vector<int> begins;
    if (interleaved) {
      const int stages = pp * plan.schedule.virtual_stages, per = m.layers / stages;
      for (int i = 0; i < stages; ++i) begins.push_back(i * per);
    } else {
      for (const auto& s : plan.stages) begins.push_back(s.layer_begin);
    }
    begins.push_back(m.layers);
    if (f.version >= est::kTorchtitanModuleFqns) {
      // One argument per stage: its modules, the embedding first and the norm and output last.
      add({"--parallelism.module_fqns_per_model_part"});
      for (std::size_t i = 0; i + 1 < begins.size(); ++i) {
        std::string part = i == 0 ? "tok_embeddings" : "";
        for (int l = begins[i]; l < begins[i + 1]; ++l) part += (part.empty() ? "" : ",") + ("layers." + num(l));
        if (i + 2 == begins.size()) part += ",norm,output";
        a.push_back(part);
      }
    } else {
      std::string points;
      for (std::size_t i = 1; i + 1 < begins.size(); ++i) points += (points.empty() ? "" : ",") + ("layers." + num(begins[i]));
      add({"--parallelism.pipeline_parallel_split_points", points});
    }
  }

  // Full: every transformer block recomputed in the backward (check_plan refuses selective).
  add({"--activation_checkpoint.mode", plan.recompute == est::Recompute::full        ? "full"
                                       : plan.recompute == est::Recompute::selective ? "selective"
                                                                                     : "none"});
  return a;
}

}  // namespace crius::launcher
