// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "job/env.h"

#include "common/util.h"

namespace crius::job {

namespace est = crius::estimator;

std::string_view to_string(Writer w) {
  switch (w) {
    case Writer::job_submit: return "job_submit";
    case Writer::crius_launch: return "crius-launch";
    case Writer::resumed: return "crius-launch (a moved job)";
    case Writer::internal: return "internal";
    case Writer::site: return "site";
  }
  return "?";
}

const std::vector<EnvVar>& env_vars() {
  using W = Writer;
  // Plan variables (plan_env) are written by job_submit and again by crius-launch for
  // every rank: they are listed once, under job_submit, and the contract test checks
  // that crius-launch writes every one of them too.
  static const std::vector<EnvVar> vars = {
      {"CRIUS_MODEL", W::job_submit, "the model: a catalogue id, or the model file's path as given"},
      {"CRIUS_GLOBAL_BATCH", W::job_submit, "samples per optimizer step"},
      {"CRIUS_RUNTIME", W::job_submit, "runtime profile: megatron, megatron-core or alpa"},
      {"CRIUS_ITERS", W::job_submit, "iterations to run (only with --crius-iters)"},
      {"CRIUS_CHECKPOINT_SIGNAL", W::job_submit,
       "the signal the program saves on (USR1, TERM, ..., none): --crius-checkpoint-signal, else the framework's"},
      {"CRIUS_CELL", W::job_submit, "the Cell, GPU:NODESxGPUS:STAGES"},
      {"CRIUS_PARTITION", W::job_submit, "the Cell's partition"},
      {"CRIUS_GPU", W::job_submit, "the Cell's GPU type"},
      {"CRIUS_NODES", W::job_submit, "the Cell's nodes"},
      {"CRIUS_GPUS_PER_NODE", W::job_submit, "the Cell's GPUs per node (crius-launch: the ranks per node it placed)"},
      {"CRIUS_EST_ITER_S", W::job_submit, "estimated seconds per iteration"},
      {"CRIUS_EST_SAMPLES_PER_S", W::job_submit, "estimated samples per second"},
      {"CRIUS_EST_MEMORY_GIB", W::job_submit, "estimated memory per GPU, GiB"},
      {"CRIUS_EST_RUN_S", W::job_submit, "estimated run time, seconds (only with --crius-iters)"},
      {"CRIUS_PLAN_JSON", W::job_submit, "the plan, as JSON (the plan codec, crius-launch(1))"},
      {"CRIUS_STAGES", W::job_submit, "pipeline stages"},
      {"CRIUS_STAGE_LAYERS", W::job_submit, "layer range of each stage, inclusive: 0-11,12-23"},
      {"CRIUS_STAGE_DP", W::job_submit, "data-parallel degree of each stage, comma-separated"},
      {"CRIUS_STAGE_TP", W::job_submit, "tensor-parallel degree of each stage, comma-separated"},
      {"CRIUS_MICRO_BATCH_SIZE", W::job_submit, "samples per micro-batch"},
      {"CRIUS_MICRO_BATCHES", W::job_submit, "micro-batches per iteration"},
      {"CRIUS_SCHEDULE", W::job_submit, "pipeline schedule: gpipe, 1f1b or interleaved:V"},
      {"CRIUS_RECOMPUTE", W::job_submit, "activation recomputation: none, selective or full"},
      {"CRIUS_SEQUENCE_PARALLEL", W::job_submit, "1 with sequence parallelism, else 0"},
      {"CRIUS_ZERO", W::job_submit, "ZeRO stage, 0 to 3"},
      {"CRIUS_FRAMEWORK", W::job_submit, "the framework the plan is made for: crius-train, megatron:MAJOR.MINOR or torchtitan:MAJOR.MINOR"},
      {"CRIUS_TP_SIZE", W::crius_launch, "this rank's stage's tensor-parallel degree"},
      {"CRIUS_TP_RANK", W::crius_launch, "this rank's index in its TP group"},
      {"CRIUS_DP_SIZE", W::crius_launch, "this rank's stage's data-parallel degree"},
      {"CRIUS_DP_RANK", W::crius_launch, "this rank's index in its DP group"},
      {"CRIUS_CP_SIZE", W::crius_launch, "this rank's stage's context-parallel size (1 without)"},
      {"CRIUS_CP_RANK", W::crius_launch, "this rank's index in its CP ring"},
      {"CRIUS_PP_RANK", W::crius_launch, "this rank's pipeline stage"},
      {"CRIUS_LAYERS", W::crius_launch, "this rank's stage's layer range, inclusive"},
      {"CRIUS_RANK_ORDER", W::crius_launch, "the rank order: tp-dp-pp, or tp-cp-dp-pp with context parallelism"},
      {"CRIUS_PLAN_HASH", W::crius_launch, "hash of the plan, equal on every rank"},
      {"CRIUS_HOST", W::crius_launch, "the node this rank runs on"},
      {"CRIUS_NODELIST", W::crius_launch, "the job's nodes, comma-separated"},
      {"CRIUS_PREV_CELL", W::resumed, "the Cell the job's checkpoint was saved in, before criusd moved it"},
      {"CRIUS_PREV_PLAN_JSON", W::resumed, "the plan the job's checkpoint was saved under, as JSON"},
      {"CRIUS_PREV_PLAN_HASH", W::resumed, "hash of that plan (CRIUS_PLAN_HASH's, to compare)"},
      {"CRIUS_LAUNCH_SPEC", W::internal, "crius-launch to its per-rank shim: plan and hosts"},
      {"CRIUS_PROGRESS_REGEX", W::internal, "crius-launch to its per-rank shim: --progress-regex"},
      {"CRIUS_MODEL_SPEC", W::internal, "spank_crius to job_submit: a model file's model as bounded scalars"},
      {"CRIUS_CONF", W::site, "path of crius.toml for the plugins, criusd and crius-lab"},
      {"CRIUS_FREE_GPUS_FILE", W::site,
       "overrides [job_submit] free_gpus_file for job_submit, criusd and --crius-explain (crius-lab sets it)"},
      {"CRIUS_MPIRUN", W::site, "the mpirun crius-launch runs"},
      {"CRIUS_PROGRESS_INTERVAL", W::site, "seconds between crius-launch's progress reports to Slurm ([launch] progress_interval_s, 1200)"},
      {"CRIUS_LAB_DIR", W::site, "a crius-lab cluster's folder (crius-lab sets it): crius-replay starts criusd only there"},
  };
  return vars;
}

std::string format_layer_ranges(const est::Plan& plan) {
  std::string out;
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& s = plan.stages[i];
    out += (i ? "," : "") + std::to_string(s.layer_begin) + "-" + std::to_string(s.layer_end - 1);
  }
  return out;
}

