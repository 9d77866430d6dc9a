// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// estimator-bench: speed and accuracy figures of the estimator.
//   estimator-bench speed CLUSTER MODEL BATCH        one-Cell search and all-Cells ranking times
//   estimator-bench accuracy CLUSTER MEASURED.csv [HELDOUT.csv]
//                                                    leave-one-out error against measured iteration times;
//                                                    error on held-out ones with the constants fitted
//   estimator-bench published CLUSTER RUNS.csv [FRAMEWORK]  error against published Megatron-LM runs, plan
//                                                    pinned (as a FRAMEWORK job: its rule picks the split)
//   estimator-bench memory CLUSTER DP_MEMORY.csv [experts-sharded]
//                                                    pure data parallelism's memory per GPU against measured
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/util.h"
#include "estimator/estimator.h"

namespace est = crius::estimator;
using Clock = std::chrono::steady_clock;

// CPU time of this thread: the figure does not depend on other load on the machine.
static double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static int speed(const std::string& cluster_path, const std::string& model, int batch) {
  auto c = est::load_cluster(cluster_path);
  if (!c) return std::fprintf(stderr, "%s\n", c.error().c_str()), 2;
  auto m = c->models.resolve(model);
  if (!m) return std::fprintf(stderr, "%s\n", m.error().c_str()), 2;
  est::Request req;
  req.model = *m;
  req.global_batch = batch;
  auto cells = est::enumerate_cells(req.model, req.runtime, *c, {});
  // One Cell: every feasible-looking Cell of the cluster in turn, timed one by one.
  std::vector<double> one;
  size_t feasible = 0;
  for (int rep = 0; rep < 3; ++rep)
    for (const auto& cell : cells) {
      double t0 = cpu_now();
      est::Estimate e = est::estimate_cell(req, cell, *c);
      double dt = cpu_now() - t0;
      if (e.feasible) {
        one.push_back(dt);
        if (rep == 0) ++feasible;
      }
    }
  std::vector<double> all, wall;
  size_t n = 0;
  for (int rep = 0; rep < 5; ++rep) {
    auto w0 = Clock::now();
    double t0 = cpu_now();
    auto r = est::rank_cells(req, *c, {});
    all.push_back(cpu_now() - t0);
    wall.push_back(std::chrono::duration<double>(Clock::now() - w0).count());
    n = r.size();
  }
  std::printf("model %s, global batch %d, cluster %s\n", model.c_str(), batch, cluster_path.c_str());
  std::printf("one feasible Cell, full plan search (CPU time): median %.3f ms, p90 %.3f ms, max %.3f ms (%zu Cells x 3)\n",
              1e3 * crius::util::median(one), 1e3 * crius::util::percentile_linear(one, 0.9), one.empty() ? NAN : 1e3 * *std::max_element(one.begin(), one.end()),
              feasible);
  std::printf("all %zu Cells ranked: median %.1f ms CPU time (wall %.1f ms; 5 runs, one thread)\n", n,
              1e3 * crius::util::median(all), 1e3 * crius::util::median(wall));
  return 0;
}

struct Point {
  std::string model, size, gpu;
  int batch = 0, nodes = 0, gpn = 0;
  double measured = 0;
  bool oom = false;
};

static std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  std::string x;
  while (std::getline(ss, x, ',')) f.push_back(x);
  if (!line.empty() && line.back() == ',') f.emplace_back();
  return f;
}

// The data rows of a CSV file (blank lines, # comments and the header skipped), each with its
// line number; nullopt if it cannot be opened.
struct CsvRow {
  int line = 0;
  std::vector<std::string> f;
};
static std::optional<std::vector<CsvRow>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::vector<CsvRow> rows;
  std::string line;
  bool header = true;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    rows.push_back({lineno, split_csv(line)});
  }
  return rows;
}

