// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "estimator/toml_util.h"

#include "common/util.h"

#include <algorithm>

namespace crius::estimator::detail {

std::string where(const std::string& file, const toml::source_region& r) {
  std::string s = file;
  if (r.begin.line > 0) s += ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
  return s;
}

std::string format_matches(const std::vector<std::string>& matches) {
  if (matches.empty()) return "";
  std::string s = " (close matches: ";
  for (size_t i = 0; i < matches.size(); ++i) s += (i ? ", " : "") + matches[i];
  return s + ")";
}

// TOML++ parses recursively: every dotted key part, nested table header part, inline
// table and array is a level, and enough of them overflow any stack (a 1 MiB slurmctld
// RPC thread, or an 8 MiB sbatch). Nothing crius reads nests deeper than a few levels, so
// this linear scan refuses anything deeper than kMaxTomlDepth before TOML++ sees it.
std::optional<std::string> too_deep(std::string_view text, int max_depth) {
  int depth = 0;       // open [ and { in values
  std::vector<char> open(static_cast<std::size_t>(max_depth) + 2, 0);  // which, per level
  int key_parts = 1;   // parts of the dotted key (or header) being read
  bool in_key = true;  // at the start of a line: a key or a [table] header comes
  int line = 1;
  auto fail = [&](const std::string& what) {
    return "line " + std::to_string(line) + ": " + what + " nested deeper than " + std::to_string(max_depth) +
           " levels (crius reads no TOML that deep)";
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '#') {  // comment to the end of the line
      while (i < text.size() && text[i] != '\n') ++i;
      --i;
      continue;
    }
    if (c == '"' || c == '\'') {  // strings: basic, literal, and their multi-line forms
      const bool multi = text.substr(i, 3) == std::string(3, c);
      std::size_t j = i + (multi ? 3 : 1);
      for (; j < text.size(); ++j) {
        if (text[j] == '\n') ++line;
        if (c == '"' && text[j] == '\\') { ++j; continue; }
        if (text[j] == c && (!multi || text.substr(j, 3) == std::string(3, c))) break;
      }
      i = multi ? j + 2 : j;
      continue;
    }
    if (c == '\n') {
      ++line;
      if (depth == 0) in_key = true, key_parts = 1;
      continue;
    }
    if (in_key) {
      if (c == '.') {
        if (++key_parts > max_depth) return fail("a dotted key or table name");
      } else if (c == '=') {
        in_key = false;
      } else if (c == ']') {
        in_key = false;
      } else if (c == '}' && depth > 0) {  // an empty inline table
        --depth;
        in_key = false;
      }
      continue;
    }
    if (c == '[' || c == '{') {
      if (++depth > max_depth) return fail("an array or inline table");
      open[static_cast<std::size_t>(depth)] = c;
      if (c == '{') in_key = true, key_parts = 1;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == ',' && depth > 0 && open[static_cast<std::size_t>(depth)] == '{') {
      in_key = true, key_parts = 1;  // the next key of an inline table
    }
  }
  return std::nullopt;
}

Result<toml::table> parse_toml(std::string_view text, const std::string& source) {
  if (auto deep = too_deep(text, kMaxTomlDepth)) return make_error(source + ": " + *deep);
  try {
    return toml::parse(text, std::string_view(source));
  } catch (const toml::parse_error& e) {
    return make_error(where(source, e.source()) + ": " + std::string(e.description()));
  } catch (const std::exception& e) {
    return make_error(source + ": " + e.what());
  }
}

std::optional<Error> TableReader::unknown_keys(const std::vector<std::string>& known) const {
  for (auto&& [k, v] : m_t) {
    if (std::find(known.begin(), known.end(), k.str()) != known.end()) continue;
    return make_error(where(m_file, k.source()) + ": unknown key '" + std::string(k.str()) + "' in " +
                      m_context + format_matches(close_matches(k.str(), known)));
  }
  return std::nullopt;
}

std::string TableReader::at() const { return where(m_file, m_t.source()); }

Error TableReader::missing(std::string_view key) const {
  return make_error(at() + ": missing required key '" + std::string(key) + "' in " + m_context);
}

Error TableReader::bad(std::string_view key, const std::string& what) const {
  const toml::node* n = m_t.get(key);
  std::string loc = n ? where(m_file, n->source()) : at();
  return make_error(loc + ": key '" + std::string(key) + "' in " + m_context + " " + what);
}

Result<std::optional<std::string>> TableReader::str(std::string_view key) const {
  const toml::node* n = m_t.get(key);
  if (!n) return std::optional<std::string>{};
  if (!n->is_string()) return bad(key, "must be a string");
  return std::optional<std::string>{std::string(*n->value<std::string_view>())};
}

Result<std::optional<bool>> TableReader::boolean(std::string_view key) const {
  const toml::node* n = m_t.get(key);
  if (!n) return std::optional<bool>{};
  if (!n->is_boolean()) return bad(key, "must be true or false");
  return std::optional<bool>{*n->value<bool>()};
}

Result<std::optional<long long>> TableReader::integer(std::string_view key, long long lo, long long hi) const {
  const toml::node* n = m_t.get(key);
  if (!n) return std::optional<long long>{};
  if (!n->is_integer()) return bad(key, "must be an integer");
  long long v = *n->value<int64_t>();
  if (v < lo || v > hi)
    return bad(key, "= " + std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "]");
  return std::optional<long long>{v};
}

Result<std::optional<double>> TableReader::number(std::string_view key, double lo, double hi, bool lo_open) const {
  const toml::node* n = m_t.get(key);
  if (!n) return std::optional<double>{};
  double v;
  if (n->is_integer())
    v = static_cast<double>(*n->value<int64_t>());
  else if (n->is_floating_point())
    v = *n->value<double>();
  else
    return bad(key, "must be a number");
  bool low_bad = lo_open ? !(v > lo) : !(v >= lo);
  if (!std::isfinite(v) || low_bad || v > hi)
    return bad(key, "= " + util::fmt(v, 6) + " is out of range " + (lo_open ? "(" : "[") + util::fmt(lo, 6) + ", " +
                        util::fmt(hi, 6) + "]");
  return std::optional<double>{v};
}

Result<std::optional<std::vector<std::string>>> TableReader::str_array(std::string_view key) const {
  const toml::node* n = m_t.get(key);
  if (!n) return std::optional<std::vector<std::string>>{};
  const toml::array* a = n->as_array();
  if (!a) return bad(key, "must be an array of strings");
  std::vector<std::string> out;
  for (const auto& e : *a) {
    if (!e.is_string()) return bad(key, "must be an array of strings");
    out.emplace_back(*e.value<std::string_view>());
  }
  return std::optional<std::vector<std::string>>{std::move(out)};
}

}  // namespace crius::estimator::detail
