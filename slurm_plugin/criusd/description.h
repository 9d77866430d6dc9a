// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// One description of the cluster (criusd(8), SLURM'S RULES): crius.toml's [[partition]]s
// against what Slurm has (what `scontrol show node` and `scontrol show partition` report of
// slurm.conf and gres.conf): the partition, the nodes in it, their GPU type and count. Where a
// node's GPUs differ, the estimates of that partition would be another cluster's: criusd
// places nothing there; `criusd --check-description` prints it all.
#pragma once

#include <string>
#include <vector>

#include "estimator/estimator.h"
#include "slurm_plugin/criusd/snapshot.h"

namespace crius::slurm {

struct DescriptionCheck {
  std::string partition;
  std::string described;              // "2 nodes x 8 a100", as crius.toml says
  bool in_slurm = true;               // Slurm has a partition of that name (or its table was not read)
  int nodes_described = 0, nodes_in_slurm = 0;
  std::vector<std::string> nodes;     // Slurm's nodes in it (a node is counted in the first crius partition listing it)
  std::vector<std::string> differs;   // a node's other GPU type or count, one entry per node
  // The nodes' GPUs agree (crius places there); another node count is said, not a bar.
  bool usable() const { return in_slurm && differs.empty(); }
  bool agrees() const { return usable() && nodes_described == nodes_in_slurm; }
  // One line: "partition a100: crius.toml says 2 nodes x 8 a100, but ..." ("" when it agrees);
  // at most `most_nodes` nodes named.
  std::string text(std::size_t most_nodes = 4) const;
};

// Each [[partition]] of `cluster`, in order, checked against `snap`.
std::vector<DescriptionCheck> check_description(const estimator::Cluster& cluster, const Snapshot& snap);

}  // namespace crius::slurm
