// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher/train/predict.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace crius::launcher::train {

namespace {

namespace est = crius::estimator;

// Seconds per call of `f`, repeated until `min_s` has passed (at least once).
template <typename F>
double time_per_call(F&& f, double min_s) {
  int calls = 0;
  const double t0 = MPI_Wtime();
  double t = t0;
  do {
    f();
    ++calls;
    t = MPI_Wtime();
  } while (t - t0 < min_s);
  return (t - t0) / calls;
}

template <typename T>
MachineProfile measure(Backend& be, const ModelConfig& mc, int rows, int tp, MPI_Comm world) {
  MachineProfile p;
  int n = 1, local = 1;
  MPI_Comm_size(world, &n);
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &local);
  MPI_Comm_free(&node);
  int lo = local, hi = local;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, world);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, world);
  // Uneven nodes: describe the job as one node (the estimator needs equal nodes).
  p.ranks_per_node = lo == hi ? lo : n;
  p.nodes = n / p.ranks_per_node;
  const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  p.memory_gib = phys / (1024.0 * 1024 * 1024) / p.ranks_per_node;

  // The GEMMs of one layer's forward and backward as the trainer runs them
  // (Q, K, V, attention-out and the two MLP matrices; NN forward, NT input
  // gradient, TN weight gradient), timed as a set.
  const int m = std::max(1, rows), h = mc.hidden, t = std::max(1, tp), hl = std::max(1, h / t),
            fl = std::max(1, mc.ffn / t);
  struct Shape {
    bool ta, tb;
    int m, n, k;
  };
  std::vector<Shape> shapes;
  for (auto [out, in] : {std::pair{hl, h}, {hl, h}, {hl, h}, {h, hl}, {fl, h}, {h, fl}})
    shapes.insert(shapes.end(), {{false, false, m, out, in}, {false, true, m, in, out}, {true, false, in, out, m}});
  size_t big = 0;
  double flops = 0;
  for (const auto& g : shapes) {
    big = std::max({big, static_cast<size_t>(g.m) * g.k, static_cast<size_t>(g.k) * g.n, static_cast<size_t>(g.m) * g.n});
    flops += 2.0 * g.m * g.n * g.k;
  }
  std::vector<T> a(big, T(0.5)), b(big, T(0.25)), c(big, T(0));
  MPI_Barrier(world);
  // The median of five windows: one window can fall where a rank sharing the core is busy
  // or idle, or the machine is briefly slower.
  std::vector<double> windows;
  for (int w = 0; w < 5; ++w)
    windows.push_back(time_per_call(
        [&] {
          for (const auto& g : shapes) be.gemm(g.ta, g.tb, g.m, g.n, g.k, a.data(), b.data(), T(0), c.data());
        },
        0.03));
  std::nth_element(windows.begin(), windows.begin() + 2, windows.end());
  const double secs = windows[2];
  p.gemm_gflops = mean_over(world, flops / secs / 1e9);

  // Streaming triad over buffers larger than the caches.
  const size_t len = (32u << 20) / sizeof(T);
  std::vector<T> x(len, T(1)), y(len, T(2)), z(len, T(0));
  MPI_Barrier(world);
  const double triad = time_per_call(
      [&] {
        for (size_t i = 0; i < len; ++i) z[i] = x[i] + T(0.5) * y[i];
      },
      0.02);
  p.memory_gbs = mean_over(world, 3.0 * len * sizeof(T) / triad / 1e9);

  if (n > 1) {
    const MPI_Datatype type = sizeof(T) == 8 ? MPI_DOUBLE : MPI_FLOAT;
    std::vector<T> buf((4u << 20) / sizeof(T), T(1));
    // Fixed call counts: every rank must make the same collective calls.
    auto per_call = [&](int count, int calls) {
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), count, type, MPI_SUM, world);  // warm-up
      MPI_Barrier(world);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < calls; ++i) MPI_Allreduce(MPI_IN_PLACE, buf.data(), count, type, MPI_SUM, world);
      double t = (MPI_Wtime() - t0) / calls;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, world);
      return t;
    };
    const double big = per_call(static_cast<int>(buf.size()), 4), tiny = per_call(1, 20);
    p.allreduce_gbs = 2.0 * (n - 1) / n * buf.size() * sizeof(T) / big / 1e9;
    p.latency_us = tiny * 1e6;
  } else {
    p.allreduce_gbs = p.memory_gbs;
  }
  return p;
}

}  // namespace

