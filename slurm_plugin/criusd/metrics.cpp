#include "slurm_plugin/criusd/metrics.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/util.h"

namespace crius::slurm {

namespace {

// A label value as the exposition format wants it: backslash, quote and newline escaped
// (Slurm's job state names and criusd's own kinds: bounded anyway).
std::string label(std::string_view v) {
  std::string out;
  for (char c : v.substr(0, 128)) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

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
  auto head = [&](const char* name, const char* type, const char* help) {
    t += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
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