Env plan_env(const est::Plan& plan) {
  std::vector<std::string> dps, tps;
  for (const auto& s : plan.stages) {
    dps.push_back(std::to_string(s.dp));
    tps.push_back(std::to_string(s.tp));
  }
  Env env = {{"CRIUS_PLAN_JSON", est::plan_text(plan)},
             {"CRIUS_STAGES", std::to_string(plan.pp())},
             {"CRIUS_STAGE_DP", util::join(dps, ",")},
             {"CRIUS_STAGE_TP", util::join(tps, ",")},
             {"CRIUS_MICRO_BATCH_SIZE", std::to_string(plan.micro_batch_size)},
             {"CRIUS_MICRO_BATCHES", std::to_string(plan.micro_batches)},
             {"CRIUS_SCHEDULE", est::to_string(plan.schedule)},
             {"CRIUS_RECOMPUTE", std::string(est::to_string(plan.recompute))},
             {"CRIUS_SEQUENCE_PARALLEL", plan.sequence_parallel ? "1" : "0"},
             {"CRIUS_ZERO", std::to_string(plan.zero)},
             {"CRIUS_FRAMEWORK", est::to_string(plan.framework)}};
  if (plan.has_layers()) env.emplace_back("CRIUS_STAGE_LAYERS", format_layer_ranges(plan));
  return env;
}

Env record_env(const Record& rec) {
  const Request& q = rec.request;
  Env env = {{"CRIUS_MODEL", q.model},
             {"CRIUS_GLOBAL_BATCH", std::to_string(q.global_batch)},
             {"CRIUS_RUNTIME", std::string(est::to_string(q.runtime))},
             {"CRIUS_CELL", est::to_string(rec.cell)},
             {"CRIUS_PARTITION", rec.cell.partition},
             {"CRIUS_GPU", rec.cell.gpu},
             {"CRIUS_NODES", std::to_string(rec.cell.nodes)},
             {"CRIUS_GPUS_PER_NODE", std::to_string(rec.cell.gpus_per_node)},
             {"CRIUS_EST_ITER_S", util::fmt(rec.iter_time_s, 6)},
             {"CRIUS_EST_SAMPLES_PER_S", util::fmt(rec.samples_per_s, 6)},
             {"CRIUS_EST_MEMORY_GIB", util::fmt(rec.memory_gib, 4)}};
  if (q.iters) {
    env.emplace_back("CRIUS_ITERS", std::to_string(*q.iters));
    env.emplace_back("CRIUS_EST_RUN_S", util::fmt(rec.iter_time_s * static_cast<double>(*q.iters), 6));
  }
  for (auto& kv : plan_env(rec.plan)) env.push_back(std::move(kv));
  env.emplace_back("CRIUS_CHECKPOINT_SIGNAL",
                   checkpoint_signal_name(q.checkpoint_signal.value_or(default_checkpoint_signal(q.framework))));
  return env;
}

}  // namespace crius::job
