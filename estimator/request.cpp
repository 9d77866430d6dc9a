// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Checks of an estimation request before any estimate.
#include "estimator/cost.h"
#include "estimator/framework.h"

namespace crius::estimator {

using detail::kAlpaMicroBatches;

Result<void> validate_request(const Request& req) {
  const Pins& p = req.pins;
  const int B = req.global_batch;
  if (B <= 0) return make_error("--global-batch must be > 0 (got " + std::to_string(B) + ")");
  if (B > 100000000) return make_error("--global-batch " + std::to_string(B) + " is absurd (more than 10^8 samples)");
  auto pos = [](const std::optional<int>& v, const char* name, int hi) -> Result<void> {
    if (v && (*v < 1 || *v > hi))
      return make_error(std::string(name) + " must be in [1, " + std::to_string(hi) + "] (got " + std::to_string(*v) + ")");
    return {};
  };
  for (auto r : {pos(p.tp, "--tp", 64), pos(p.dp, "--dp", 10000000), pos(p.cp, "--cp", 1024), pos(p.micro_batch_size, "--micro-batch-size", 100000000),
                 pos(p.micro_batches, "--micro-batches", 100000000)})
    if (!r) return r;
  if (p.zero && (*p.zero < 0 || *p.zero > 3)) return make_error("--zero must be 0, 1, 2 or 3 (got " + std::to_string(*p.zero) + ")");
  if (p.zero && *p.zero > 1)
    if (auto ok = check_zero(req.framework, req.model, *p.zero, 2, 1, 1, nullptr); !ok)
      return make_error("--zero " + std::to_string(*p.zero) + ": " + ok.error());
  if (p.cp && *p.cp > 1)
    if (auto ok = check_context_parallel(req.framework, req.model, *p.cp, nullptr); !ok)
      return make_error("--cp " + std::to_string(*p.cp) + ": " + ok.error());
  if (p.micro_batches && B % *p.micro_batches != 0)
    return make_error("--micro-batches " + std::to_string(*p.micro_batches) + " does not divide --global-batch " + std::to_string(B));
  if (p.micro_batch_size && B % *p.micro_batch_size != 0)
    return make_error("--micro-batch-size " + std::to_string(*p.micro_batch_size) + " does not divide --global-batch " + std::to_string(B));
  if (p.dp && B % *p.dp != 0)
    return make_error("--dp " + std::to_string(*p.dp) + " does not divide --global-batch " + std::to_string(B));
  if (p.micro_batch_size && p.micro_batches && B % (static_cast<long long>(*p.micro_batch_size) * *p.micro_batches) != 0)
    return make_error("--micro-batch-size x --micro-batches does not divide --global-batch " + std::to_string(B));
  if (p.dp && p.micro_batch_size && p.micro_batches &&
      static_cast<long long>(*p.dp) * *p.micro_batch_size * *p.micro_batches != B)
    return make_error("--dp x --micro-batch-size x --micro-batches must equal --global-batch " + std::to_string(B));
  if (p.expert_parallel && !*p.expert_parallel && req.model.family != Family::moe)
    return make_error("--expert-parallel off: model '" + req.model.id + "' has no experts");
  if (req.runtime == Runtime::alpa) {
    if (p.schedule && p.schedule->kind != Schedule::Kind::gpipe)
      return make_error("--schedule " + to_string(*p.schedule) + " is not available with --runtime alpa (gpipe only)");
    if (p.recompute && *p.recompute != Recompute::full)
      return make_error("--recompute " + std::string(to_string(*p.recompute)) + " is not available with --runtime alpa (full only)");
    if (p.micro_batches && *p.micro_batches != kAlpaMicroBatches)
      return make_error("--micro-batches must be 16 with --runtime alpa");
    if (p.sequence_parallel && *p.sequence_parallel)
      return make_error("--sequence-parallel on is not available with --runtime alpa");
    if (B % kAlpaMicroBatches != 0)
      return make_error("--global-batch " + std::to_string(B) + " is not divisible by the 16 micro-batches of --runtime alpa");
  } else {
    if (p.schedule && p.schedule->kind == Schedule::Kind::gpipe)
      return make_error("--schedule gpipe is not available with --runtime megatron (1f1b or interleaved:V)");
  }
  if (req.model.layers <= 0) return make_error("model '" + req.model.id + "' has no layers");
  return check_request(req.framework, req.model, req.runtime);
}

}  // namespace crius::estimator
