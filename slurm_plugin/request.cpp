// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/request.h"

#include <array>
#include <charconv>
#include <cstring>

#include "estimator/estimator.h"
#include "job/record.h"

namespace crius::slurm {

namespace {

bool all_of(std::string_view s, bool (*pred)(char)) {
  for (char c : s)
    if (!pred(c)) return false;
  return true;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '.' || c == '_' ||
         c == '-' || c == '+';
}

// Non-negative decimal without sign, at most `max`.
std::optional<long> to_long(std::string_view s, long max) {
  if (s.empty() || s.size() > 18 || !all_of(s, is_digit)) return std::nullopt;
  long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

}  // namespace

const std::vector<OptionInfo>& options() {
  static const std::vector<OptionInfo> table = {
      {Option::model, "crius-model", "NAME|FILE",
       "[crius] model to train: a name from the crius model catalogue or a model TOML file "
       "(read here and sent with the job)"},
      {Option::global_batch, "crius-global-batch", "N",
       "[crius] global batch size (samples per optimizer step); required with --crius-model"},
      {Option::iters, "crius-iters", "N",
       "[crius] training iterations, so crius can estimate the run time"},
      {Option::cell, "crius-cell", "auto|TYPE[:NODESxGPUS[:STAGES]]",
       "[crius] pin the Cell: GPU type, optionally nodes x GPUs per node and pipeline stages "
       "(default auto)"},
      {Option::runtime, "crius-runtime", "megatron|megatron-core|alpa",
       "[crius] runtime profile the plan is made for: megatron, megatron-core or alpa (default: the framework's)"},
      {Option::framework, "crius-framework", "crius-train|megatron[:VERSION]|torchtitan[:VERSION]",
       "[crius] the framework that runs the job: crius offers only Cells whose plan it can run, "
       "e.g. megatron:0.8 for Megatron-Core 0.8 (default: the site's)"},
      {Option::deadline, "crius-deadline", "TIME",
       "[crius] wanted run time (Slurm time format, e.g. 4:00:00); with --crius-iters crius "
       "picks the smallest Cell that meets it"},
      {Option::max_gpus, "crius-max-gpus", "N",
       "[crius] the largest Cell the job accepts, in GPUs, at submission and in every move"},
      {Option::explain, "crius-explain", nullptr,
       "[crius] print the ranked Cells and the chosen plan before submitting"},
      {Option::movable, "crius-movable", nullptr,
       "[crius] the job checkpoints on criusd's signal and resumes after a requeue: criusd may move it "
       "while it runs (batch jobs only)"},
      {Option::checkpoint_grace, "crius-checkpoint-grace", "SECONDS",
       "[crius] with --crius-movable: time the job needs to save its checkpoint after criusd's signal "
       "(default and maximum: the site's)"},
      {Option::checkpoint_signal, "crius-checkpoint-signal", "USR1|USR2|TERM|INT|HUP|URG|none",
       "[crius] the signal the job's program saves a checkpoint on; each rank gets criusd's request as it, "
       "and only if it handles it (default: the framework's: TERM for Megatron-LM, none for torchtitan, "
       "else USR1)"},
  };
  return table;
}

std::string option_env_name(Option o) {
  for (const auto& info : options()) {
    if (info.id != o) continue;
    std::string name(kOptionPrefix);
    for (const char* p = info.name; *p; ++p) {
      char c = *p;
      bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c);
      name += alnum ? c : '_';
    }
    return name;
  }
  return {};
}

Result<int> parse_global_batch(std::string_view text) {
  auto v = to_long(text, kMaxGlobalBatch);
  if (!v || *v < 1)
    return make_error("--crius-global-batch: " + shown(text) + " is not a whole number from 1 to " +
                      std::to_string(kMaxGlobalBatch));
  return static_cast<int>(*v);
}

Result<long> parse_iters(std::string_view text) {
  auto v = to_long(text, kMaxIters);
  if (!v || *v < 1)
    return make_error("--crius-iters: " + shown(text) + " is not a whole number from 1 to " +
                      std::to_string(kMaxIters));
  return *v;
}

Result<estimator::Cell> parse_cell(std::string_view text) {
  auto c = estimator::parse_cell(text);
  if (!c) return make_error("--crius-cell: " + c.error());
  return c;
}

Result<estimator::Runtime> parse_runtime_name(std::string_view text) {
  auto r = estimator::parse_runtime(text);
  if (!r) return make_error("--crius-runtime: " + shown(text) + " is not megatron, megatron-core or alpa");
  return r;
}

Result<estimator::Framework> parse_framework_name(std::string_view text) {
  auto f = estimator::parse_framework(text);
  if (!f) return make_error("--crius-framework: " + f.error());
  return f;
}

Result<int> parse_max_gpus(std::string_view text) {
  auto v = to_long(text, kMaxUserGpus);
  if (!v || *v < 1)
    return make_error("--crius-max-gpus: " + shown(text) + " is not a whole number from 1 to " +
                      std::to_string(kMaxUserGpus));
  return static_cast<int>(*v);
}

Result<int> parse_checkpoint_grace(std::string_view text) {
  auto v = to_long(text, kMaxCheckpointGraceS);
  if (!v || *v < 1)
    return make_error("--crius-checkpoint-grace: " + shown(text) + " is not a whole number of seconds from 1 to " +
                      std::to_string(kMaxCheckpointGraceS));
  return static_cast<int>(*v);
}

Result<long> parse_deadline(std::string_view text) {
  const std::string bad = "--crius-deadline: " + shown(text) +
                          " is not a time (MIN, MIN:SEC, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)";
  if (text.empty() || text.size() > 32 || text.find_first_of(" \t\r\n") != std::string_view::npos)
    return make_error(bad);
  long days = 0;
  std::string_view rest = text;
  bool has_days = false;
  if (auto dash = text.find('-'); dash != std::string_view::npos) {
    auto d = to_long(text.substr(0, dash), 366);
    if (!d) return make_error(bad);
    days = *d;
    rest = text.substr(dash + 1);
    has_days = true;
  }
  auto parts = util::split(rest, ':');
  if (parts.size() > 3) return make_error(bad);
  std::array<long, 3> v{};
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto x = to_long(parts[i], 10'000'000);
    if (!x) return make_error(bad);
    v[i] = *x;
  }
  long s = 0;
  if (has_days) {  // D-HH, D-HH:MM, D-HH:MM:SS
    s = days * 86400 + v[0] * 3600 + (parts.size() > 1 ? v[1] * 60 : 0) + (parts.size() > 2 ? v[2] : 0);
  } else if (parts.size() == 1) {
    s = v[0] * 60;  // minutes
  } else if (parts.size() == 2) {
    s = v[0] * 60 + v[1];  // MIN:SEC
  } else {
    s = v[0] * 3600 + v[1] * 60 + v[2];
  }
  if (s < 1 || s > kMaxDeadlineS)
    return make_error("--crius-deadline: " + shown(text) + " must be between 1 second and 366 days");
  return s;
}

