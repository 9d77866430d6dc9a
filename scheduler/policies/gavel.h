// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Gavel (OSDI'20), max-sum-throughput policy: an LP (GLPK) over the share of
// time each job spends on each GPU type; jobs run with their requested count
// (Gavel never changes it) on the type the LP favours, highest share first.

#include "scheduler/policy.h"

namespace crius::scheduler {

class GavelPolicy final : public Policy {
 public:
  explicit GavelPolicy(const PolicyOptions& options) : m_options(options) {}
  std::string name() const override { return "gavel"; }
  std::vector<Target> schedule(const Context& ctx) override;
  Result<void> runnable(const Job& job, const Context& ctx) const override;
 private:
  PolicyOptions m_options;
};

}  // namespace crius::scheduler