static std::vector<Point> read_points(const std::string& path) {
  std::vector<Point> out;
  for (CsvRow& row : read_csv(path).value_or(std::vector<CsvRow>{})) {
    std::vector<std::string>& f = row.f;
    if (f.size() < 8) f.resize(8);
    Point p;
    p.model = f[0], p.size = f[1], p.batch = std::stoi(f[2]), p.gpu = f[3];
    p.nodes = std::stoi(f[4]), p.gpn = std::stoi(f[5]);
    p.oom = f[7].find("oom") != std::string::npos;
    p.measured = p.oom ? 0 : std::stod(f[6]);
    out.push_back(p);
  }
  return out;
}

// Fitted constants: per GPU type, the large-GEMM efficiency of fp16 (bert, moe) and
// of fp32 (wide_resnet) math; per runtime profile (alpa), the factor on
// collectives that cross nodes.  Each is chosen on a grid to minimise the sum of
// squared log errors; the inter-node factor jointly with the efficiencies. The
// efficiencies' grid step is 0.02; the same fit at steps 0.01, 0.03 and 0.04 (every
// k-th point of a 0.01 grid) shows how far the leave-one-out figures move with the
// fitter's resolution alone.
static int accuracy(const std::string& cluster_path, const std::string& csv, const std::string& heldout_csv) {
  auto c = est::load_cluster(cluster_path);
  if (!c) return std::fprintf(stderr, "%s\n", c.error().c_str()), 2;
  auto pts = read_points(csv);
  if (!heldout_csv.empty() && !read_csv(heldout_csv))
    return std::fprintf(stderr, "%s: cannot open\n", heldout_csv.c_str()), 2;
  std::vector<Point> held;
  size_t held_elsewhere = 0;  // held-out points on an allocation no partition of the cluster has
  for (const Point& p : heldout_csv.empty() ? std::vector<Point>{} : read_points(heldout_csv)) {
    const bool fits = std::any_of(c->partitions.begin(), c->partitions.end(), [&](const est::Partition& part) {
      return part.gpu == p.gpu && part.nodes >= p.nodes && part.gpus_per_node >= p.gpn;
    });
    if (fits) held.push_back(p);
    else ++held_elsewhere;
  }
  std::vector<double> grid, fgrid = {1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 10};
  for (int i = 0; i <= 94; ++i) grid.push_back(0.06 + 0.01 * i);
  constexpr size_t kStride = 2;  // the reported fit: step 0.02
  const size_t N = pts.size(), F = fgrid.size(), K = grid.size();
  // pred[i][f * K + k]: best-plan iteration time (NAN: predicted infeasible).
  std::vector<std::vector<double>> pred(N, std::vector<double>(F * K, NAN));
  std::vector<double> pred_default(N, NAN);
  for (const std::vector<Point>* set : {&std::as_const(pts), &std::as_const(held)})
    for (const Point& p : *set) {
      if (auto m = c->models.resolve(p.model + "__" + p.size); !m)
        return std::fprintf(stderr, "%s\n", m.error().c_str()), 2;
      if (!c->gpus.find(p.gpu)) return std::fprintf(stderr, "unknown gpu %s\n", p.gpu.c_str()), 2;
    }
  // Best-plan iteration time of `p` with efficiency `eff` and inter-node factor `factor`
  // (eff < 0: the cluster's own constants); NAN where it is predicted not to fit.
  auto estimate = [&](const Point& p, double eff, double factor) {
    est::Request req;
    req.model = *c->models.resolve(p.model + "__" + p.size);
    req.global_batch = p.batch;
    req.runtime = est::Runtime::alpa;
    est::SearchOptions o;
    if (eff >= 0) {
      est::CostConstants cc = est::cost_constants(c->gpus, *c->gpus.find(p.gpu), est::Runtime::alpa);
      cc.gemm_efficiency = cc.fp32_efficiency = eff;
      cc.inter_node_factor = factor;
      o.constants = cc;
    }
    est::Estimate e = est::best_for_allocation(req, *c, p.gpu, p.nodes, p.gpn, o);
    return e.feasible ? e.iter_time_s : NAN;
  };
  for (size_t i = 0; i < N; ++i) {
    pred_default[i] = estimate(pts[i], -1, 0);
    for (size_t f = 0; f < F; ++f)
      for (size_t k = 0; k < K; ++k) pred[i][f * K + k] = estimate(pts[i], grid[k], fgrid[f]);
  }
  // The A10 and A40 are the same GA102 chip: one fp32 efficiency for both (the
  // A10's fp32 points are all multi-node, too few to separate it from the network).
  auto group_of = [](const Point& p) {
    const bool f32 = p.model == "wide_resnet";
    return std::make_pair(f32 && p.gpu == "a10" ? std::string("a40") : p.gpu, f32);
  };
  auto group = [&](size_t i) { return group_of(pts[i]); };
  std::vector<std::pair<std::string, bool>> groups;
  for (size_t i = 0; i < N; ++i)
    if (std::find(groups.begin(), groups.end(), group(i)) == groups.end()) groups.push_back(group(i));
  struct Fit {
    size_t f = 0;
    std::map<std::pair<std::string, bool>, size_t> k;  // grid index per group
  };
  // Constants fitted on every timed point except `skip`, on every `stride`-th grid point.
  auto fit = [&](size_t skip, size_t stride) {
    Fit best;
    double best_err = INFINITY;
    for (size_t f = 0; f < F; ++f) {
      Fit cur;
      cur.f = f;
      double total = 0;
      for (const auto& gr : groups) {
        double gbest = INFINITY;
        for (size_t k = 0; k < K; k += stride) {
          double err = 0;
          for (size_t i = 0; i < N; ++i) {
            if (i == skip || pts[i].oom || group(i) != gr) continue;
            double t = pred[i][f * K + k];
            double e = std::isnan(t) ? 10.0 : std::log(t / pts[i].measured);
            err += e * e;
          }
          if (err < gbest) gbest = err, cur.k[gr] = k;
        }
        total += gbest;
      }
      if (total < best_err) best_err = total, best = cur;
    }
    return best;
  };
  std::vector<double> loo_err, in_err, def_err;
  // (family, GPU, one node or more) -> signed LOO errors
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> by_class;
  int oom_right = 0, oom_total = 0, feas_wrong = 0;
  const Fit all = fit(N, kStride);
  std::printf("%-12s %-5s %5s %-5s %5s %3s %9s %9s %7s\n", "model", "size", "batch", "gpu", "nodes", "gpn", "measured",
              "loo_pred", "err");
  for (size_t i = 0; i < N; ++i) {
    const Point& p = pts[i];
    const Fit loo = fit(i, kStride);
    const double t = pred[i][loo.f * K + loo.k.at(group(i))];
    if (p.oom) {
      ++oom_total;
      bool right = std::isnan(t);
      oom_right += right;
      std::printf("%-12s %-5s %5d %-5s %5d %3d %9s %9s %7s\n", p.model.c_str(), p.size.c_str(), p.batch, p.gpu.c_str(),
                  p.nodes, p.gpn, "oom", right ? "oom" : "fits", right ? "right" : "WRONG");
      continue;
    }
    if (std::isnan(t)) {
      ++feas_wrong;
      std::printf("%-12s %-5s %5d %-5s %5d %3d %9.3f %9s %7s\n", p.model.c_str(), p.size.c_str(), p.batch, p.gpu.c_str(),
                  p.nodes, p.gpn, p.measured, "oom", "WRONG");
      continue;
    }
    double e = std::fabs(t / p.measured - 1);
    loo_err.push_back(e);
    by_class[{p.model, p.gpu, p.nodes > 1 ? ">1" : "1"}].push_back(t / p.measured - 1);
    const double tin = pred[i][all.f * K + all.k.at(group(i))];
    if (!std::isnan(tin)) in_err.push_back(std::fabs(tin / p.measured - 1));
    if (!std::isnan(pred_default[i])) def_err.push_back(std::fabs(pred_default[i] / p.measured - 1));
    std::printf("%-12s %-5s %5d %-5s %5d %3d %9.3f %9.3f %6.1f%%\n", p.model.c_str(), p.size.c_str(), p.batch,
                p.gpu.c_str(), p.nodes, p.gpn, p.measured, t, 100 * e);
  }
  std::printf("\nleave-one-out error by model family, GPU type and nodes (estimate / measured - 1):\n");
  std::printf("%-12s %-5s %5s %6s %14s %14s\n", "model", "gpu", "nodes", "points", "median_signed", "mean_abs");
  for (auto& [cls, errs] : by_class) {
    const auto& [family, gpu, nodes] = cls;
    double abs_sum = 0;
    for (double e : errs) abs_sum += std::fabs(e);
    std::printf("%-12s %-5s %5s %6zu %13.1f%% %13.1f%%\n", family.c_str(), gpu.c_str(), nodes.c_str(), errs.size(),
                100 * crius::util::median(errs), 100 * abs_sum / static_cast<double>(errs.size()));
  }
  std::printf("\nfitted on all points: alpa inter_node_factor=%.2f; gemm_efficiency (fp16) / fp32_efficiency:",
              fgrid[all.f]);
  for (auto& [g, k] : all.k) std::printf(" %s/%s=%.2f", g.first.c_str(), g.second ? "fp32" : "fp16", grid[k]);
  std::printf("\nleave-one-out (%zu timed points): median abs rel error %.1f%%, p90 %.1f%%\n", loo_err.size(),
              100 * crius::util::median(loo_err), 100 * crius::util::percentile_linear(loo_err, 0.9));
  std::printf("leave-one-out by the efficiencies' grid step (the figures' resolution):");
  for (size_t stride : {1, 2, 3, 4}) {
    std::vector<double> errs;  // at kStride: loo_err, above
    for (size_t i = 0; i < N && stride != kStride; ++i) {
      if (pts[i].oom) continue;
      const Fit loo = fit(i, stride);
      const double t = pred[i][loo.f * K + loo.k.at(group(i))];
      if (!std::isnan(t)) errs.push_back(std::fabs(t / pts[i].measured - 1));
    }
    if (stride == kStride) errs = loo_err;
    std::printf("%s %.2f: %.1f%% / %.1f%%", stride == 1 ? "" : ",", 0.01 * static_cast<double>(stride),
                100 * crius::util::median(errs), 100 * crius::util::percentile_linear(errs, 0.9));
  }
  std::printf("\n");
  std::printf("in-sample (fit on all):           median %.1f%%, p90 %.1f%%\n", 100 * crius::util::median(in_err),
              100 * crius::util::percentile_linear(in_err, 0.9));
  std::printf("shipped constants (cost_constants): median %.1f%%, p90 %.1f%% over %zu points\n", 100 * crius::util::median(def_err),
              100 * crius::util::percentile_linear(def_err, 0.9), def_err.size());
  std::printf("OOM points predicted infeasible: %d of %d; measured-feasible points predicted OOM: %d\n", oom_right,
              oom_total, feas_wrong);
  if (held.empty()) return 0;
  for (const Point& p : held)
    if (!all.k.count(group_of(p)))
      return std::fprintf(stderr, "%s: no calibration point fits the constant of %s on %s\n", heldout_csv.c_str(),
                          p.model.c_str(), p.gpu.c_str()),
             2;
  // Held out: the constants fitted on every calibration point predict points nothing was fitted on.
  std::printf("\nheld out (%s; constants fitted on all calibration points; %zu points on allocations the cluster "
              "does not have left out):\n", heldout_csv.c_str(), held_elsewhere);
  for (size_t stride : {2, 1, 3, 4}) {
    const Fit fitted = fit(N, stride);
    std::vector<double> errs;
    std::map<std::string, std::vector<double>> by_family;
    int h_oom_right = 0, h_oom = 0, h_feas_wrong = 0;
    for (const Point& p : held) {
      const double t = estimate(p, grid[fitted.k.at(group_of(p))], fgrid[fitted.f]);
      if (p.oom) {
        ++h_oom;
        h_oom_right += std::isnan(t);
      } else if (std::isnan(t)) {
        ++h_feas_wrong;
      } else {
        errs.push_back(std::fabs(t / p.measured - 1));
        by_family[p.model].push_back(errs.back());
      }
    }
    std::printf("  grid step %.2f: %zu timed points, median abs rel error %.1f%%, p90 %.1f%%",
                0.01 * static_cast<double>(stride), errs.size(), 100 * crius::util::median(errs),
                100 * crius::util::percentile_linear(errs, 0.9));
    if (stride == kStride) {
      std::printf(" (");
      for (const auto& [family, e] : by_family)
        std::printf("%s%s %zu: %.1f%% / %.1f%%", family == by_family.begin()->first ? "" : ", ", family.c_str(),
                    e.size(), 100 * crius::util::median(e), 100 * crius::util::percentile_linear(e, 0.9));
      std::printf("); OOM points predicted infeasible: %d of %d; measured-feasible points predicted OOM: %d",
                  h_oom_right, h_oom, h_feas_wrong);
    }
    std::printf("\n");
  }
  return 0;
}

