// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The Prometheus text exposition format, as criusd and job_submit write their counters for
// node_exporter's textfile collector (criusd(8), job_submit_crius(8): METRICS).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace crius::prometheus {

// "# HELP name help" and "# TYPE name type" before a metric's samples.
inline void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ").append(name).append(" ")
      .append(type).append("\n");
}

// A label value: backslash, quote and newline escaped, at most 128 bytes.
inline std::string label(std::string_view v) {
  std::string out;
  for (char c : v.substr(0, 128)) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

inline std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace crius::prometheus
