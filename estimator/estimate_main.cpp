// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-estimate: rank the Cells of a cluster for one training job, or
// estimate one allocation.  See crius-estimate(1).
#include <cstdio>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "common/util.h"
#include "estimator/estimator.h"

namespace est = crius::estimator;

namespace {

constexpr const char* kProg = "crius-estimate";

int fail(int code, const std::string& msg) {
  std::cerr << kProg << ": " << msg << "\n";
  return code;
}

std::string fmt_time(double s) {
  char buf[64];
  if (s >= 100) std::snprintf(buf, sizeof buf, "%.1f", s);
  else if (s >= 1) std::snprintf(buf, sizeof buf, "%.3f", s);
  else std::snprintf(buf, sizeof buf, "%.4f", s);
  return buf;
}

std::string plan_summary(const est::Estimate& e) {
  const auto& p = e.plan;
  std::ostringstream ss;
  const auto& s0 = p.stages.front();
  ss << "tp=" << s0.tp << (s0.cp > 1 ? " cp=" + std::to_string(s0.cp) : "") << " dp=" << s0.dp << " mbs=" << p.micro_batch_size << " mb=" << p.micro_batches << " "
     << est::to_string(p.schedule) << " rc=" << est::to_string(p.recompute) << (p.sequence_parallel ? " sp" : "")
     << (p.zero ? " zero" + std::to_string(p.zero) : "") << (p.expert_parallel ? "" : " ep_off");
  return ss.str();
}

std::string layer_ranges(const est::Plan& p) {
  std::ostringstream ss;
  for (size_t i = 0; i < p.stages.size(); ++i)
    ss << (i ? " " : "") << p.stages[i].layer_begin << "-" << p.stages[i].layer_end - 1;
  return ss.str();
}

// `total`: the Cells ranked, of which `v` holds the best.
void print_table(const std::vector<est::Estimate>& v, size_t top, size_t total) {
  std::printf("%-4s %-12s %-10s %5s %7s %6s %10s %10s %8s  %s\n", "rank", "partition", "gpu", "nodes", "gpus/n", "stages",
              "iter_s", "samples/s", "mem_gib", "plan");
  size_t n = 0;
  for (const auto& e : v) {
    if (n >= top) break;
    ++n;
    if (e.feasible)
      std::printf("%-4zu %-12s %-10s %5d %7d %6d %10s %10s %8s  %s\n", n, e.cell.partition.c_str(), e.cell.gpu.c_str(),
                  e.cell.nodes, e.cell.gpus_per_node, e.cell.stages, fmt_time(e.iter_time_s).c_str(),
                  crius::util::fixed(e.samples_per_s, 2).c_str(), crius::util::fixed(e.memory_gib, 1).c_str(), plan_summary(e).c_str());
    else
      std::printf("%-4zu %-12s %-10s %5d %7d %6d %10s %10s %8s  infeasible: %s\n", n, e.cell.partition.c_str(),
                  e.cell.gpu.c_str(), e.cell.nodes, e.cell.gpus_per_node, e.cell.stages, "-", "-", "-", e.why.c_str());
  }
  if (total > n) std::printf("(%zu more Cells; use --top to show them)\n", total - n);
}

// What the framework's rule removed (crius-estimate(1), --explain): the fastest plan of the best
// Cell and the best Cell over all, searched again as for crius-train, which runs any plan.
void print_framework_rule(const est::Estimate& e, const est::Request& req, const est::Cluster& cluster,
                          const est::CellFilter& f) {
  const std::string name = est::to_string(req.framework);
  if (req.framework.kind == est::Framework::Kind::crius_train) return;  // no rule
  est::Request any = req;
  any.framework = est::Framework{};
  const est::Estimate u = est::estimate_cell(any, e.cell, cluster);
  if (u.feasible && u.iter_time_s < e.iter_time_s * (1 - 1e-9)) {
    auto why = est::check_plan(req.framework, req.model, u.plan);
    std::printf("framework %s: its rule removed a faster plan of this Cell, %s s (+%.1f%% for the plan it can run): %s\n",
                name.c_str(), fmt_time(u.iter_time_s).c_str(), 100 * (e.iter_time_s / u.iter_time_s - 1),
                (why ? "layers per stage " + layer_ranges(u.plan) + ", which it can run; the search for its splits missed it"
                     : why.error())
                    .c_str());
  } else {
    std::printf("framework %s: its rule removed no faster plan of this Cell\n", name.c_str());
  }
  est::SearchOptions o;
  o.top = 1;
  const std::vector<est::Estimate> best = est::rank_cells(any, cluster, f, o);
  if (!best.empty() && best.front().feasible && !(best.front().cell == e.cell) &&
      best.front().iter_time_s < e.iter_time_s * (1 - 1e-9)) {
    const est::Estimate& b = best.front();
    auto why = est::check_plan(req.framework, req.model, b.plan);
    std::printf("  without the rule the best Cell would be %s %d x %d GPUs, %d stages, %s s: %s\n", b.cell.gpu.c_str(),
                b.cell.nodes, b.cell.gpus_per_node, b.cell.stages, fmt_time(b.iter_time_s).c_str(),
                (why ? std::string("a plan the framework can run, not found under its rule") : why.error()).c_str());
  }
}

void print_explain(const est::Estimate& e, const est::Request& req, const est::Cluster& cluster) {
  const auto& b = e.breakdown;
  const double t = e.iter_time_s;
  auto line = [&](const char* name, double v) {
    std::printf("  %-10s %10s s  %5.1f%%\n", name, fmt_time(v).c_str(), t > 0 ? 100 * v / t : 0.0);
  };
  std::printf("\nbest plan: %s %d x %d GPUs, %d stages (partition %s)\n", e.cell.gpu.c_str(), e.cell.nodes,
              e.cell.gpus_per_node, e.cell.stages, e.cell.partition.c_str());
  std::printf("  %s, layers per stage: %s\n", plan_summary(e).c_str(), layer_ranges(e.plan).c_str());
  if (const est::GpuType* g = cluster.gpus.find(e.cell.gpu)) {
    const est::ConstantSources s = est::constant_sources(cluster.gpus, *g);
    const bool half = req.model.dtype == est::Dtype::fp16 || req.model.dtype == est::Dtype::bf16;
    std::printf("GPU constants of %s (crius.toml(5), GPU CATALOGUE): %s GEMM efficiency %s, memory efficiency %s\n",
                g->id.c_str(), half ? "tensor-core" : "fp32", est::describe(half ? s.gemm : s.fp32).c_str(),
                est::describe(s.memory).c_str());
  }
  const est::StackSwitches st = cluster.gpus.runtime(req.runtime).stack;
  std::vector<std::string> on, off;
  for (const auto& [name, field] : est::StackSwitches::kSwitches) (st.*field ? on : off).push_back(name);
  std::printf("runtime profile %s (crius-estimate(1), RUNTIME PROFILES): on: %s; off: %s\n",
              std::string(est::to_string(req.runtime)).c_str(), on.empty() ? "none" : crius::util::join(on, ", ").c_str(),
              off.empty() ? "none" : crius::util::join(off, ", ").c_str());
  std::printf("time per iteration (global batch %d; communication: what the stack does not hide):\n", req.global_batch);
  line("compute", b.compute);
  line("tp_comm", b.tp_comm);
  line("moe_comm", b.moe_comm);
  line("cp_comm", b.cp_comm);
  line("pp_comm", b.pp_comm);
  line("bubble", b.bubble);
  line("dp_comm", b.dp_comm);
  line("optimizer", b.optimizer);
  std::printf("  %-10s %10s s\n", "total", fmt_time(t).c_str());
  const double tflops = e.flops_per_iter / t / e.cell.gpus() / 1e12;
  std::printf("  model FLOPs %.4g per iteration, %.1f TFLOP/s per GPU\n", e.flops_per_iter, tflops);
  const auto& m = e.memory;
  std::printf("memory per GPU, most loaded stage (GiB):\n");
  std::printf("  %-12s %8s\n", "params", crius::util::fixed(m.params, 2).c_str());
  std::printf("  %-12s %8s\n", "grads", crius::util::fixed(m.grads, 2).c_str());
  std::printf("  %-12s %8s\n", "optimizer", crius::util::fixed(m.optimizer, 2).c_str());
  std::printf("  %-12s %8s\n", "activations", crius::util::fixed(m.activations, 2).c_str());
  std::printf("  %-12s %8s\n", "workspace", crius::util::fixed(m.workspace, 2).c_str());
  std::printf("  %-12s %8s of %s\n", "total", crius::util::fixed(m.total(), 2).c_str(), crius::util::fixed(e.gpu_memory_gib, 2).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Estimate the Cells of a cluster for one training job (crius-estimate(1))", kProg};
  std::string model_arg, cluster_path = est::default_cluster_file(CRIUS_SLURM_SYSCONFDIR), gpu, partition, runtime;
  int global_batch = 0;
  std::optional<int> nodes, gpn, stages, tp, cp, dp, mbs, mb, zero;
  std::string schedule, recompute, seqpar, exppar, framework;
  std::size_t top = 0;
  bool explain = false, json = false;
  app.add_option("--model", model_arg, "model id from the catalogue, or a model TOML file")->required();
  app.add_option("--global-batch", global_batch, "samples per optimizer step")->required();
  app.add_option("--cluster", cluster_path, "cluster file (default " + cluster_path + ")");
  app.add_option("--partition", partition, "only Cells of this partition");
  app.add_option("--gpu", gpu, "only Cells of this GPU type");
  app.add_option("--nodes", nodes, "only Cells with N nodes");
  app.add_option("--gpus-per-node", gpn, "only Cells with G GPUs per node");
  app.add_option("--stages", stages, "only Cells with S pipeline stages");
  app.add_option("--runtime", runtime, "runtime profile: megatron, megatron-core or alpa (default: the framework's, crius(7) FRAMEWORKS)");
  app.add_option("--framework", framework,
                 "what runs the plan: crius-train, megatron[:MAJOR.MINOR] or torchtitan[:MAJOR.MINOR] (default: the cluster file's)");
  app.add_option("--tp", tp, "pin the tensor-parallel degree");
  app.add_option("--cp", cp, "pin the context-parallel size (ranks sharing each sequence)");
  app.add_option("--dp", dp, "pin the data-parallel degree");
  app.add_option("--micro-batch-size", mbs, "pin the micro-batch size");
  app.add_option("--micro-batches", mb, "pin the number of micro-batches");
  app.add_option("--schedule", schedule, "pin the schedule: gpipe, 1f1b or interleaved:V");
  app.add_option("--recompute", recompute, "pin recomputation: none, selective or full");
  app.add_option("--sequence-parallel", seqpar, "pin sequence parallelism: on or off");
  app.add_option("--zero", zero, "pin ZeRO stage: 0, 1, 2 or 3");
  app.add_option("--expert-parallel", exppar, "pin expert parallelism of a MoE model: on or off");
  app.add_option("--top", top, "show the K best Cells (table default 10; --json default all)");
  app.add_flag("--explain", explain, "show the time and memory breakdown of the best plan");
  app.add_flag("--json", json, "print {\"cells\": [...]} as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << kProg << ": " << e.what() << "\n";
    return 2;
  }
  try {
    est::Request req;
    req.global_batch = global_batch;
    std::optional<est::Runtime> runtime_pin;
    if (!runtime.empty()) {
      auto rt = est::parse_runtime(runtime);
      if (!rt) return fail(2, "--runtime: " + rt.error());
      runtime_pin = *rt;
    }
    est::Pins& p = req.pins;
    p.tp = tp, p.cp = cp, p.dp = dp, p.micro_batch_size = mbs, p.micro_batches = mb, p.zero = zero;
    if (!schedule.empty()) {
      auto s = est::parse_schedule(schedule);
      if (!s) return fail(2, "--schedule: " + s.error());
      p.schedule = *s;
    }
    if (!recompute.empty()) {
      auto r = est::parse_recompute(recompute);
      if (!r) return fail(2, "--recompute: " + r.error());
      p.recompute = *r;
    }
    if (!seqpar.empty()) {
      if (seqpar == "on") p.sequence_parallel = true;
      else if (seqpar == "off") p.sequence_parallel = false;
      else return fail(2, "--sequence-parallel: expected on or off, got '" + seqpar + "'");
    }
    if (!exppar.empty()) {
      if (exppar == "on") p.expert_parallel = true;
      else if (exppar == "off") p.expert_parallel = false;
      else return fail(2, "--expert-parallel: expected on or off, got '" + exppar + "'");
    }
    for (auto [v, name] : {std::pair{nodes, "--nodes"}, {gpn, "--gpus-per-node"}, {stages, "--stages"}})
      if (v && *v < 1) return fail(2, std::string(name) + " must be >= 1 (got " + std::to_string(*v) + ")");

    auto cluster = est::load_cluster(cluster_path);
    if (!cluster) return fail(2, cluster.error());
    auto model = cluster->models.resolve(model_arg);
    if (!model) return fail(2, "--model: " + model.error());
    req.model = std::move(*model);
    req.framework = cluster->framework;
    if (!framework.empty()) {
      auto fw = est::parse_framework(framework);
      if (!fw) return fail(2, "--framework: " + fw.error());
      req.framework = *fw;
    }
    req.runtime = runtime_pin.value_or(est::default_runtime(req.framework));
    if (auto v = est::validate_request(req); !v) return fail(2, v.error());

    est::CellFilter f;
    if (!partition.empty()) {
      if (!cluster->find_partition(partition)) {
        std::string names;
        for (const auto& q : cluster->partitions) names += (names.empty() ? "" : ", ") + q.name;
        return fail(2, "--partition: no partition '" + partition + "' in " + cluster_path + " (partitions: " + names + ")");
      }
      f.partition = partition;
    }
    if (!gpu.empty()) {
      if (!cluster->gpus.find(gpu)) {
        auto cm = cluster->gpus.close_matches(gpu);
        std::string s;
        for (const auto& c : cm) s += (s.empty() ? "" : ", ") + c;
        return fail(2, "--gpu: unknown GPU type '" + gpu + "' in " + cluster->gpus.source() +
                           (s.empty() ? "" : " (close matches: " + s + ")"));
      }
      bool any = false;
      for (const auto& q : cluster->partitions) any = any || q.gpu == gpu;
      if (!any) return fail(1, "--gpu: no partition of " + cluster_path + " has GPU type '" + gpu + "'");
      f.gpu = gpu;
    }
    f.nodes = nodes, f.gpus_per_node = gpn, f.stages = stages;

    // Only the Cells shown are searched to the end (all of them for --json without --top).
    est::SearchOptions opts;
    if (!json || top) opts.top = top ? top : 10;
    std::vector<est::Estimate> ranked = est::rank_cells(req, *cluster, f, opts);
    const size_t total = std::max(ranked.size(), est::usable_cells(req, *cluster, f).size());
    if (ranked.empty()) {
      std::string what = "no Cell of " + cluster_path + " matches";
      if (nodes) what += " --nodes " + std::to_string(*nodes);
      if (gpn) what += " --gpus-per-node " + std::to_string(*gpn);
      if (stages) what += " --stages " + std::to_string(*stages);
      if (!gpu.empty()) what += " --gpu " + gpu;
      if (stages) what += " (stages must divide the GPU count and not exceed the model's layers)";
      return fail(1, what);
    }
    const bool any_feasible = ranked.front().feasible;
    if (json) {
      nlohmann::json out;
      out["model"] = req.model.id;
      out["global_batch"] = req.global_batch;
      out["runtime"] = std::string(est::to_string(req.runtime));
      out["cells"] = nlohmann::json::array();
      size_t n = 0;
      for (const auto& e : ranked) {
        if (top && n >= top) break;
        out["cells"].push_back(est::to_json(e));
        ++n;
      }
      std::cout << out.dump(2) << "\n";
    } else {
      print_table(ranked, top ? top : 10, total);
      if (explain && any_feasible) {
        print_explain(ranked.front(), req, *cluster);
        print_framework_rule(ranked.front(), req, *cluster, f);
      }
    }
    if (!any_feasible) {
      // Name the reason of the largest Cell: the one closest to fitting.
      const est::Estimate* biggest = &ranked.front();
      for (const auto& e : ranked)
        if (e.cell.gpus() > biggest->cell.gpus()) biggest = &e;
      return fail(1, "no Cell can hold " + req.model.id + " with global batch " + std::to_string(req.global_batch) +
                         ": largest Cell (" + biggest->cell.gpu + " " + std::to_string(biggest->cell.nodes) + "x" +
                         std::to_string(biggest->cell.gpus_per_node) + ", " + std::to_string(biggest->cell.stages) +
                         " stages): " + biggest->why);
    }
    return 0;
  } catch (const std::exception& e) {
    return fail(1, std::string("internal error: ") + e.what());
  }
}