MachineProfile measure_profile(Backend& backend, const std::string& dtype, const ModelConfig& model, int rows, int tp,
                               MPI_Comm world) {
  return dtype == "fp32" ? measure<float>(backend, model, rows, tp, world)
                         : measure<double>(backend, model, rows, tp, world);
}

namespace {

// The measured rates are what this machine reaches: no efficiency on top.
est::CostConstants measured_constants() {
  est::CostConstants c;
  c.gemm_efficiency = c.fp32_efficiency = c.memory_efficiency = c.comm_efficiency = 1.0;
  c.attention_efficiency = 1.0;
  c.gemm_half_gflop = 0;
  c.workspace_gib = 0;
  c.memory_usable = 1.0;
  return c;
}

Result<est::Estimate> estimate_with(const MachineProfile& prof, const ModelConfig& mc, const std::string& dtype,
                                    const Plan& plan, int samples, const est::CostConstants& c,
                                    std::shared_ptr<const est::CommTable> comm);

}  // namespace

Result<est::Estimate> predict(const MachineProfile& prof, const ModelConfig& mc, const std::string& dtype,
                              const Plan& plan, int samples, const Calibration* cal) {
  est::CostConstants c = measured_constants();
  MachineProfile rates = prof;
  if (cal) {
    c.attention_efficiency = cal->attention_efficiency;
    c.memory_efficiency = cal->memory_efficiency;
    if (cal->memory_gbs > 0) rates.memory_gbs = cal->memory_gbs;
  }
  return estimate_with(rates, mc, dtype, plan, samples, c, cal ? cal->comm : nullptr);
}

Result<StepFit> fit_step(const MachineProfile& prof, const ModelConfig& mc, const std::string& dtype, const Plan& plan,
                         int samples, const StepSplit& split) {
  // The estimator's one-rank step is G/r + A/(r ae) + M/me for GEMM rate r: G, A and M
  // come from three evaluations at the profile's rate.
  auto cost = [&](double ae, double me) -> Result<double> {
    est::CostConstants c = measured_constants();
    c.attention_efficiency = ae;
    c.memory_efficiency = me;
    auto e = estimate_with(prof, mc, dtype, plan, samples, c, nullptr);
    if (!e) return make_error(e.error());
    return e->iter_time_s;
  };
  auto base = cost(1, 1), half_attention = cost(0.5, 1), half_memory = cost(1, 0.5);
  if (!base) return make_error(base.error());
  if (!half_attention || !half_memory) return make_error("the estimator did not cost the step");
  const double A = *half_attention - *base, M = *half_memory - *base, G = *base - A - M;
  const double rest = split.total_s - split.gemm_s - split.attention_s;
  if (!(G > 0 && A > 0 && M > 0 && split.gemm_s > 0 && split.attention_s > 0 && rest > 0))
    return make_error("cannot fit: estimated GEMM/attention/other " + std::to_string(G) + "/" + std::to_string(A) +
                      "/" + std::to_string(M) + " s, measured " + std::to_string(split.gemm_s) + "/" +
                      std::to_string(split.attention_s) + "/" + std::to_string(rest) + " s");
  StepFit f;
  const double scale = G / split.gemm_s;  // the measured GEMM rate over the profile's
  f.gemm_gflops = prof.gemm_gflops * scale;
  f.attention_efficiency = std::min(10.0, A / scale / split.attention_s);
  f.memory_efficiency = std::min(1.0, M / rest);
  f.estimated_before_s = *base;
  return f;
}

double mean_over(MPI_Comm world, double v) {
  int n = 1;
  MPI_Comm_size(world, &n);
  double sum = 0;
  MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, world);
  return sum / n;
}

std::string calibration_table_path(const std::string& toml_path) {
  std::string csv = toml_path;
  if (csv.size() > 5 && csv.compare(csv.size() - 5, 5, ".toml") == 0) csv.replace(csv.size() - 5, 5, ".csv");
  else csv += ".csv";
  return csv;
}