Result<bool> check_model_arg(std::string_view text) {
  if (text.empty()) return make_error("--crius-model: empty value");
  bool path = text.find('/') != std::string_view::npos ||
              (text.size() > 5 && text.substr(text.size() - 5) == ".toml");
  if (path) {
    if (text.size() > 1024) return make_error("--crius-model: file path longer than 1024 characters");
    // The path is kept in the job's record and environment and shown in logs: printable
    // ASCII only, so that every copy reads back as it was written.
    for (char c : text) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f)
        return make_error("--crius-model: file path " + shown(text) + " contains control characters");
      if (u > 0x7f)
        return make_error("--crius-model: file path " + shown(text) +
                          " contains non-ASCII characters (give a path of printable ASCII characters)");
    }
    return true;
  }
  if (text.size() > 128 || !all_of(text, is_name_char))
    return make_error("--crius-model: " + shown(text) +
                      " is not a model name (letters, digits, '.', '_', '-', '+'; at most 128) "
                      "or a file path");
  return false;
}

Result<void> check_option(Option o, std::string_view value) {
  if (value.size() > kMaxValueBytes && o != Option::model)
    return make_error("--" + std::string(o == Option::cell ? "crius-cell" : "crius option") +
                      ": value longer than " + std::to_string(kMaxValueBytes) + " bytes");
  switch (o) {
    case Option::model: {
      auto r = check_model_arg(value);
      if (!r) return make_error(r.error());
      return {};
    }
    case Option::global_batch: {
      auto r = parse_global_batch(value);
      if (!r) return make_error(r.error());
      return {};
    }
    case Option::iters: {
      auto r = parse_iters(value);
      if (!r) return make_error(r.error());
      return {};
    }
    case Option::cell: {
      auto r = parse_cell(value);
      if (!r) return make_error(r.error());
      return {};
    }
    case Option::runtime: {
      auto r = parse_runtime_name(value);
      if (!r) return make_error(r.error());
      return {};
    }
    case Option::framework: {
      auto r = parse_framework_name(value);
      if (!r) return make_error(r.error());
      return {};
    }
    case Option::deadline: {
      auto r = parse_deadline(value);
      if (!r) return make_error(r.error());
      return {};
    }
    case Option::max_gpus: {
      auto r = parse_max_gpus(value);
      if (!r) return make_error(r.error());
      return {};
    }
    case Option::checkpoint_grace: {
      auto r = parse_checkpoint_grace(value);
      if (!r) return make_error(r.error());
      return {};
    }
    case Option::checkpoint_signal: {
      auto r = job::parse_checkpoint_signal(value);
      if (!r) return make_error("--crius-checkpoint-signal: " + r.error());
      return {};
    }
    case Option::explain:
    case Option::movable:
      return {};
  }
  return {};
}

