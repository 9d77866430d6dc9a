// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// A plan in Megatron-LM's own language: its command-line arguments (crius-launch(1),
// FRAMEWORKS), the one place that maps crius's plan, runtime profile and model onto them.
#pragma once

#include <string>
#include <vector>

#include "estimator/estimator.h"

namespace crius::launcher {

// Megatron-LM's arguments for `plan` on release `f`: the parallel layout and the layer split,
// micro-batching, schedule, recomputation, each switch of the runtime profile `stack` and the
// model's dimensions, so that what runs is what was estimated. An error, never a shorter list,
// where the release cannot run the plan exactly (estimator::check_plan says why).
Result<std::vector<std::string>> megatron_args(const estimator::Plan& plan, const estimator::Model& model,
                                               const estimator::StackSwitches& stack, const estimator::Framework& f);

// The user's command may already set some of these arguments: an error naming the first whose
// value differs from crius's (Megatron and torchtitan take the last one given, silently). For
// torchtitan's flags too: '_' and '-' in a flag's name are the same.
Result<void> check_command(const std::vector<std::string>& command, const std::vector<std::string>& args);

}  // namespace crius::launcher
