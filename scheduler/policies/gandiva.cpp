// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/policies/gandiva.h"

#include <algorithm>

namespace crius::scheduler {

namespace {
// Growing pays when doubling the GPUs gives at least this speed-up (by the
// data-parallel speed Gandiva can observe).
constexpr double kGrowGain = 1.25;
}  // namespace

Result<void> GandivaPolicy::runnable(const Job& job, const Context& ctx) const {
  return runnable_on_requested_type(job, ctx, false);
}

std::vector<Target> GandivaPolicy::schedule(const Context& ctx) {
  std::vector<Target> targets = keep_running(ctx);
  FreeMap free = taken(ctx, targets);
  auto speed = [&](size_t i, const Allocation& a) {
    return decision_speed(ctx, *ctx.jobs[i], a.shape, true);
  };
  std::vector<std::string> blocked_types;

  // 1. Admit pending jobs in FIFO order without head-of-line blocking.
  for (size_t i = 0; i < ctx.jobs.size(); ++i) {
    const Job& j = *ctx.jobs[i];
    if (j.state != JobState::pending) continue;
    auto a = place_best(ctx, free, j, j.req_gpu, j.req_gpus, true);
    if (!a) {
      // Shrink grown jobs of this type back to their request.
      for (size_t k = 0; k < ctx.jobs.size() && !a; ++k) {
        const Job& r = *ctx.jobs[k];
        Allocation& ra = targets[k].alloc;
        if (ra.empty() || ra.shape.gpu != j.req_gpu || ra.shape.gpus() <= r.req_gpus) continue;
        free.give(ra);
        auto shrunk = place_best(ctx, free, r, r.req_gpu, r.req_gpus, true);
        if (!shrunk) { free.take(ra); continue; }
        free.take(*shrunk);
        ra = *shrunk;
        targets[k].reason = "shrink back to the request: job " + j.name + " waits";
        a = place_best(ctx, free, j, j.req_gpu, j.req_gpus, true);
      }
    }
    // Start smaller than asked when only that fits; a request too small for the
    // model's memory starts at the fewest GPUs that hold it.
    for (int c = j.req_gpus / 2; !a && c >= 1; c /= 2) a = place_best(ctx, free, j, j.req_gpu, c, true);
    if (!a && !ctx.feasible(j, j.req_gpu, j.req_gpus))
      for (int c = 2 * j.req_gpus; !a && c <= ctx.total_gpus(j.req_gpu); c *= 2)
        if (ctx.feasible(j, j.req_gpu, c)) {
          a = place_best(ctx, free, j, j.req_gpu, c, true);
          if (!a) break;  // the fewest that fit must wait
        }
    if (!a) {
      blocked_types.push_back(j.req_gpu);
      continue;
    }
    free.take(*a);
    targets[i].alloc = *a;
    targets[i].reason = a->shape.gpus() == j.req_gpus ? "packed at the request"
                                                      : "started shrunk: requested count does not fit";
  }

  // 2. Migration: consolidate a job spread over more nodes than needed.
  for (size_t i = 0; i < ctx.jobs.size(); ++i) {
    Allocation& a = targets[i].alloc;
    if (a.empty() || ctx.jobs[i]->state != JobState::running || !(a == ctx.jobs[i]->alloc)) continue;
    free.give(a);
    auto better = place_best(ctx, free, *ctx.jobs[i], a.shape.gpu, a.shape.gpus(), true);
    if (better && better->shape.nodes < a.shape.nodes && speed(i, *better) > speed(i, a)) {
      a = *better;
      targets[i].reason = "migrate: consolidate on fewer nodes";
    }
    free.take(a);
  }

  // 3. Grow into idle GPUs of types nobody waits for.
  for (size_t i = 0; i < ctx.jobs.size(); ++i) {
    Allocation& a = targets[i].alloc;
    if (a.empty()) continue;
    if (std::find(blocked_types.begin(), blocked_types.end(), a.shape.gpu) != blocked_types.end())
      continue;
    if (a.shape.gpus() >= 2 * ctx.jobs[i]->req_gpus) continue;  // grow once past the request
    free.give(a);
    auto grown = place_best(ctx, free, *ctx.jobs[i], a.shape.gpu, 2 * a.shape.gpus(), true);
    if (grown && speed(i, *grown) >= kGrowGain * speed(i, a)) {
      a = *grown;
      targets[i].reason = "grow into idle GPUs";
    }
    free.take(a);
  }
  return targets;
}

}  // namespace crius::scheduler
