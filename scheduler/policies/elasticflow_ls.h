// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// ElasticFlow (ASPLOS'23) with loosened deadlines: fixed GPU type, elastic
// count. Each job gets the fewest GPUs that meet its deadline (earliest
// deadline first); jobs that cannot meet it run best-effort instead of being
// dropped; spare GPUs go to the largest marginal gains.

#include "scheduler/policy.h"

namespace crius::scheduler {

class ElasticFlowLsPolicy final : public Policy {
 public:
  explicit ElasticFlowLsPolicy(const PolicyOptions& options) : m_options(options) {}
  std::string name() const override { return "elasticflow-ls"; }
  std::vector<Target> schedule(const Context& ctx) override;
  Result<void> runnable(const Job& job, const Context& ctx) const override;
 private:
  PolicyOptions m_options;
};

}  // namespace crius::scheduler
