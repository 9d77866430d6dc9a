// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Free-GPU bookkeeping and node placement shared by every policy.
#pragma once

#include <optional>
#include <cstdint>
#include <utility>
#include <string>
#include <vector>

#include "scheduler/types.h"

namespace crius::scheduler {

class FreeMap {
 public:
  // `tie` (optional, one rank per node) breaks ties between equally full nodes.
  explicit FreeMap(const ClusterState& cluster, const std::vector<unsigned>* tie = nullptr);
  const ClusterState& cluster() const { return *m_cluster; }
  int free(int node) const { return m_free[node]; }
  int free_gpus(const std::string& gpu) const;
  bool fits(const Allocation& a) const;
  void take(const Allocation& a);
  void give(const Allocation& a);
  // Best fit: the nodes of `partition` with the fewest free GPUs that still hold
  // `shape.gpus_per_node`, so that big holes stay whole. Ties: the tie rank
  // (a seeded permutation), else the lower node index. The nodes are indexed by partition and
  // free GPUs, so the work grows with the Cell, not with the partition.
  std::optional<Allocation> place(int partition, const Cell& shape) const;
  // First shape of shapes_for(gpu, gpus) (consolidated first) that places.
  std::optional<Allocation> place_any(const std::string& gpu, int gpus) const;

 private:
  void set_free(int node, int gpus);
  void mark(int node, int gpus, bool on);

  const ClusterState* m_cluster;
  const std::vector<unsigned>* m_tie;
  std::vector<int> m_free;
  std::vector<int> m_type;                 // per node, its index in m_types
  std::vector<std::string> m_types;
  std::vector<int> m_type_free;            // free GPUs per type
  // Per partition: its nodes in placement order among equally full ones (tie rank, index), each
  // node's place in that order, and per free GPU count a bit per place (the nodes with that
  // many free) and how many bits are set.
  struct Index {
    std::vector<int> nodes;
    std::vector<std::vector<std::uint64_t>> bits;
    std::vector<int> count;
  };
  std::vector<Index> m_index;
  std::vector<int> m_place;                // per node
};

// Node shapes that hold `gpus` GPUs in one partition of type `gpu`: gpus per
// node a power of two dividing `gpus`, at most the node size; consolidated
// (fewest nodes) first. Each shape carries its partition.
struct PlacedShape {
  int partition;
  Cell shape;
};
std::vector<PlacedShape> shapes_for(const ClusterState& cluster, const std::string& gpu, int gpus);

// GPU counts a job may be given on a type of `total` GPUs: powers of two up to it.
std::vector<int> counts_for(int total);

}  // namespace crius::scheduler