// A published run's stack as switches over its runtime profile's ("name=on;name=off"; names as
// [runtime.<name>] in the GPU catalogue), merged into `c` through the catalogue's own parser.
static std::string apply_switches(est::Cluster& c, est::Runtime rt, const std::string& spec) {
  const est::RuntimeProfile prof = c.gpus.runtime(rt);
  std::map<std::string, bool> value;
  for (const auto& [key, field] : est::StackSwitches::kSwitches) value[key] = prof.stack.*field;
  for (const std::string& item : crius::util::split(spec, ';')) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq), v = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (!value.count(key) || (v != "on" && v != "off")) return "switch '" + item + "' is not NAME=on|off";
    value[key] = v == "on";
  }
  std::string text = "[runtime." + std::string(est::to_string(rt)) + "]\ninter_node_factor = " +
                     crius::util::fmt(prof.inter_node_factor, 17) + "\nruntime_overhead = " +
                     crius::util::fmt(prof.runtime_overhead, 17) + "\n";
  if (prof.tp_comm_splits > 0) text += "tp_comm_splits = " + std::to_string(prof.tp_comm_splits) + "\n";
  if (prof.tp_comm_sms > 0) text += "tp_comm_sms = " + std::to_string(prof.tp_comm_sms) + "\n";
  for (const auto& [key, on] : value) text += key + " = " + (on ? "true\n" : "false\n");
  // The parser asks for a GPU type; this one is never used.
  text += "[gpu.switches-unused]\nname = \"x\"\nmemory_gib = 1\nmemory_bw_gbs = 1\ntflops = { fp16 = 1, fp32 = 1 }\n";
  auto over = est::GpuCatalog::parse(text, "switches");
  if (!over) return over.error();
  c.gpus.merge(*over);
  return "";
}

