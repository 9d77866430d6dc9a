// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher/progress_scan.h"

#include "common/util.h"

namespace crius::launcher {

Result<ProgressScan> ProgressScan::make(std::string_view pattern, std::optional<long long> total) {
  const std::string_view re = pattern == "megatron" ? kMegatronProgress : pattern == "torchtitan" ? kTorchtitanProgress : pattern;
  ProgressScan s;
  try {
    s.m_re = std::regex(std::string(re), std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return make_error(util::shown(pattern) + " is not a regular expression: " + e.what());
  }
  if (s.m_re.mark_count() < 1 || s.m_re.mark_count() > 2)
    return make_error(util::shown(pattern) + " needs one group (the steps done) or two (done, total), not " +
                      std::to_string(s.m_re.mark_count()));
  s.m_total = total;
  return s;
}

std::optional<job::Progress> ProgressScan::feed(std::string_view data) {
  std::optional<job::Progress> found;
  for (char c : data) {
    if (c == '\n' || c == '\r') {
      if (auto p = line_done()) found = p;
      m_line.clear();
    } else if (m_line.size() < 4096) {  // a longer line is no log line of a framework's
      m_line.push_back(c);
    }
  }
  return found;
}

std::optional<job::Progress> ProgressScan::line_done() {
  std::smatch m;
  if (m_line.empty() || !std::regex_search(m_line, m, m_re)) return std::nullopt;
  const auto done = util::to_int(m[1].str());
  std::optional<long long> total = m_total;
  if (m.size() > 2 && m[2].matched) total = util::to_int(m[2].str());
  if (!done || !total) return std::nullopt;
  auto p = job::parse_progress_line(std::string(job::kProgressLine) + std::to_string(*done) + "/" + std::to_string(*total));
  if (!p || (m_last && *m_last == *p)) return std::nullopt;
  m_last = p;
  return p;
}

}  // namespace crius::launcher
