// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The GPUs criusd's policy left free, per node of each crius partition, and who each crius
// partition lets in: what criusd publishes every round so that job_submit gives a new job a
// Cell that can start now, in a partition the job may use (criusd(8), job_submit_crius(8):
// [job_submit] free_gpus_file). A flat text file, read in slurmctld: parsed line by line,
// every size bounded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "estimator/plan.h"
#include "estimator/result.h"

namespace crius::slurm {

// Who a crius partition lets in, as criusd read it from Slurm: its state, MaxNodes, MaxTime,
// AllowAccounts, DenyAccounts, AllowQos, DenyQos, and AllowGroups resolved to the groups' ids
// and their members' uids (slurmctld resolves group names itself; job_submit may not block on
// a name service). Empty allow lists let everyone in.
struct PartitionAccess {
  std::string name;
  bool up = true;
  int max_nodes = 0;            // 0: none
  std::int64_t max_time_s = 0;  // 0: none; MaxTime, or its partition QOS's MaxWall where shorter
  std::vector<std::string> allow_accounts, deny_accounts, allow_qos, deny_qos;
  bool groups = false;  // AllowGroups is set: only these groups' members (and root, SlurmUser)
  std::vector<std::uint32_t> allow_gids, allow_uids;
  bool operator==(const PartitionAccess&) const = default;
};

// Per-job GPU and node limits (MaxTRESPerJob) and the longest time limit (MaxWall, seconds),
// -1: none.
struct JobLimit {
  std::int64_t gpus = -1, nodes = -1, wall_s = -1;
  bool operator==(const JobLimit&) const = default;
};
// A user's association: its per-job limits (the smallest along its parents) and default QOS.
struct AssocLimit {
  std::uint32_t uid = 0;
  std::string account, partition;  // partition "": the association of every partition
  JobLimit limit;
  std::string default_qos;         // "": none
  // GPUs of each type the association and its parents may still hold (GrpTRES gres/gpu:TYPE less
  // what is in use; report version 5): a type absent is not bounded.
  std::map<std::string, std::int64_t> typed_left;
  bool operator==(const AssocLimit&) const = default;
};

// The submitting user, as a job states it: account "" when the job names none (its user's
// default account, from the report, then stands in; none known: the check is Slurm's), QOS ""
// when it names none (its default QOS is Slurm's to check).
struct Submitter {
  std::uint32_t uid = 0, gid = 0;
  std::string account, qos;
  std::int64_t time_limit_s = 0;  // 0: none given
  bool privileged = false;        // root or SlurmUser: AllowGroups lets them in
  std::int64_t now = 0;           // when it submits (Unix seconds; 0: the report's time stands in)
};

struct FreeGpus {
  std::int64_t time = 0;   // when criusd read Slurm (Unix seconds)
  double interval_s = 0;   // criusd's round length
  // Jobs waiting for GPUs of the crius partitions once the round is carried out (report
  // version 3; job_submit adds those it accepts until the next report)
  int waiting = 0;
  std::vector<std::pair<std::string, std::vector<int>>> partitions;  // name, free GPUs of each usable node
  // When a reservation (maintenance, nodes reserved for others) begins on each of those nodes,
  // in the same order, in Unix seconds, 0: none ahead: Slurm starts no job on a node where its
  // time limit would cross one (report version 6; a partition without any has no entry).
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> reserved_from;
  std::vector<PartitionAccess> access;  // the crius partitions' (report version 2)
  // uid -> default account, sorted by uid, where a crius partition's access depends on the
  // account (a job that names no account runs in its user's default one)
  std::vector<std::pair<std::uint32_t, std::string>> default_accounts;
  // Where Slurm enforces limits: the QOS with a per-job GPU, node or wall-time limit, and the
  // users' associations (sorted by uid) that have one or whose default QOS has one.
  std::vector<std::pair<std::string, JobLimit>> qos_limits;
  std::vector<AssocLimit> assoc_limits;

  // A report older than three rounds (and a minute) describes a criusd that stopped.
  bool fresh(std::int64_t now) const { return now - time <= static_cast<std::int64_t>(3 * interval_s) + 60; }
  // `cell` (partition, nodes x GPUs per node) fits: enough nodes with enough free GPUs and no
  // reservation beginning before `until`, when the job would end (Unix seconds; 0: never, and
  // any reservation ahead is in its way).
  bool fits(const estimator::Cell& cell, std::int64_t until = 0) const;
  // Takes a fitting Cell's GPUs from the nodes with the fewest free that hold them (and no
  // reservation before `until`).
  void take(const estimator::Cell& cell, std::int64_t until = 0);
  int free_gpus(const std::string& partition) const;
  // The longest time limit `who` may have in `partition`, in seconds (0: none known): its MaxTime
  // (with its partition QOS's MaxWall), and the MaxWall of `who`'s association and QOS (named,
  // else the association's default), the smallest. `who.account` "": default_account() it first.
  std::int64_t longest_time_limit_s(const std::string& partition, const Submitter& who) const;
  // The default account of `uid` ("" if not in the report).
  std::string default_account(std::uint32_t uid) const;
  // Why `who` may not have `nodes` nodes of `gpus` GPUs in all in `partition` (access, size,
  // per-job limits of its association and QOS), "" if they may (or nothing is known).
  // `who.account` "" is not looked up here: default_account() it first.
  std::string refusal(const std::string& partition, const Submitter& who, int nodes, int gpus) const;
  // Whether `who` may hold `gpus` more GPUs of type `gpu` under its association's per-type
  // group limits as criusd last counted them (true when nothing is known).
  bool typed_room(const std::string& partition, const Submitter& who, const std::string& gpu, int gpus) const;

 private:
  bool clear_until(const std::string& partition, std::size_t node, std::int64_t until) const;
};

// [job_submit] free_gpus_file: where criusd writes and job_submit reads.
inline constexpr const char* kDefaultFreeGpusFile = "/run/criusd/free-gpus";
// CRIUS_FREE_GPUS_FILE, when set to an absolute path: it overrides the key (a test
// cluster's daemons share the host's /run).
std::optional<std::string> free_gpus_file_override();
inline constexpr std::size_t kMaxFreeGpusBytes = 1 << 20;  // 1 MiB
inline constexpr int kMaxFreeGpusPartitions = 1024, kMaxFreeGpusNodes = 100'000;
inline constexpr std::size_t kMaxTypedLeft = 16;  // GPU types an assoc line may bound
inline constexpr int kMaxAccessNames = 100'000;  // names and ids in all access lines together

std::string to_text(const FreeGpus& f);
// Errors name `source` and the line.
Result<FreeGpus> parse_free_gpus(std::string_view text, const std::string& source);

// Reads criusd's report at `path`: nullopt when there is none. An error when it is not
// a regular file of at most kMaxFreeGpusBytes owned by root or by this process's user
// and writable by nobody else, or does not parse. Freshness is the caller's to judge.
Result<std::optional<FreeGpus>> read_free_gpus(const std::string& path);
// Writes the report atomically (a temporary file beside it, then rename), mode 0644,
// creating its directory (not the ones above) when it is missing.
Result<void> write_free_gpus(const std::string& path, const FreeGpus& f);

}  // namespace crius::slurm
