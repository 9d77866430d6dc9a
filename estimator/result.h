// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Recoverable errors as values (ccache's pattern): a Result<T> holds either a
// value or a message that names the file, line, key or option at fault.
// Only truly fatal conditions throw; main() maps them to exit codes.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace crius {

struct Error {
  std::string message;
  int code = 0;  // what kind of error, by the caller's convention (job_submit: a Slurm error code)
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_v(std::move(value)) {}           // NOLINT: implicit by design
  Result(Error error) : m_v(std::move(error)) {}       // NOLINT
  bool ok() const { return m_v.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(m_v); }
  const T& value() const& { return std::get<0>(m_v); }
  T&& value() && { return std::get<0>(std::move(m_v)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const std::string& error() const { return std::get<1>(m_v).message; }
  int error_code() const { return std::get<1>(m_v).code; }

 private:
  std::variant<T, Error> m_v;
};

// Result<void>: success or an error message.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : m_error(std::move(error.message)), m_code(error.code), m_failed(true) {}  // NOLINT
  bool ok() const { return !m_failed; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return m_error; }
  int error_code() const { return m_code; }

 private:
  std::string m_error;
  int m_code = 0;
  bool m_failed = false;
};

inline Error make_error(std::string message, int code = 0) { return Error{std::move(message), code}; }

}  // namespace crius
