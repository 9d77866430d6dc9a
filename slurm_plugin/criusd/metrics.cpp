// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/criusd/metrics.h"

#include "common/prometheus.h"
#include "common/util.h"

namespace crius::slurm {

using prometheus::label;
using prometheus::number;

void Metrics::round_decided(const Round& r, double decide_s) {
  ++m_rounds;
  m_decide_s_last = decide_s;
  m_decide_s_sum += decide_s;
  m_jobs_by_state.clear();
  m_not_considered.clear();
  for (const auto& j : r.jobs) {
    ++m_jobs_by_state[j.state];
    if (!j.not_considered.empty()) ++m_not_considered[j.not_considered];
  }
}

std::string Metrics::text() const {
  std::string t;
  auto head = [&](const char* name, const char* type, const char* help) { prometheus::family(t, name, type, help); };
  head("crius_criusd_acting", "gauge",
       "1 while this criusd acts, 0 while it stands by (another slurmctld is in control: criusd(8), FAILOVER).");
  t += std::string("crius_criusd_acting ") + (m_acting ? "1" : "0") + "\n";
  head("crius_criusd_rounds_total", "counter", "Rounds that read Slurm and decided.");
  t += "crius_criusd_rounds_total " + std::to_string(m_rounds) + "\n";
  head("crius_criusd_round_failures_total", "counter",
       "Rounds that could not read Slurm or decide.");
  t += "crius_criusd_round_failures_total " + std::to_string(m_round_failures) + "\n";
  head("crius_criusd_decide_seconds", "gauge", "Time the last round took to decide.");
  t += "crius_criusd_decide_seconds " + number(m_decide_s_last) + "\n";
  head("crius_criusd_decide_seconds_total", "counter", "Time all rounds took to decide.");
  t += "crius_criusd_decide_seconds_total " + number(m_decide_s_sum) + "\n";
  head("crius_criusd_actions_total", "counter",
       "Steps applied to jobs by kind: update_pending (a pending job's new Cell), checkpoint (a move "
       "starts), requeue, finish_move (a move ends).");
  for (const auto& [k, n] : m_actions) t += "crius_criusd_actions_total{kind=\"" + label(k) + "\"} " + std::to_string(n) + "\n";
  head("crius_criusd_action_failures_total", "counter", "Steps Slurm refused, by kind.");
  for (const auto& [k, n] : m_action_failures)
    t += "crius_criusd_action_failures_total{kind=\"" + label(k) + "\"} " + std::to_string(n) + "\n";
  head("crius_criusd_jobs", "gauge", "Crius jobs in the last round by Slurm state.");
  for (const auto& [s, n] : m_jobs_by_state) t += "crius_criusd_jobs{state=\"" + label(s) + "\"} " + std::to_string(n) + "\n";
  head("crius_criusd_jobs_not_considered", "gauge",
       "Crius jobs of the last round the policy may not place or move, by the kind of reason (criusd(8)).");
  for (const auto& [r, n] : m_not_considered)
    t += "crius_criusd_jobs_not_considered{reason=\"" + label(r) + "\"} " + std::to_string(n) + "\n";
  return t;
}

Result<void> Metrics::write(const std::string& path) const {
  if (auto w = util::replace_public_file(path, text()); !w) return make_error("metrics_file " + w.error());
  return {};
}

}  // namespace crius::slurm
