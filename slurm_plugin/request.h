// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The crius request of one job, as the SPANK plugin forwards it to slurmctld in
// spank_job_env, and the strict parser the job_submit plugin runs on it.
//
// Everything here treats its input as untrusted (any libslurm client can fill
// spank_job_env): bounded sizes, a fixed set of keys, a fixed character set per
// value, no file is ever opened.  Pure C++, no Slurm types, so the parser is
// unit-tested and fuzzed on its own.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/util.h"
#include "estimator/plan.h"
#include "estimator/result.h"

namespace crius::slurm {

// spank_job_env names.  Slurm itself forwards every SPANK option that was used
// as _SLURM_SPANK_OPTION_<plugin>_<option> (non-alphanumerics become '_').
inline constexpr std::string_view kOptionPrefix = "_SLURM_SPANK_OPTION_crius_";
// The SPANK plugin reads a model file on the submit host and sends the model under this
// name as a flat line of bounded scalars (estimator::to_spec), never the file's text.
inline constexpr std::string_view kModelSpecVar = "CRIUS_MODEL_SPEC";

// Limits on what a submission may carry.
inline constexpr std::size_t kMaxModelFileBytes = 64 * 1024;  // read on the submit host
inline constexpr std::size_t kMaxValueBytes = 1024;  // any option value
inline constexpr long kMaxGlobalBatch = 1L << 24;
inline constexpr long kMaxIters = 1L << 40;
inline constexpr long kMaxDeadlineS = 366L * 24 * 3600;

// The SPANK options (without the leading "--"), in the order sbatch --help lists them.
enum class Option {
  model, global_batch, iters, cell, runtime, framework, deadline, max_gpus, explain, movable, checkpoint_grace,
  checkpoint_signal
};
inline constexpr std::size_t kOptionCount = static_cast<std::size_t>(Option::checkpoint_signal) + 1;  // the last one
struct OptionInfo {
  Option id;
  const char* name;     // "crius-model"
  const char* arginfo;  // nullptr for a flag
  const char* usage;    // starts with "[crius]"
};
const std::vector<OptionInfo>& options();
// "_SLURM_SPANK_OPTION_crius_crius_model" for Option::model.
std::string option_env_name(Option o);

struct JobRequest {
  std::string model;       // catalogue name, or the user's file path (then model_spec is set)
  std::string model_spec;  // the user's model file as estimator::to_spec, from the SPANK plugin
  bool model_is_file = false;
  int global_batch = 0;
  std::optional<long> iters;
  estimator::Cell cell;  // --crius-cell: a partial Cell (gpu "" = auto, 0 = not pinned)
  // --crius-runtime; none: the framework's default (estimator::default_runtime)
  std::optional<estimator::Runtime> runtime;
  std::optional<estimator::Framework> framework;  // --crius-framework; none: crius.toml's
  std::optional<long> deadline_s;
  std::optional<int> max_gpus;  // --crius-max-gpus: the largest Cell the user accepts
  bool explain = false;
  bool movable = false;  // --crius-movable: criusd may checkpoint, requeue and move it while it runs
  std::optional<int> checkpoint_grace_s;  // --crius-checkpoint-grace: its time to checkpoint after the signal
  std::optional<int> checkpoint_signal;   // --crius-checkpoint-signal: what its program saves on (0: none)
};

// Single-value parsers; errors name the option ("--crius-global-batch: ...").
Result<int> parse_global_batch(std::string_view text);
Result<long> parse_iters(std::string_view text);
Result<estimator::Cell> parse_cell(std::string_view text);  // estimator::parse_cell, named option
Result<estimator::Runtime> parse_runtime_name(std::string_view text);
Result<estimator::Framework> parse_framework_name(std::string_view text);
// Slurm's time formats: MIN, MIN:SEC, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS.
Result<long> parse_deadline(std::string_view text);
Result<int> parse_max_gpus(std::string_view text);
inline constexpr long kMaxCheckpointGraceS = 86400;
Result<int> parse_checkpoint_grace(std::string_view text);
inline constexpr long kMaxUserGpus = 1'000'000;
// A model catalogue name ([A-Za-z0-9._+-], at most 128) or a file path (contains
// '/' or ends in ".toml"); returns true for a path.
Result<bool> check_model_arg(std::string_view text);
// Validate one option value as the SPANK option callback does.
Result<void> check_option(Option o, std::string_view value);

// True if the NULL-terminated (or `n`-long) env list carries a crius request.
bool has_request(const char* const* env, std::size_t n);

// Parse the request out of spank_job_env entries ("NAME=value"); entries that
// are not crius's are ignored.  Errors are user-facing, without a "crius:" prefix.
Result<JobRequest> parse_request(const std::vector<std::string_view>& env);


using util::shown;

}  // namespace crius::slurm
