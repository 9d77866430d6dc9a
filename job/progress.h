// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// A job's progress, as its program reports it and criusd reads it (crius(7)).
//
// Rank 0 of the program prints "crius-progress: DONE/TOTAL" on stderr (crius-train does, at
// most once a second); crius-launch takes those lines out of the job's output and writes the
// latest into the job's Comment as "crius-progress=DONE/TOTAL@TIME" (TIME: Unix seconds of
// the report) at most once per [launch] progress_interval_s; criusd reads the Comment.
// The Comment is the user's: the text is untrusted, parsed strictly and bounded.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace crius::job {

struct Progress {
  long long done = 0, total = 0;  // iterations; 0 <= done <= total, total >= 1
  long long at = 0;               // Unix seconds of the report (a Comment's @TIME); 0: not said
  bool operator==(const Progress&) const = default;
};

inline constexpr std::string_view kProgressLine = "crius-progress: ";
inline constexpr std::string_view kProgressComment = "crius-progress=";

std::string progress_line(const Progress& p);     // "crius-progress: 12/100"
std::string progress_comment(const Progress& p);  // "crius-progress=12/100@1796618601"
// nullopt unless `text` is exactly such a line (resp. Comment): digits only, done <= total,
// total from 1 to 10^12; a Comment's @TIME is optional (crius-launch before 2026-12 wrote none).
std::optional<Progress> parse_progress_line(std::string_view text);
std::optional<Progress> parse_progress_comment(std::string_view text);

}  // namespace crius::job
