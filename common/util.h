// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Small helpers every part of crius shares: splitting and joining text, numbers
// parsed strictly and printed compactly, CSV lines (with quotes), files,
// percentiles, and a 64-bit digest.  Nothing here throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/result.h"

namespace crius::util {

// Leading and trailing blanks (space, tab, CR, LF) removed.
std::string_view trim(std::string_view s);
// Pieces between `sep`, each trimmed; empty pieces are kept unless skip_empty.
std::vector<std::string> split(std::string_view s, char sep, bool skip_empty = false);
std::string join(const std::vector<std::string>& items, std::string_view sep);

// A value safe to show in a message or a log line: quoted, printable ASCII only (anything
// else becomes '?'), at most 64 characters then "...".
std::string shown(std::string_view text);

std::string lower(std::string_view s);
// Up to `max` of `candidates` close to `word` (case-insensitive edit distance, shared prefix
// or substring), closest first: the "did you mean" of every error about a name.
std::vector<std::string> close_matches(std::string_view word, const std::vector<std::string>& candidates,
                                       std::size_t max = 5);

// Text safe to log or return to a user: every control character and non-ASCII byte
// becomes '?' (no injected line, no terminal escape), at most max_len bytes then "...".
std::string printable(std::string_view text, std::size_t max_len);

// Whole-string integer / finite number, nothing else ("12", not "12x" or " 12").
std::optional<long long> to_int(std::string_view s);
std::optional<double> to_double(std::string_view s);
// The same into `out`; false (out unchanged) when `s` is not such a number.
bool parse_number(std::string_view s, double& out);
bool parse_number(std::string_view s, int& out);
// printf's %.<precision>g ("0.1235", "1.5e+04"): compact numbers for logs and messages.
std::string fmt(double v, int precision = 4);
// Fixed point with `decimals` digits ("12.3").
std::string fixed(double v, int decimals = 1);

// One CSV line: fields split at commas outside double quotes, quotes removed ("" is a
// literal quote), blanks around fields trimmed, a trailing CR ignored.
std::vector<std::string> split_csv(std::string_view line);

// The whole file; the error names the path and the reason ("PATH: cannot open file (...)").
Result<std::string> read_file(const std::string& path);
// Writes all of `text` to an open file descriptor (EINTR retried); false on an error (errno).
bool write_all(int fd, std::string_view text);
// Writes `text` to `path`, readable by its owner only (mode 0600, also when it existed), never
// through a symbolic link: for files that hold other users' data.
Result<void> write_private_file(const std::string& path, std::string_view text);
// Replaces `path` with `text` whole or not at all (PATH.tmp renamed over it), mode 0644, never
// through a symbolic link: for files every user may read (metrics).
Result<void> replace_public_file(const std::string& path, std::string_view text);

// Percentiles of `v` at q in [0, 1]; 0 for an empty set.
// Nearest rank (the value at rank ceil(q*n)): what crius-sim reports.
double percentile_nearest_rank(std::vector<double> v, double q);
// Linear interpolation between the closest ranks: what the estimator benchmarks report.
double percentile_linear(std::vector<double> v, double q);
double median(std::vector<double> v);

// FNV-1a, 64 bits, as 16 hex digits: identifies a text (a plan, a model file), not a
// cryptographic hash.
std::uint64_t fnv1a64(std::string_view text);
std::string hex64(std::uint64_t v);

}  // namespace crius::util
