// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "job/progress.h"

#include "common/util.h"

namespace crius::job {

namespace {

std::optional<Progress> parse_after(std::string_view text, std::string_view prefix, bool timed) {
  if (text.size() > 64 || text.substr(0, prefix.size()) != prefix) return std::nullopt;
  text.remove_prefix(prefix.size());
  auto digits = [](std::string_view s) {
    if (s.empty() || s.size() > 13) return false;
    for (char c : s)
      if (c < '0' || c > '9') return false;
    return true;
  };
  Progress p;
  if (const size_t at = text.find('@'); timed && at != std::string_view::npos) {
    if (!digits(text.substr(at + 1))) return std::nullopt;
    p.at = *util::to_int(text.substr(at + 1));
    text = text.substr(0, at);
  }
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view a = text.substr(0, slash), b = text.substr(slash + 1);
  if (!digits(a) || !digits(b)) return std::nullopt;
  p.done = *util::to_int(a);
  p.total = *util::to_int(b);
  if (p.total < 1 || p.total > 1'000'000'000'000LL || p.done > p.total) return std::nullopt;
  return p;
}

}  // namespace

std::string progress_line(const Progress& p) {
  return std::string(kProgressLine) + std::to_string(p.done) + "/" + std::to_string(p.total);
}

std::string progress_comment(const Progress& p) {
  return std::string(kProgressComment) + std::to_string(p.done) + "/" + std::to_string(p.total) +
         (p.at > 0 ? "@" + std::to_string(p.at) : "");
}

std::optional<Progress> parse_progress_line(std::string_view text) { return parse_after(text, kProgressLine, false); }
std::optional<Progress> parse_progress_comment(std::string_view text) {
  return parse_after(text, kProgressComment, true);
}

}  // namespace crius::job
