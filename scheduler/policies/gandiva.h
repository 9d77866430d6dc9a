// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Gandiva (OSDI'18), as the Crius paper ran it: keeps the requested GPU type;
// packs jobs without head-of-line blocking, migrates jobs to consolidate them,
// grows jobs into idle GPUs and shrinks them back when others wait.

#include "scheduler/policy.h"

namespace crius::scheduler {

class GandivaPolicy final : public Policy {
 public:
  explicit GandivaPolicy(const PolicyOptions& options) : m_options(options) {}
  std::string name() const override { return "gandiva"; }
  std::vector<Target> schedule(const Context& ctx) override;
  Result<void> runnable(const Job& job, const Context& ctx) const override;
 private:
  PolicyOptions m_options;
};

}  // namespace crius::scheduler
