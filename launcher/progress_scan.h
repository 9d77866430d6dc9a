// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Progress read from a training framework's own log lines (crius-launch(1), PROGRESS): each
// rank's shim scans its program's output with a pattern and reports what it finds as crius's
// progress line, so no training code needs to print crius's.
#pragma once

#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "estimator/result.h"
#include "job/progress.h"

namespace crius::launcher {

// The patterns the frameworks log with (an ECMAScript regex; group 1 the steps done, group 2,
// where there is one, the total):
//   megatron:   "iteration      120/  500000 |" (Megatron-LM's training log, every release)
//   torchtitan: "step: 120  loss: ..."          (its total is the job's, CRIUS_ITERS)
inline constexpr std::string_view kMegatronProgress = R"(iteration\s+(\d+)\s*/\s*(\d+))";
inline constexpr std::string_view kTorchtitanProgress = R"(step:\s*(\d+))";

class ProgressScan {
 public:
  // `pattern`: megatron, torchtitan or a regex with one or two groups; `total`: the total for a
  // pattern without a second group (none: such lines are not progress). Errors name the pattern.
  static Result<ProgressScan> make(std::string_view pattern, std::optional<long long> total);
  // Reads output as it comes (any chunks); returns the progress of the last complete line that
  // matched, if it is new.
  std::optional<job::Progress> feed(std::string_view data);

 private:
  std::regex m_re;
  std::optional<long long> m_total;
  std::string m_line;
  std::optional<job::Progress> m_last;
  std::optional<job::Progress> line_done();
};

}  // namespace crius::launcher