Result<Calibration> load_calibration(const std::string& path) {
  auto cat = est::GpuCatalog::load(path);
  if (!cat) return make_error(cat.error());
  if (cat->types().size() != 1) return make_error(path + ": a calibration holds exactly one [gpu.<id>] table");
  const est::GpuType& g = cat->types().front();
  Calibration c;
  c.source = path;
  if (g.attention_efficiency > 0) c.attention_efficiency = g.attention_efficiency;
  if (g.memory_efficiency > 0) c.memory_efficiency = g.memory_efficiency;
  c.memory_gbs = g.memory_bw_gbs;
  const std::string csv = calibration_table_path(path);
  if (access(csv.c_str(), F_OK) == 0) {
    auto t = est::CommTable::load(csv);
    if (!t) return make_error(t.error());
    c.comm = std::make_shared<const est::CommTable>(std::move(*t));
  }
  return c;
}

namespace {

Result<est::Estimate> estimate_with(const MachineProfile& prof, const ModelConfig& mc, const std::string& dtype,
                                    const Plan& plan, int samples, const est::CostConstants& c,
                                    std::shared_ptr<const est::CommTable> comm) {
  if (!plan.uniform()) return make_error("the estimator costs stages of one shape; this plan's stages differ");
  const int S = plan.pp(), dp = plan.stages[0].dp;
  if (samples % dp != 0)
    return make_error(std::to_string(samples) + " samples per micro-batch do not divide over " + std::to_string(dp) +
                      " DP replicas");
  char gpus[512];
  std::snprintf(gpus, sizeof gpus,
                "[gpu.cpu]\nname = \"this machine, as measured by crius-train\"\nmemory_gib = %.6g\n"
                "memory_bw_gbs = %.6g\ntflops = { fp16 = %.6g, fp32 = %.6g, fp64 = %.6g }\n",
                prof.memory_gib, prof.memory_gbs, prof.gemm_gflops / 1e3, prof.gemm_gflops / 1e3,
                prof.gemm_gflops / 1e3);
  auto catalog = est::GpuCatalog::parse(gpus, "crius-train's measured profile");
  if (!catalog) return make_error(catalog.error());
  est::Cluster cluster;
  cluster.gpus = std::move(*catalog);
  est::Partition part;
  part.name = part.gpu = "cpu";
  part.nodes = prof.nodes;
  part.gpus_per_node = prof.ranks_per_node;
  part.intra_node_bw_gbs = prof.allreduce_gbs;
  part.inter_node_bw_gbs = prof.allreduce_gbs;
  part.inter_node_latency_us = prof.latency_us;
  part.comm = std::move(comm);
  cluster.partitions.push_back(part);

  est::Request req;
  req.model.id = "crius-train";
  req.model.family = est::Family::transformer;
  req.model.dtype = dtype == "fp32" ? est::Dtype::fp32 : est::Dtype::fp64;
  req.model.optimizer = est::Optimizer::sgd;
  req.model.layers = plan.has_layers() ? plan.num_layers() : mc.layers;
  req.model.hidden = mc.hidden;
  req.model.heads = mc.heads;
  req.model.ffn_hidden = mc.ffn;
  req.model.seq_len = mc.seq;
  req.model.vocab = mc.vocab;
  req.global_batch = samples * plan.micro_batches;
  req.runtime = est::Runtime::megatron;

  // The plan as crius-train runs it: layers split evenly where the plan names none, a
  // micro-batch of `samples` over the DP replicas, no recompute, SP or ZeRO.
  est::Plan p = plan;
  if (!p.has_layers())
    for (int s = 0; s < S; ++s) {
      p.stages[static_cast<size_t>(s)].layer_begin = req.model.layers * s / S;
      p.stages[static_cast<size_t>(s)].layer_end = req.model.layers * (s + 1) / S;
    }
  p.micro_batch_size = samples / dp;
  p.recompute = est::Recompute::none;
  p.sequence_parallel = false;
  p.zero = 0;
  p.runtime = est::Runtime::megatron;

  est::SearchOptions opts;
  opts.constants = c;
  est::Cell cell{"cpu", "cpu", prof.nodes, prof.ranks_per_node, S};
  est::Estimate e = est::estimate_plan(req, cell, p, cluster, opts);
  if (!e.feasible) return make_error(e.why);
  return e;
}

}  // namespace

}  // namespace crius::launcher::train