// Published runs (megatron-published.csv, h100-published.csv): each estimated on the cluster's
// first partition with the paper's tp, stages and, where the source gives them, micro-batch,
// schedule, recomputation and sequence parallelism pinned (an empty field: the search chooses),
// with the shipped constants; no constant is fitted to them. Optional last columns: the
// runtime profile (default megatron), a split (e.g. fit / held-out), summarised apart, and the
// run's stack switches where they differ from the profile's (apply_switches), the framework that
// ran it (its plan space for what the source leaves free), its ZeRO stage and its context-parallel
// size (1 where the column is absent: the source ran none).
// `framework`: the job's framework (crius(7), FRAMEWORKS) for every run; "" for each run's own, else
// the cluster file's.
static int published(const std::string& cluster_path, const std::string& csv, const std::string& framework) {
  auto c = est::load_cluster(cluster_path);
  if (!c) return std::fprintf(stderr, "%s\n", c.error().c_str()), 2;
  if (!framework.empty()) {
    auto fw = est::parse_framework(framework);
    if (!fw) return std::fprintf(stderr, "framework: %s\n", fw.error().c_str()), 2;
    c->framework = *fw;
  }
  if (c->partitions.empty()) return std::fprintf(stderr, "%s: no partition\n", cluster_path.c_str()), 2;
  const est::Partition& part = c->partitions.front();
  const auto rows = read_csv(csv);
  if (!rows) return std::fprintf(stderr, "%s: cannot open\n", csv.c_str()), 2;
  std::map<std::string, std::vector<double>> by_mode, by_split;
  std::map<std::string, int> infeasible_by_split;  // runs that ran, estimated out of memory
  std::printf("%-13s %-15s %5s %6s %3s %6s %-14s %-9s %9s %9s %7s\n", "source", "model", "gpus", "stages", "tp", "batch",
              "schedule", "recompute", "published", "estimate", "error");
  for (const auto& [lineno, f] : *rows) {
    if (f.size() != 12 && (f.size() < 14 || f.size() > 18))
      return std::fprintf(stderr, "%s:%d: expected 12 or 14 to 18 fields\n", csv.c_str(), lineno), 2;
    auto m = c->models.resolve(f[1]);
    if (!m) return std::fprintf(stderr, "%s:%d: %s\n", csv.c_str(), lineno, m.error().c_str()), 2;
    est::Request req;
    req.model = *m;
    req.framework = c->framework;
    // The run's own framework (a 16th field) where the command line names none.
    if (framework.empty() && f.size() >= 16 && !f[15].empty()) {
      auto fw = est::parse_framework(f[15]);
      if (!fw) return std::fprintf(stderr, "%s:%d: %s\n", csv.c_str(), lineno, fw.error().c_str()), 2;
      req.framework = *fw;
    }
    int nodes = 0, gpn = 0, stages = 0;
    double pub = 0;
    try {
      req.global_batch = std::stoi(f[6]);
      req.pins.tp = std::stoi(f[5]);
      if (!f[7].empty()) req.pins.micro_batch_size = std::stoi(f[7]);
      nodes = std::stoi(f[2]), gpn = std::stoi(f[3]), stages = std::stoi(f[4]);
      pub = std::stod(f[11]);
      if (f.size() >= 17 && !f[16].empty()) req.pins.zero = std::stoi(f[16]);  // the run's ZeRO stage
      // The run's context-parallel size (an 18th field); none where the source ran none.
      req.pins.cp = f.size() == 18 && !f[17].empty() ? std::stoi(f[17]) : 1;
    } catch (const std::exception&) {
      return std::fprintf(stderr, "%s:%d: a number field is not a number\n", csv.c_str(), lineno), 2;
    }
    if (!f[8].empty()) {
      auto sc = est::parse_schedule(f[8]);
      if (!sc) return std::fprintf(stderr, "%s:%d: %s\n", csv.c_str(), lineno, sc.error().c_str()), 2;
      req.pins.schedule = *sc;
    }
    if (!f[9].empty()) {
      auto rc = est::parse_recompute(f[9]);
      if (!rc) return std::fprintf(stderr, "%s:%d: %s\n", csv.c_str(), lineno, rc.error().c_str()), 2;
      req.pins.recompute = *rc;
    }
    if (!f[10].empty()) req.pins.sequence_parallel = f[10] == "on";
    std::string split;
    if (f.size() >= 14) {
      auto rt = est::parse_runtime(f[12]);
      if (!rt) return std::fprintf(stderr, "%s:%d: %s\n", csv.c_str(), lineno, rt.error().c_str()), 2;
      req.runtime = *rt;
      split = f[13];
    }
    est::Cluster run_cluster = *c;
    if (f.size() >= 15 && !f[14].empty()) {
      const std::string err = apply_switches(run_cluster, req.runtime, f[14]);
      if (!err.empty()) return std::fprintf(stderr, "%s:%d: %s\n", csv.c_str(), lineno, err.c_str()), 2;
    }
    const est::Cell cell{part.name, part.gpu, nodes, gpn, stages};
    est::Estimate e = est::estimate_cell(req, cell, run_cluster);
    if (!e.feasible) {
      std::printf("%-13s %-15s infeasible: %s\n", f[0].c_str(), f[1].c_str(), e.why.c_str());
      if (!split.empty()) ++infeasible_by_split[split];
      continue;
    }
    const double err = e.iter_time_s / pub - 1;
    by_mode[f[0] + " " + (f[9].empty() ? "free" : f[9])].push_back(err);
    if (!split.empty()) by_split[split].push_back(err);
    std::printf("%-13s %-15s %5d %6d %3d %6d %-14s %-9s %8.2fs %8.2fs %+6.1f%%\n", f[0].c_str(), f[1].c_str(),
                cell.gpus(), cell.stages, *req.pins.tp, req.global_batch, est::to_string(e.plan.schedule).c_str(),
                std::string(est::to_string(e.plan.recompute)).c_str(), pub, e.iter_time_s, 100 * err);
  }
  auto summary = [](const std::string& what, const std::vector<double>& errs) {
    double sum = 0, signed_sum = 0, worst = 0;
    std::vector<double> abs;
    for (double x : errs)
      sum += std::fabs(x), signed_sum += x, worst = std::max(worst, std::fabs(x)), abs.push_back(std::fabs(x));
    const double n = static_cast<double>(errs.size());
    std::printf("%-24s %zu runs: mean absolute error %.1f%%, median %.1f%%, worst %.1f%%, signed mean %+.1f%%\n",
                what.c_str(), errs.size(), 100 * sum / n, 100 * crius::util::median(abs), 100 * worst, 100 * signed_sum / n);
  };
  for (const auto& [mode, errs] : by_mode) summary(mode, errs);
  for (const auto& [split, errs] : by_split) {
    summary("split " + split, errs);
    if (infeasible_by_split[split] > 0)
      std::printf("split %s: %d more runs estimated out of memory\n", split.c_str(), infeasible_by_split[split]);
  }
  if (auto fit = by_split.find("fit"); fit != by_split.end()) {
    // The factor on the estimates that fits the fit split in the least-squares sense of log
    // errors: how far the profile's runtime_overhead is from what the fit split asks for.
    double log_sum = 0;
    for (double x : fit->second) log_sum -= std::log1p(x);
    std::printf("the fit split asks the estimates x %.3f (geometric mean of published / estimate)\n",
                std::exp(log_sum / static_cast<double>(fit->second.size())));
  }
  return 0;
}

