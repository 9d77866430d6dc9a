// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Crius: the Cell-aware policy of the paper (see crius(7), POLICIES).
// Each round, in queue order (the core's: priority, then FIFO or earliest deadline):
//  1. fit the job on the Cell its objective takes (objective.h; adaptive: the best
//     normalised speed while no other pending job waits, else the most per GPU) among those
//     that place now, of up to kMaxScale times the requested GPU count; a job just
//     submitted gets this step alone (arrive: job_submit's);
//  2. when that fit is poor (below kWellFit of its ideal Cell), a bounded search
//     over shrinking one running job, moving one to another GPU type, or
//     migrating one to defragment; the plan of the largest total gain wins (where
//     none makes room, optionally several shrinks: PolicyOptions::crius.search_depth);
//  3. a job behind a blocked queue head starts "opportunistically" and the
//     blocked head may preempt opportunistic jobs; a pending plain job (the resource
//     manager's, on its request) is in the queue too: the GPUs it starts on are held for
//     it, and where it is the blocked head it takes them back from opportunistic jobs;
//  4. with nobody waiting, an upgrade pass doubles GPUs or changes type while
//     the time saved pays for the restart (at most kUpgradeEvaluations options a round).
// Deadline-aware (PolicyOptions::deadline_cells, and deadline mode): a job with a
// deadline first tries the fewest GPUs that meet it (a search may make room), a
// running job that would miss it moves to such a Cell, and no search takes a Cell
// that meets a deadline away; in deadline mode the jobs no Cell brings in on time
// queue behind those that can still make it, and running jobs are rescued before the
// queue; otherwise (criusd) after it, with the GPUs the pending jobs leave.
// Speeds are Cell-optimal (the best plan of each Cell), normalised per job by
// its speed on what it requested, so gains of different jobs add up.
#pragma once

#include "scheduler/policy.h"

namespace crius::scheduler {

class CriusPolicy final : public Policy {
 public:
  static constexpr int kMaxScale = 4;         // Cells of up to 4x the requested GPUs (as sia)
  static constexpr double kWellFit = 0.8;     // of the job's ideal normalised speed
  static constexpr double kDoubleGain = 1.2;  // min speed-up for doubling GPUs
  // Upgrade options evaluated per round, at most: a round of the paper's philly trace needs
  // at most 2,155; it ends the upgrade pass on the largest clusters (10,000 jobs on 65,536 GPUs).
  static constexpr long kUpgradeEvaluations = 100'000;

  explicit CriusPolicy(const PolicyOptions& options);
  ~CriusPolicy() override;
  std::string name() const override { return "crius"; }
  bool cell_policy() const override { return true; }
  bool queues_plain_jobs() const override { return true; }
  std::vector<Target> schedule(const Context& ctx) override;
  std::optional<PlacedShape> arrive(const Context& ctx, std::size_t i, int waiting) override;
  struct Memo;  // the Cells of each class of jobs, kept across rounds (crius.cpp)

 private:
  PolicyOptions m_options;
  std::unique_ptr<Memo> m_memo;
};

}  // namespace crius::scheduler