bool has_request(const char* const* env, std::size_t n) {
  if (!env) return false;
  for (std::size_t i = 0; i < n && env[i]; ++i) {
    if (std::strncmp(env[i], kOptionPrefix.data(), kOptionPrefix.size()) == 0 ||
        std::strncmp(env[i], kModelSpecVar.data(), kModelSpecVar.size()) == 0)
      return true;
  }
  return false;
}

Result<JobRequest> parse_request(const std::vector<std::string_view>& env) {
  JobRequest req;
  std::array<bool, kOptionCount> seen{};
  bool have_spec = false;
  for (std::string_view entry : env) {
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (name == kModelSpecVar) {
      if (have_spec) return make_error(std::string(kModelSpecVar) + " given twice");
      have_spec = true;
      if (value.size() > estimator::kMaxModelSpecBytes)
        return make_error("--crius-model: the model sent with the job is longer than " +
                          std::to_string(estimator::kMaxModelSpecBytes) + " bytes");
      req.model_spec = std::string(value);
      continue;
    }
    if (name.substr(0, kOptionPrefix.size()) != kOptionPrefix) continue;
    std::optional<Option> opt;
    for (const auto& info : options())
      if (option_env_name(info.id) == name) opt = info.id;
    if (!opt) return make_error("unknown crius option in the job's SPANK environment: " + shown(name));
    auto idx = static_cast<std::size_t>(*opt);
    if (seen[idx]) return make_error("option " + shown(name) + " given twice");
    seen[idx] = true;
    if (value.size() > kMaxValueBytes)
      return make_error("option " + shown(name) + ": value longer than " +
                        std::to_string(kMaxValueBytes) + " bytes");
    switch (*opt) {
      case Option::model: {
        auto r = check_model_arg(value);
        if (!r) return make_error(r.error());
        req.model = std::string(value);
        req.model_is_file = *r;
        break;
      }
      case Option::global_batch: {
        auto r = parse_global_batch(value);
        if (!r) return make_error(r.error());
        req.global_batch = *r;
        break;
      }
      case Option::iters: {
        auto r = parse_iters(value);
        if (!r) return make_error(r.error());
        req.iters = *r;
        break;
      }
      case Option::cell: {
        auto r = parse_cell(value);
        if (!r) return make_error(r.error());
        req.cell = *r;
        break;
      }
      case Option::runtime: {
        auto r = parse_runtime_name(value);
        if (!r) return make_error(r.error());
        req.runtime = *r;
        break;
      }
      case Option::framework: {
        auto r = parse_framework_name(value);
        if (!r) return make_error(r.error());
        req.framework = *r;
        break;
      }
      case Option::deadline: {
        auto r = parse_deadline(value);
        if (!r) return make_error(r.error());
        req.deadline_s = *r;
        break;
      }
      case Option::max_gpus: {
        auto r = parse_max_gpus(value);
        if (!r) return make_error(r.error());
        req.max_gpus = *r;
        break;
      }
      case Option::explain:
        // a flag arrives as "" or "(null)"
        req.explain = true;
        break;
      case Option::movable:
        req.movable = true;
        break;
      case Option::checkpoint_grace: {
        auto r = parse_checkpoint_grace(value);
        if (!r) return make_error(r.error());
        req.checkpoint_grace_s = *r;
        break;
      }
      case Option::checkpoint_signal: {
        auto r = job::parse_checkpoint_signal(value);
        if (!r) return make_error("--crius-checkpoint-signal: " + r.error());
        req.checkpoint_signal = *r;
        break;
      }
    }
  }
  if (!seen[static_cast<std::size_t>(Option::model)]) {
    if (have_spec) return make_error("a model file was sent without --crius-model");
    return make_error("--crius-model is required when other --crius-* options are given");
  }
  if (!seen[static_cast<std::size_t>(Option::global_batch)])
    return make_error("--crius-global-batch is required with --crius-model");
  if (req.model_is_file) {
    if (!have_spec)
      return make_error("--crius-model: " + shown(req.model) +
                        " is a file path but the model was not sent (is the crius SPANK plugin "
                        "loaded on the submit host?)");
  } else if (have_spec) {
    return make_error("--crius-model: a model file was sent, but " + shown(req.model) +
                      " is a catalogue name");
  }
  return req;
}

}  // namespace crius::slurm
