// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The crius record of a Slurm job: what the user asked, the Cell and plan the job
// runs, and criusd's move in flight.  job_submit writes it into the job's
// AdminComment at submission, criusd rewrites it when it moves the job, and
// crius-launch reads it: it is the source of truth for a job's Cell and plan
// (crius(7)).  One type, one codec (compact JSON, version kRecordVersion).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/plan.h"
#include "estimator/result.h"

namespace crius::job {

// Version 3 keeps each move's history (version 2, whose moved_at held only start times, is
// still read).
inline constexpr int kRecordVersion = 3;

// What the user asked for, as job_submit validated it.
struct Request {
  std::string model;         // catalogue id, or the model file's path as the user gave it
  bool model_file = false;   // the model came as a file (its text is not kept, its spec is)
  std::string model_spec;    // a model file's model as estimator::to_spec (no file text); "" otherwise
  int global_batch = 0;
  std::optional<long> iters;
  estimator::Runtime runtime = estimator::Runtime::megatron;
  // What runs the job (--crius-framework, else crius.toml's framework at submission): criusd
  // offers it only Cells whose plan that framework can run.
  estimator::Framework framework;
  estimator::Cell pin;                  // --crius-cell: gpu "" = auto
  std::optional<long> deadline_s;
  std::optional<int> max_gpus;          // --crius-max-gpus: the largest Cell the user accepts
  std::vector<std::string> partitions;  // the job's own -p list ("" = crius.toml's)
  std::string objective = "throughput";  // [job_submit] objective at submission
  bool movable = false;  // --crius-movable: the job checkpoints on the signal and resumes
  std::optional<int> checkpoint_grace_s;  // --crius-checkpoint-grace (none: the site's)
  // --crius-checkpoint-signal: what the job's program saves on (0: nothing, it saves on its own
  // schedule); none: its framework's (default_checkpoint_signal).
  std::optional<int> checkpoint_signal;
  bool operator==(const Request&) const = default;
};

// A checkpoint signal by name: USR1, USR2, TERM, INT, HUP or URG (a SIG prefix allowed), or
// "none" (0). Errors quote the text.
Result<int> parse_checkpoint_signal(std::string_view name);
std::string checkpoint_signal_name(int sig);  // "USR1", ..., "none"
// The signal a framework's program saves on when the job names none: Megatron-LM's
// --exit-signal-handler listens for SIGTERM (crius-launch turns it on); crius-train's default
// --checkpoint-signal is USR1; torchtitan saves on its own interval only (0).
int default_checkpoint_signal(const estimator::Framework& f);

// One ranked alternative at submission (what --crius-explain shows).
struct Ranked {
  estimator::Cell cell;
  double iter_time_s = 0, samples_per_s = 0, memory_gib = 0;
  bool operator==(const Ranked&) const = default;
};

// criusd's move of a running job, in flight. Each phase is written before its step and
// confirmed after it, so that a criusd killed at any point finishes the move on restart:
// "signalling" (the checkpoint signal is due) -> "signalled" (sent; the grace time runs)
// -> "requeuing" (the requeue is due) -> "requeued" (requeued and held; the new Cell is due,
// then the hold is released and the move ends).
struct Move {
  estimator::Cell target;
  std::string phase;
  std::int64_t since = 0;
  std::string reason;
  std::vector<std::string> nodes;  // where the policy placed it: pinned when the move ends
  bool operator==(const Move&) const = default;
};

// A move criusd started, kept in the job's history (the audit of what crius did to it).
struct MoveLog {
  estimator::Cell from, to;  // shapes (no partition); "auto" where a version 2 record did not say
  std::string reason;        // the policy's
  std::int64_t started = 0;  // seconds since 1970
  std::int64_t ended = 0;    // 0: in flight, or not known
  // "" in flight; "moved", or why not: "kept: ...", "dropped: ...", "abandoned: ...".
  std::string outcome;
  bool operator==(const MoveLog&) const = default;
};
inline constexpr std::size_t kMaxHistory = 16, kMaxHistoryText = 256;

struct Record {
  Request request;
  estimator::Cell cell;  // the Cell the job runs in (or asks Slurm for)
  estimator::Plan plan;  // the plan of that Cell
  double iter_time_s = 0, samples_per_s = 0, memory_gib = 0;  // the estimate of `plan`
  std::string by = "job_submit";  // who chose `cell`: "job_submit" or "criusd"
  std::optional<bool> deadline_met;
  bool partial = false;  // job_submit's work budget ran out: the best of the Cells it estimated
  std::vector<Ranked> top;
  std::optional<Move> move;
  std::vector<MoveLog> history;        // the moves criusd started, oldest first (the last kMaxHistory)
  std::string unmovable;               // why criusd may not move it while it runs (a failed requeue)
  std::vector<std::string> nodes;      // the nodes criusd pinned it to (its ReqNodeList); empty: none
  // crius set the job's time limit (the user gave none): time_limit_minutes() with this factor
  // of its Cell's estimate, `time_limit_min` the last it set; criusd sets it again when it
  // changes the Cell, unless someone changed it since. 0: crius did not, the user's limit or
  // Slurm's default stands.
  double time_limit_factor = 0;
  std::int64_t time_limit_min = 0;
  // The Cell and plan the job last ran under before criusd moved it: what its checkpoint was
  // saved under (crius-launch exports it as CRIUS_PREV_*). None: never moved while running.
  struct Saved {
    estimator::Cell cell;
    estimator::Plan plan;
    bool operator==(const Saved&) const = default;
  };
  std::optional<Saved> saved_under;

