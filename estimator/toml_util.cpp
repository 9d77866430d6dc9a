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

Result<toml::table> parse_toml(std::string_view text, const std::string& source) {
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