// Pure data parallelism's memory per GPU (runtime alpa: one stage, tp 1, dp = every GPU, 16
// micro-batches) against the Crius artifact's measured peak (dp-memory.csv, GiB), with the
// optimizer states on every rank (ZeRO 0, what the alpa profile's search assumes) and sharded
// over the ranks (ZeRO 1). Estimated on the cluster's partition of the largest node, its GPU's
// capacity lifted so that a plan's memory is reported whether or not it fits; the rows that did
// not fit (no value) are left out, since the artifact does not say which GPU they ran out of.
// A MoE model's experts are on every rank, as in the artifact's forced data parallelism (its
// trainers' is_dp_only: one stage, logical mesh (GPUs, 1)), or, with `experts_sharded`, sharded
// over the ranks, what the alpa search assumes.
static int memory(const std::string& cluster_path, const std::string& csv, bool experts_sharded) {
  auto c = est::load_cluster(cluster_path);
  if (!c) return std::fprintf(stderr, "%s\n", c.error().c_str()), 2;
  if (c->partitions.empty()) return std::fprintf(stderr, "%s: no partition\n", cluster_path.c_str()), 2;
  const est::Partition part = *std::max_element(
      c->partitions.begin(), c->partitions.end(),
      [](const est::Partition& a, const est::Partition& b) { return a.gpus_per_node < b.gpus_per_node; });
  const est::GpuType* g = c->gpus.find(part.gpu);
  if (!g) return std::fprintf(stderr, "unknown gpu %s\n", part.gpu.c_str()), 2;
  auto lifted = est::GpuCatalog::parse("[gpu." + g->id + "]\nname = \"lifted\"\nmemory_gib = 4096\nmemory_bw_gbs = " +
                                           crius::util::fmt(g->memory_bw_gbs, 17) + "\ntflops = { fp16 = " +
                                           crius::util::fmt(g->tflops_fp16, 17) + ", fp32 = " +
                                           crius::util::fmt(g->tflops_fp32, 17) + " }\n",
                                       "lifted");
  if (!lifted) return std::fprintf(stderr, "%s\n", lifted.error().c_str()), 2;
  c->gpus.merge(*lifted);
  const auto rows = read_csv(csv);
  if (!rows) return std::fprintf(stderr, "%s: cannot open\n", csv.c_str()), 2;
  int left_out = 0;
  std::map<std::string, std::vector<double>> errs[2];  // [zero] family -> estimate / measured - 1
  std::printf("%-12s %-5s %5s %4s %9s %9s %7s %9s %7s\n", "model", "size", "batch", "gpus", "measured", "zero0",
              "err", "zero1", "err");
  for (const auto& [lineno, f] : *rows) {
    if (f.size() != 6) return std::fprintf(stderr, "%s:%d: expected 6 fields\n", csv.c_str(), lineno), 2;
    if (f[4].empty()) {
      ++left_out;
      continue;
    }
    auto m = c->models.resolve(f[0] + "__" + f[1]);
    if (!m) return std::fprintf(stderr, "%s:%d: %s\n", csv.c_str(), lineno, m.error().c_str()), 2;
    int batch = 0, gpus = 0;
    double measured = 0;
    try {
      batch = std::stoi(f[2]), gpus = std::stoi(f[3]), measured = std::stod(f[4]);
    } catch (const std::exception&) {
      return std::fprintf(stderr, "%s:%d: a number field is not a number\n", csv.c_str(), lineno), 2;
    }
    if (gpus > part.gpus_per_node)
      return std::fprintf(stderr, "%s:%d: %d GPUs, partition %s has %d per node\n", csv.c_str(), lineno, gpus,
                          part.name.c_str(), part.gpus_per_node), 2;
    double mem[2];
    for (int z = 0; z < 2; ++z) {
      est::Request req;
      req.model = *m;
      req.global_batch = batch;
      req.runtime = est::Runtime::alpa;
      req.pins.tp = 1;
      req.pins.dp = gpus;
      req.pins.zero = gpus > 1 ? z : 0;
      if (m->family == est::Family::moe) req.pins.expert_parallel = experts_sharded;
      est::Estimate e = est::estimate_cell(req, est::Cell{part.name, part.gpu, 1, gpus, 1}, *c);
      if (!e.feasible)
        return std::fprintf(stderr, "%s:%d: no plan: %s\n", csv.c_str(), lineno, e.why.c_str()), 2;
      mem[z] = e.memory_gib;
      errs[z][f[0]].push_back(mem[z] / measured - 1);
      errs[z]["all"].push_back(mem[z] / measured - 1);
    }
    std::printf("%-12s %-5s %5d %4d %9.2f %9.2f %+6.1f%% %9.2f %+6.1f%%\n", f[0].c_str(), f[1].c_str(), batch, gpus,
                measured, mem[0], 100 * (mem[0] / measured - 1), mem[1], 100 * (mem[1] / measured - 1));
  }
  std::printf("\n%d rows without a measured value (did not fit) left out\n", left_out);
  for (int z = 0; z < 2; ++z)
    for (const auto& [family, e] : errs[z]) {
      std::vector<double> abs;
      for (double x : e) abs.push_back(std::fabs(x));
      std::printf("zero %d %-12s %3zu rows: median signed %+6.1f%%, median abs %5.1f%%, worst %5.1f%%\n", z,
                  family.c_str(), e.size(), 100 * crius::util::median(e), 100 * crius::util::median(abs),
                  100 * *std::max_element(abs.begin(), abs.end()));
    }
  return 0;
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "speed" && argc == 5) return speed(argv[2], argv[3], std::atoi(argv[4]));
  if (mode == "accuracy" && (argc == 4 || argc == 5)) return accuracy(argv[2], argv[3], argc == 5 ? argv[4] : "");
  if (mode == "published" && (argc == 4 || argc == 5)) return published(argv[2], argv[3], argc == 5 ? argv[4] : "");
  if (mode == "memory" && argc == 4) return memory(argv[2], argv[3], false);
  if (mode == "memory" && argc == 5 && std::string(argv[4]) == "experts-sharded") return memory(argv[2], argv[3], true);
  std::fprintf(stderr,
               "usage: estimator-bench speed CLUSTER MODEL BATCH | accuracy CLUSTER MEASURED.csv [HELDOUT.csv] | published CLUSTER "
               "RUNS.csv [FRAMEWORK] | memory CLUSTER DP_MEMORY.csv [experts-sharded]\n");
  return 2;
}
