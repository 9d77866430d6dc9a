// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Internal helpers for strict TOML reading: every error names file:line:col
// and the key; unknown keys are errors with close matches.
#pragma once

#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "common/util.h"
#include "estimator/result.h"

namespace crius::estimator::detail {

std::string where(const std::string& file, const toml::source_region& r);
using util::close_matches;
using util::lower;
std::string format_matches(const std::vector<std::string>& matches);  // " (close matches: a, b)" or ""

// The deepest nesting crius accepts in any TOML document (dotted keys, table headers,
// arrays and inline tables together).
inline constexpr int kMaxTomlDepth = 16;
// The line and the kind of nesting that is deeper than max_depth, or nullopt: a linear
// scan, safe on any input, that runs before the (recursive) parser.
std::optional<std::string> too_deep(std::string_view text, int max_depth);
// Parses TOML text; a syntax error becomes "file:line:col: description"; a document
// nested deeper than kMaxTomlDepth is refused before it is parsed.
Result<toml::table> parse_toml(std::string_view text, const std::string& source);
using util::read_file;

// Reads keys of one table with checks.  `context` names the table in messages,
// e.g. "[gpu.a100]" or "[[partition]] #2".
class TableReader {
 public:
  TableReader(const toml::table& t, const std::string& file, std::string context)
      : m_t(t), m_file(file), m_context(std::move(context)) {}

  // Error for the first key not in `known` (nullopt when all are known).
  std::optional<Error> unknown_keys(const std::vector<std::string>& known) const;

  Result<std::optional<std::string>> str(std::string_view key) const;
  Result<std::optional<bool>> boolean(std::string_view key) const;
  // Integers within [lo, hi]; floats are rejected.
  Result<std::optional<long long>> integer(std::string_view key, long long lo, long long hi) const;
  // Numbers (integer or float) within (lo, hi] when lo_open, else [lo, hi].
  Result<std::optional<double>> number(std::string_view key, double lo, double hi, bool lo_open = true) const;
  Result<std::optional<std::vector<std::string>>> str_array(std::string_view key) const;

  Error missing(std::string_view key) const;
  Error bad(std::string_view key, const std::string& what) const;  // at the key's value
  std::string at() const;  // location of the table itself
  const toml::table& table() const { return m_t; }
  const std::string& file() const { return m_file; }
  const std::string& context() const { return m_context; }

 private:
  const toml::table& m_t;
  const std::string& m_file;
  std::string m_context;
};

// Shorthand: fetch into `out` (required or optional), returning an Error early.
#define CRIUS_TRY_ASSIGN(out, expr)                  \
  do {                                               \
    auto crius_r_ = (expr);                          \
    if (!crius_r_) return crius::make_error(crius_r_.error()); \
    if (*crius_r_) out = **crius_r_;                 \
  } while (0)

#define CRIUS_TRY_REQUIRED(out, reader, key, expr)   \
  do {                                               \
    auto crius_r_ = (expr);                          \
    if (!crius_r_) return crius::make_error(crius_r_.error()); \
    if (!*crius_r_) return (reader).missing(key);    \
    out = **crius_r_;                                \
  } while (0)

}  // namespace crius::estimator::detail
