#pragma once
// FCFS: strict FIFO, every job gets exactly the GPU type and count it asked for;
// the queue head blocks the jobs behind it. Never moves, resizes or preempts.

#include "scheduler/policy.h"

namespace crius::scheduler {

class FcfsPolicy final : public Policy {
 public:
  explicit FcfsPolicy(const PolicyOptions& options) : m_options(options) {}
  std::string name() const override { return "fcfs"; }
  std::vector<Target> schedule(const Context& ctx) override;
  Result<void> runnable(const Job& job, const Context& ctx) const override;
 private:
  PolicyOptions m_options;
};

}  // namespace crius::scheduler
