#include "estimator/toml_util.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace crius::estimator::detail {

std::string where(const std::string& file, const toml::source_region& r) {
  std::string s = file;
  if (r.begin.line > 0) s += ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

static size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                          std::tolower(static_cast<unsigned char>(b[j - 1]))
                                      ? 0
                                      : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> close_matches(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::pair<size_t, std::string>> scored;
  std::string lw = lower(word);
  size_t limit = std::max<size_t>(2, word.size() / 3);
  for (const auto& c : candidates) {
    std::string lc = lower(c);
    size_t d = edit_distance(lw, lc);
    bool sub = !lw.empty() && lw.size() >= 2 && (lc.find(lw) != std::string::npos || lw.find(lc) != std::string::npos);
    size_t prefix = 0;
    while (prefix < lw.size() && prefix < lc.size() && lw[prefix] == lc[prefix]) ++prefix;
    if (d <= limit || sub || prefix >= 3) scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < 5; ++i) out.push_back(scored[i].second);
  return out;
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

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return make_error(path + ": read error");
  return ss.str();
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

static std::string fmt_num(double v) {
  std::ostringstream ss;
  ss << v;
  return ss.str();
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
    return bad(key, "= " + fmt_num(v) + " is out of range " + (lo_open ? "(" : "[") + fmt_num(lo) + ", " +
                        fmt_num(hi) + "]");
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
