// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Strict reading of one JSON object: unknown keys, wrong types and values out of
// range are errors that name the object (`what`) and the key.
#pragma once

#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "estimator/result.h"

namespace crius::util {

class JsonObject {
 public:
  JsonObject(const nlohmann::json& j, std::string what) : m_j(j), m_what(std::move(what)) {}
  Result<void> only(std::initializer_list<const char*> keys) const {
    if (!m_j.is_object()) return make_error(m_what + ": must be a JSON object");
    for (const auto& item : m_j.items()) {
      bool known = false;
      for (const char* k : keys) known = known || item.key() == k;
      if (!known) {
        std::string list;
        for (const char* k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
        return make_error(m_what + ": unknown key '" + item.key().substr(0, 64) + "' (known: " + list + ")");
      }
    }
    return {};
  }
  bool has(const char* key) const { return m_j.contains(key); }
  Result<long long> integer(const char* key, long long lo, long long hi, std::optional<long long> fallback = {}) const {
    if (!m_j.contains(key)) {
      if (fallback) return *fallback;
      return make_error(m_what + ": key '" + key + "' is missing");
    }
    const auto& v = m_j[key];
    if (!v.is_number_integer()) return make_error(m_what + ": key '" + key + "' must be an integer");
    long long n = v.is_number_unsigned() && v.get<unsigned long long>() > 1ull << 62 ? hi + 1 : v.get<long long>();
    if (n < lo || n > hi)
      return make_error(m_what + ": key '" + key + "' must be " + std::to_string(lo) + ".." + std::to_string(hi));
    return n;
  }
  Result<std::string> string(const char* key, std::optional<std::string> fallback = {}) const {
    if (!m_j.contains(key)) {
      if (fallback) return *fallback;
      return make_error(m_what + ": key '" + key + "' is missing");
    }
    if (!m_j[key].is_string()) return make_error(m_what + ": key '" + key + "' must be a string");
    return m_j[key].get<std::string>();
  }
  Result<double> number(const char* key, double lo, double hi, std::optional<double> fallback = {}) const {
    if (!m_j.contains(key)) {
      if (fallback) return *fallback;
      return make_error(m_what + ": key '" + key + "' is missing");
    }
    const auto& v = m_j[key];
    if (!v.is_number()) return make_error(m_what + ": key '" + key + "' must be a number");
    double d = v.get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) return make_error(m_what + ": key '" + key + "' is out of range");
    return d;
  }
  Result<bool> boolean(const char* key, bool fallback) const {
    if (!m_j.contains(key)) return fallback;
    if (!m_j[key].is_boolean()) return make_error(m_what + ": key '" + key + "' must be true or false");
    return m_j[key].get<bool>();
  }

 private:
  const nlohmann::json& m_j;
  std::string m_what;
};
// Assigns the value of a Result to `out`, or returns its error.
#define CRIUS_JSON_GET(out, expr)                        \
  do {                                                   \
    auto crius_json_r_ = (expr);                         \
    if (!crius_json_r_) return crius::make_error(crius_json_r_.error()); \
    out = static_cast<decltype(out)>(*crius_json_r_);    \
  } while (0)

}  // namespace crius::util
