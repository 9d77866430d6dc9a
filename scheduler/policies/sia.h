// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Sia (SOSP'23): an ILP (GLPK) choosing one (GPU type, count) configuration
// per job to maximise the sum of concave (square-root) normalised goodput,
// with a restart penalty on configurations that differ from the current one.

#include "scheduler/policy.h"

namespace crius::scheduler {

class SiaPolicy final : public Policy {
 public:
  explicit SiaPolicy(const PolicyOptions& options) : m_options(options) {}
  std::string name() const override { return "sia"; }
  std::vector<Target> schedule(const Context& ctx) override;
 private:
  PolicyOptions m_options;
};

}  // namespace crius::scheduler
