// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/policies/elasticflow_ls.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace crius::scheduler {

Result<void> ElasticFlowLsPolicy::runnable(const Job& job, const Context& ctx) const {
  return runnable_on_requested_type(job, ctx, false);
}

std::vector<Target> ElasticFlowLsPolicy::schedule(const Context& ctx) {
  std::vector<Target> targets(ctx.jobs.size());
  // Per job: GPU counts by the data-parallel speed ElasticFlow profiles.
  struct Want {
    size_t i;
    int count = 0;          // GPUs decided
    int min_count = 0;      // the fewest that meet the deadline (0: none does)
    bool meets = false;
  };
  auto speed = [&](size_t i, int c) {
    const Job& j = *ctx.jobs[i];
    double s = -1;
    for (const PlacedShape& ps : shapes_for(ctx.cluster, j.req_gpu, c))
      s = std::max(s, decision_speed(ctx, j, ps.shape, true));
    return s;
  };
  std::map<std::string, std::vector<Want>> by_type;
  for (size_t i = 0; i < ctx.jobs.size(); ++i) {
    const Job& j = *ctx.jobs[i];
    Want w{i};
    double left = j.deadline - ctx.now;
    int smallest = 0;
    for (int c : counts_for(ctx.total_gpus(j.req_gpu))) {
      double s = speed(i, c);
      if (s <= 0) continue;
      if (!smallest) smallest = c;
      bool restarts = j.state == JobState::running ? j.alloc.shape.gpus() != c : j.first_start >= 0;
      double restart = restarts ? restart_cost(m_options, false, c) : 0;
      if (restart + j.remaining() * j.global_batch / s <= left) {
        w.min_count = c;
        w.meets = true;
        break;
      }
    }
    // Loosened deadline: a job that cannot meet it still runs, on its smallest Cell.
    if (!w.meets) w.min_count = smallest;
    if (w.min_count) by_type[j.req_gpu].push_back(w);
  }

  FreeMap free = ctx.free_map();
  for (auto& [gpu, wants] : by_type) {
    // Admission: deadline-meeting jobs first, each in earliest-deadline order.
    std::stable_sort(wants.begin(), wants.end(), [&](const Want& a, const Want& b) {
      if (a.meets != b.meets) return a.meets;
      return ctx.jobs[a.i]->deadline < ctx.jobs[b.i]->deadline;
    });
    int left = ctx.total_gpus(gpu);
    for (Want& w : wants)
      if (w.min_count <= left) { w.count = w.min_count; left -= w.count; }
    // Spare GPUs: double the job with the largest speed gain per added GPU.
    while (left > 0) {
      Want* pick = nullptr;
      double pick_gain = 0;
      for (Want& w : wants) {
        if (!w.count || w.count > left) continue;
        double gain = (speed(w.i, 2 * w.count) - speed(w.i, w.count)) /
                      (speed(w.i, w.count) * w.count);
        if (gain > pick_gain + 1e-12) { pick = &w; pick_gain = gain; }
      }
      if (!pick) break;
      left -= pick->count;
      pick->count *= 2;
    }
    // Placement: running jobs that keep their count keep their GPUs.
    for (Want& w : wants) {
      const Job& j = *ctx.jobs[w.i];
      if (w.count && j.state == JobState::running && j.alloc.shape.gpus() == w.count &&
          free.fits(j.alloc)) {
        targets[w.i].alloc = j.alloc;
        free.take(j.alloc);
      }
    }
    for (Want& w : wants) {
      const Job& j = *ctx.jobs[w.i];
      if (!w.count || !targets[w.i].alloc.empty()) continue;
      std::optional<Allocation> a;
      for (int c = w.count; !a && c >= std::max(1, w.min_count); c /= 2)
        a = place_best(ctx, free, j, gpu, c, true);
      if (!a) continue;
      free.take(*a);
      targets[w.i].alloc = *a;
      targets[w.i].reason = w.meets ? "meets its deadline with " + std::to_string(a->shape.gpus()) +
                                          " GPUs"
                                    : "best effort: deadline cannot be met";
    }
  }
  return targets;
}

}  // namespace crius::scheduler
