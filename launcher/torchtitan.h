// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// A plan in torchtitan's own language: its --section.option flags (crius-launch(1), FRAMEWORKS),
// the one place that maps crius's plan, runtime profile and model onto them.
#pragma once

#include <string>
#include <vector>

#include "estimator/estimator.h"

namespace crius::launcher {

// torchtitan's flags for `plan` on release `f`: the model's flavor and sequence length, the batch
// and its micro-batches, data parallelism as FSDP (ZeRO-1 plans: parameters gathered once per
// step, --parallelism.fsdp_reshard_after_forward never) or DDP (alone), TP, the pipeline's
// schedule and each stage's first layer, recomputation and async TP where the profile overlaps TP
// communication. An error, never a shorter list, where the release cannot run the plan exactly
// (estimator::check_plan says why).
Result<std::vector<std::string>> torchtitan_args(const estimator::Plan& plan, const estimator::Model& model,
                                                 const estimator::StackSwitches& stack, const estimator::Framework& f);

// The same flags without asking the rule first: for the test that proves torchtitan's own checks
// refuse plans the rule keeps from its jobs (tests/cli/torchtitan_validate.sh). Never launched.
std::vector<std::string> torchtitan_flags_unchecked(const estimator::Plan& plan, const estimator::Model& model,
                                                    const estimator::StackSwitches& stack, const estimator::Framework& f);

}  // namespace crius::launcher
