// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// FCFS: every job gets exactly the GPU type and count it asked for, in submission order.
// `fcfs` keeps one queue per GPU type, as most sites run one partition per type: a blocked
// head holds back only the jobs that asked for its type. `fcfs-strict` is one queue over all
// types: the head blocks everyone behind it. Never moves, resizes or preempts.

#include "scheduler/policy.h"

namespace crius::scheduler {

class FcfsPolicy final : public Policy {
 public:
  FcfsPolicy(const PolicyOptions& options, bool per_type) : m_options(options), m_per_type(per_type) {}
  std::string name() const override { return m_per_type ? "fcfs" : "fcfs-strict"; }
  std::vector<Target> schedule(const Context& ctx) override;
  Result<void> runnable(const Job& job, const Context& ctx) const override;
 private:
  PolicyOptions m_options;
  bool m_per_type;
};

}  // namespace crius::scheduler
