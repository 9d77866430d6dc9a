#include "scheduler/policies/fcfs.h"

namespace crius::scheduler {

Result<void> FcfsPolicy::runnable(const Job& job, const Context& ctx) const {
  return runnable_on_requested_type(job, ctx, true);
}

std::vector<Target> FcfsPolicy::schedule(const Context& ctx) {
  std::vector<Target> targets = keep_running(ctx);
  FreeMap free = taken(ctx, targets);
  for (size_t i = 0; i < ctx.jobs.size(); ++i) {
    const Job& j = *ctx.jobs[i];
    if (j.state != JobState::pending) continue;
    auto a = place_best(ctx, free, j, j.req_gpu, j.req_gpus, true);
    if (!a) break;  // head-of-line blocking
    free.take(*a);
    targets[i].alloc = *a;
    targets[i].reason = "fifo: requested " + std::to_string(j.req_gpus) + " " + j.req_gpu;
  }
  return targets;
}

}  // namespace crius::scheduler
