// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Test driver: in ONE MPI job of N ranks, runs crius-train's engine with
// --verify semantics for every plan (tp, pp, dp) with tp*pp*dp <= N, plus
// plans with per-stage shapes, on a sub-communicator of the first tp*pp*dp
// ranks. One launch instead of dozens keeps the MPI suite fast on 2 cores.
// Prints one line per plan and "ALLPLANS <passed> <failed>"; exit 0 when all pass.
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "launcher/plan_source.h"
#include "launcher/runtime.h"
#include "launcher/train/model.h"

namespace cl = crius::launcher;
namespace est = crius::estimator;
namespace tr = crius::launcher::train;

// The one-rank engine's gradient is the loss's: one SGD step of size eps along
// it lowers the same batch's loss by eps * |g|^2 to first order.  Returns "" or
// what is wrong.  (--verify then ties every plan to this one-rank engine.)
std::string gradient_check(const tr::ModelConfig& mc, const cl::Runtime& one, int samples, tr::Backend& be) {
  auto probe = tr::make_trainer("fp64", mc, one, samples, 0.0, be);
  if (!probe) return probe.error();
  const double l0 = (*probe)->step(0), g = (*probe)->grad_norm();
  if (!(g > 0)) return "zero gradient";
  const double eps = 1e-6 * std::max(1.0, std::abs(l0)) / (g * g);
  auto t = tr::make_trainer("fp64", mc, one, samples, eps, be);
  if (!t) return t.error();
  (*t)->step(0);
  const double l1 = (*t)->step(0);  // the same batch after the step
  const double ratio = (l0 - l1) / (eps * g * g);
  if (std::abs(ratio - 1) > 1e-3) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "gradient check: loss fell by %.6g of the first-order %.6g (|g| = %.6g)", l0 - l1,
                  eps * g * g, g);
    return buf;
  }
  return "";
}

struct Case {
  cl::Plan plan;
  std::string dtype;
  int samples;
};

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int wr = 0, ws = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &ws);
  std::vector<Case> cases;
  int idx = 0;
  for (int n = 1; n <= ws; ++n)
    for (int tp = 1; tp <= n; ++tp)
      for (int pp = 1; pp <= n / tp; ++pp) {
        if (n % (tp * pp) != 0) continue;
        int dp = n / (tp * pp);
        auto p = cl::plan_from_shape(std::to_string(tp), pp, std::to_string(dp), "", 8);
        if (!p) {  // 8 layers do not split evenly: let the engine split them
          p = cl::plan_from_shape(std::to_string(tp), pp, std::to_string(dp), "", 0);
        }
        p->micro_batches = 1 + idx % 4;
        p->schedule.kind = idx % 2 ? est::Schedule::Kind::gpipe : est::Schedule::Kind::one_f_one_b;
        p->recompute = idx % 3 == 2 ? est::Recompute::full : est::Recompute::none;
        cases.push_back({*p, "fp64", dp + idx % 2});
        ++idx;
      }
  // Per-stage shapes (equal and unequal stage sizes) and uneven layer ranges.
  struct Extra {
    const char *tp, *dp, *layers;
    int pp;
  };
  for (Extra e : {Extra{"2,1", "1,2", "0-4,5-7", 2}, Extra{"1,2", "4,1", "0-1,2-7", 2}, Extra{"2,1,1", "2,1,3", "0-2,3-3,4-7", 3},
                  Extra{"1,1,2,1", "1,2,1,2", "0-1,2-3,4-5,6-7", 4}}) {
    auto p = cl::plan_from_shape(e.tp, e.pp, e.dp, e.layers, 0);
    if (p && p->world_size() <= ws) {
      p->micro_batches = 3;
      cases.push_back({*p, "fp64", 6});
      p->schedule.kind = est::Schedule::Kind::gpipe;
      cases.push_back({*p, "fp32", 6});
    }
  }
  int passed = 0, failed = 0;
  for (const Case& c : cases) {
    const int n = c.plan.world_size();
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, wr < n ? 0 : MPI_UNDEFINED, wr, &sub);
    if (sub != MPI_COMM_NULL) {
      tr::ModelConfig mc;
      mc.heads = 8;
      for (const auto& s : c.plan.stages)
        while (mc.heads % s.tp) mc.heads += 1;
      mc.hidden = 4 * mc.heads;
      mc.ffn = 2 * mc.hidden;
      mc.layers = 8;
      mc.seq = 6;
      auto be = tr::cpu_backend();
      auto rt = cl::Runtime::init(sub, c.plan);
      std::string err;
      double worst[2] = {0, 0};
      if (!rt) err = rt.error();
      std::unique_ptr<cl::Runtime> ref_rt;
      if (err.empty()) {
        cl::Plan one;
        one.stages.push_back({0, 8, 1, 1});
        one.micro_batches = c.plan.micro_batches;
        auto r = cl::Runtime::init(MPI_COMM_SELF, one);
        ref_rt = std::move(*r);
        auto t = tr::make_trainer(c.dtype, mc, **rt, c.samples, 0.05, *be);
        auto ref = tr::make_trainer(c.dtype, mc, *ref_rt, c.samples, 0.05, *be);
        if (!t || !ref) {
          err = !t ? t.error() : ref.error();
        } else {
          for (int s = 0; s < 3; ++s) {
            double a = (*t)->step(s), b = (*ref)->step(s);
            worst[0] = std::max(worst[0], std::abs(a - b) / std::max(1.0, std::abs(b)));
            // The gradient norm, summed over the plan's shards, is the one-rank norm.
            const double ga = (*t)->grad_norm(), gb = (*ref)->grad_norm();
            worst[0] = std::max(worst[0], std::abs(ga - gb) / std::max(1.0, gb));
          }
          if (c.dtype == "fp64") {
            auto g = gradient_check(mc, *ref_rt, c.samples, *be);
            if (!g.empty()) err = g;
          }
          worst[1] = (*t)->max_param_diff(**ref);
        }
      }
      double all[2];
      MPI_Allreduce(worst, all, 2, MPI_DOUBLE, MPI_MAX, sub);
      int bad = err.empty() ? 0 : 1, anybad = 0;
      MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, sub);
      double tol = c.dtype == "fp64" ? 1e-9 : 1e-3;
      bool ok = !anybad && all[0] <= tol && all[1] <= tol;
      if (wr == 0) {
        std::printf("%s %s %s samples=%d: loss diff %.3g, param diff %.3g%s%s\n", ok ? "PASS" : "FAIL",
                    crius::estimator::plan_text(c.plan).c_str(), c.dtype.c_str(), c.samples, all[0], all[1], err.empty() ? "" : ": ",
                    err.c_str());
        std::fflush(stdout);
      }
      (ok ? passed : failed) += 1;
      MPI_Comm_free(&sub);
    }
    MPI_Bcast(&passed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  if (wr == 0) std::printf("ALLPLANS %d %d\n", passed, failed);
  MPI_Finalize();
  return failed == 0 && passed > 0 ? 0 : 1;
}
