// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/criusd/description.h"

#include <algorithm>
#include <map>

#include "common/util.h"

namespace crius::slurm {

std::vector<DescriptionCheck> check_description(const estimator::Cluster& cluster, const Snapshot& snap) {
  std::vector<DescriptionCheck> out;
  std::map<std::string, std::size_t> index;
  for (const auto& p : cluster.partitions) {
    index[p.name] = out.size();
    DescriptionCheck c;
    c.partition = p.name;
    c.nodes_described = p.nodes;
    c.described = std::to_string(p.nodes) + " nodes x " + std::to_string(p.gpus_per_node) + " " + p.gpu;
    c.in_slurm = snap.partitions.empty() || std::any_of(snap.partitions.begin(), snap.partitions.end(),
                                                        [&](const SlurmPartition& sp) { return sp.name == p.name; });
    out.push_back(std::move(c));
  }
  for (const SlurmNode& sn : snap.nodes) {
    auto part = std::find_if(sn.partitions.begin(), sn.partitions.end(),
                             [&](const std::string& name) { return index.count(name) > 0; });
    if (part == sn.partitions.end()) continue;
    DescriptionCheck& c = out[index[*part]];
    const estimator::Partition& described = *cluster.find_partition(c.partition);
    // With a node in a partition, Slurm has the partition, whatever its partition table said.
    c.in_slurm = true;
    ++c.nodes_in_slurm;
    c.nodes.push_back(sn.name);
    // Its GPU type: its GRES type; with untyped GRES (then sn.gpu is its first feature), any of
    // its features.
    const bool untyped = !sn.features.empty() && sn.gpu == sn.features.front();
    if (untyped ? std::find(sn.features.begin(), sn.features.end(), described.gpu) == sn.features.end()
                : sn.gpu != described.gpu)
      c.differs.push_back("node " + sn.name + " has GPU type " + (sn.gpu.empty() ? "(none)" : sn.gpu));
    else if (sn.gpus != described.gpus_per_node)
      c.differs.push_back("node " + sn.name + " has " + std::to_string(sn.gpus) + " GPUs");
  }
  return out;
}

std::string DescriptionCheck::text(std::size_t most_nodes) const {
  if (agrees()) return "";
  std::string says = "partition " + partition + ": crius.toml says " + described + ", but ";
  if (!in_slurm) return says + "Slurm has no such partition";
  if (differs.empty()) return says + "Slurm has " + std::to_string(nodes_in_slurm) + " nodes in it";
  std::vector<std::string> named = differs;
  if (named.size() > most_nodes) named.resize(most_nodes), named.push_back("...");
  return says + util::join(named, ", ");
}

}  // namespace crius::slurm
