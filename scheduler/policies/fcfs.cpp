// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/policies/fcfs.h"

#include <set>

namespace crius::scheduler {

Result<void> FcfsPolicy::runnable(const Job& job, const Context& ctx) const {
  return runnable_on_requested_type(job, ctx, true);
}

std::vector<Target> FcfsPolicy::schedule(const Context& ctx) {
  std::vector<Target> targets = keep_running(ctx);
  FreeMap free = taken(ctx, targets);
  std::set<std::string> blocked;  // GPU types whose queue head waits ("" = every type: strict)
  for (size_t i = 0; i < ctx.jobs.size(); ++i) {
    const Job& j = *ctx.jobs[i];
    if (j.state != JobState::pending) continue;
    if (blocked.count(m_per_type ? j.req_gpu : "")) continue;
    auto a = place_best(ctx, free, j, j.req_gpu, j.req_gpus, true);
    if (!a) {  // head-of-line blocking
      blocked.insert(m_per_type ? j.req_gpu : "");
      continue;
    }
    free.take(*a);
    targets[i].alloc = *a;
    targets[i].reason = "fifo: requested " + std::to_string(j.req_gpus) + " " + j.req_gpu;
  }
  return targets;
}

}  // namespace crius::scheduler