  // The user fixed the Cell (--crius-cell) or the partitions (-p): criusd leaves it.
  bool pinned() const { return !request.pin.gpu.empty() || !request.partitions.empty(); }
  // A move starts: kept in the history (the oldest dropped past kMaxHistory); its end: the
  // outcome of the move in flight (the last one, if it has none yet).
  void log_move_start(const estimator::Cell& from, const estimator::Cell& to, const std::string& reason, std::int64_t now);
  void log_move_end(const std::string& outcome, std::int64_t now);
  bool operator==(const Record&) const = default;
};

// The time limit crius gives a job (job_submit_crius(8), TIME LIMITS): `factor` x the estimated
// time of its `iterations` still to run at `iter_time_s` each, plus kTimeLimitSlackS for its
// start, checkpoint and end, in whole minutes (Slurm's unit, rounded up), at most `max_s` (its
// partition's MaxTime; 0 = none).
inline constexpr double kTimeLimitSlackS = 300;
inline constexpr double kMaxTimeLimitFactor = 100;
inline constexpr std::int64_t kMaxTimeLimitMin = 366 * 24 * 60;  // a year
std::int64_t time_limit_minutes(double iterations, double iter_time_s, double factor, std::int64_t max_s);

// Compact JSON: {"crius":3,"request":{...},"cell":{...},"plan":{...},"estimate":{...},
// "by":"...","top":[...],"move":{...},"history":[...]}.
std::string to_text(const Record& r);
// AdminComment is shared with other site tools (crius(7), THE RECORD): crius's record is the
// line that begins {"crius": (compact JSON is one line); every other line is theirs, kept byte
// for byte. The record line of an AdminComment, "" if it has none.
std::string_view record_line(std::string_view admin_comment);
// The AdminComment with crius's record replaced by `record` (placed last; "" removes it), every
// other line as it was.
std::string with_record(std::string_view admin_comment, std::string_view record);
// Whether an AdminComment holds a crius record, by its lines' first bytes only (for slurmctld,
// where nothing is parsed that need not be; AdminComment is admin-only, so nothing else
// writes such a line).
inline bool looks_like_record(std::string_view admin_comment) { return !record_line(admin_comment).empty(); }
// nullopt: no crius record (empty, not JSON, no "crius" key): not crius's job.
// An error: a crius record that does not read (another version, a bad key), naming it.
std::optional<Result<Record>> parse_record(std::string_view admin_comment);

}  // namespace crius::job
