// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// criusd's counters in the Prometheus text exposition format, written after every round to
// [criusd] metrics_file for node_exporter's textfile collector (criusd(8), METRICS).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "estimator/result.h"
#include "slurm_plugin/criusd/controller.h"

namespace crius::slurm {

class Metrics {
 public:
  // A round read Slurm and decided (decide_s: the controller's time); its jobs by state and,
  // for those the policy may not touch, by the kind of reason.
  void round_decided(const Round& r, double decide_s);
  void round_failed() { ++m_round_failures; }
  // Whether this criusd acts (beside the slurmctld in control) or stands by (failover.h).
  void acting(bool yes) { m_acting = yes; }
  void action(Action::Kind kind, bool applied) { ++(applied ? m_actions : m_action_failures)[to_string(kind)]; }

  std::string text() const;
  // Written whole or not at all (a temporary file renamed over it), mode 0644: the counters hold
  // no user's data.
  Result<void> write(const std::string& path) const;

 private:
  std::uint64_t m_rounds = 0, m_round_failures = 0;
  bool m_acting = true;
  double m_decide_s_sum = 0, m_decide_s_last = 0;
  std::map<std::string, std::uint64_t> m_actions, m_action_failures;  // by Action kind
  std::map<std::string, std::uint64_t> m_jobs_by_state, m_not_considered;  // of the last round
};

}  // namespace crius::slurm
