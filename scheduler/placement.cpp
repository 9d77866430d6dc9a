// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/placement.h"

#include <algorithm>
#include <bit>

namespace crius::scheduler {

FreeMap::FreeMap(const ClusterState& cluster, const std::vector<unsigned>* tie)
    : m_cluster(&cluster), m_tie(tie && tie->size() == cluster.nodes.size() ? tie : nullptr) {
  const int n = static_cast<int>(cluster.nodes.size());
  m_index.resize(cluster.partitions.size());
  m_free.assign(n, 0);
  m_place.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    const Node& node = cluster.nodes[i];
    auto t = std::find(m_types.begin(), m_types.end(), node.gpu);
    if (t == m_types.end()) {
      m_types.push_back(node.gpu);
      m_type_free.push_back(0);
      t = m_types.end() - 1;
    }
    m_type.push_back(static_cast<int>(t - m_types.begin()));
  }
  // Each partition's nodes by (tie rank, index): in linear time where the ranks are a
  // permutation (Context::tie), else sorted.
  std::vector<int> by_rank;
  if (m_tie) {
    by_rank.assign(n, -1);
    for (int i = 0; i < n; ++i) {
      const unsigned r = (*m_tie)[i];
      if (r >= static_cast<unsigned>(n) || by_rank[r] >= 0) {
        by_rank.clear();
        break;
      }
      by_rank[r] = i;
    }
  }
  auto add = [&](int i) {
    const int p = cluster.nodes[i].partition;
    if (p >= 0 && p < static_cast<int>(m_index.size())) m_index[p].nodes.push_back(i);
  };
  if (!by_rank.empty() || !m_tie) {
    for (int k = 0; k < n; ++k) add(by_rank.empty() ? k : by_rank[k]);
  } else {
    for (int i = 0; i < n; ++i) add(i);
    for (Index& ix : m_index)
      std::stable_sort(ix.nodes.begin(), ix.nodes.end(), [&](int a, int b) { return (*m_tie)[a] < (*m_tie)[b]; });
  }
  for (Index& ix : m_index)
    for (std::size_t k = 0; k < ix.nodes.size(); ++k) m_place[ix.nodes[k]] = static_cast<int>(k);
  for (int i = 0; i < n; ++i) {
    m_free[i] = cluster.nodes[i].capacity;
    m_type_free[m_type[i]] += m_free[i];
    mark(i, m_free[i], true);
  }
}

int FreeMap::free_gpus(const std::string& gpu) const {
  auto t = std::find(m_types.begin(), m_types.end(), gpu);
  return t == m_types.end() ? 0 : m_type_free[t - m_types.begin()];
}

bool FreeMap::fits(const Allocation& a) const {
  for (int id : a.node_ids)
    if (id < 0 || id >= static_cast<int>(m_free.size()) || m_free[id] < a.shape.gpus_per_node)
      return false;
  // A node listed twice would need twice the GPUs.
  std::vector<int> ids = a.node_ids;
  std::sort(ids.begin(), ids.end());
  return std::adjacent_find(ids.begin(), ids.end()) == ids.end();
}

// Sets or clears the node's bit among the nodes with `gpus` free; below zero (a caller that took
// more than was free) it is in none, as it holds nothing to place on.
void FreeMap::mark(int node, int gpus, bool on) {
  const int k = m_place[node];
  if (k < 0 || gpus < 0) return;
  Index& ix = m_index[m_cluster->nodes[node].partition];
  if (gpus >= static_cast<int>(ix.bits.size())) {
    ix.bits.resize(static_cast<std::size_t>(gpus) + 1, std::vector<std::uint64_t>((ix.nodes.size() + 63) / 64, 0));
    ix.count.resize(static_cast<std::size_t>(gpus) + 1, 0);
  }
  const std::uint64_t bit = std::uint64_t{1} << (k % 64);
  if (on) ix.bits[gpus][k / 64] |= bit;
  else ix.bits[gpus][k / 64] &= ~bit;
  ix.count[gpus] += on ? 1 : -1;
}

void FreeMap::set_free(int node, int gpus) {
  mark(node, m_free[node], false);
  m_type_free[m_type[node]] += gpus - m_free[node];
  m_free[node] = gpus;
  mark(node, gpus, true);
}

void FreeMap::take(const Allocation& a) {
  for (int id : a.node_ids) set_free(id, m_free[id] - a.shape.gpus_per_node);
}

void FreeMap::give(const Allocation& a) {
  for (int id : a.node_ids) set_free(id, m_free[id] + a.shape.gpus_per_node);
}

std::optional<Allocation> FreeMap::place(int partition, const Cell& shape) const {
  if (partition < 0 || partition >= static_cast<int>(m_index.size()) || shape.nodes < 1) return std::nullopt;
  const Index& ix = m_index[partition];
  const int from = std::max(0, shape.gpus_per_node);
  long holding = 0;
  for (int f = from; f < static_cast<int>(ix.count.size()); ++f) holding += ix.count[f];
  if (holding < shape.nodes) return std::nullopt;
  std::vector<int> chosen;
  chosen.reserve(static_cast<std::size_t>(shape.nodes));
  for (int f = from; f < static_cast<int>(ix.bits.size()) && static_cast<int>(chosen.size()) < shape.nodes; ++f) {
    if (ix.count[f] == 0) continue;
    const auto& words = ix.bits[f];
    for (std::size_t w = 0; w < words.size() && static_cast<int>(chosen.size()) < shape.nodes; ++w)
      for (std::uint64_t bits = words[w]; bits && static_cast<int>(chosen.size()) < shape.nodes; bits &= bits - 1)
        chosen.push_back(ix.nodes[w * 64 + static_cast<std::size_t>(std::countr_zero(bits))]);
  }
  std::sort(chosen.begin(), chosen.end());
  Allocation a;
  a.partition = partition;
  a.shape = shape;
  a.node_ids = std::move(chosen);
  return a;
}

std::optional<Allocation> FreeMap::place_any(const std::string& gpu, int gpus) const {
  for (const PlacedShape& ps : shapes_for(*m_cluster, gpu, gpus))
    if (auto a = place(ps.partition, ps.shape)) return a;
  return std::nullopt;
}

std::vector<PlacedShape> shapes_for(const ClusterState& cluster, const std::string& gpu, int gpus) {
  std::vector<PlacedShape> out;
  if (gpus <= 0) return out;
  for (size_t p = 0; p < cluster.partitions.size(); ++p) {
    const Partition& part = cluster.partitions[p];
    if (part.gpu != gpu) continue;
    int gpn = 1;
    while (gpn * 2 <= part.gpus_per_node) gpn *= 2;
    for (; gpn >= 1; gpn /= 2) {
      if (gpus % gpn) continue;
      int nodes = gpus / gpn;
      if (nodes <= part.nodes)
        out.push_back(PlacedShape{static_cast<int>(p), shape(gpu, nodes, gpn)});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const PlacedShape& a, const PlacedShape& b) {
    return a.shape.nodes < b.shape.nodes;
  });
  return out;
}

std::vector<int> counts_for(int total) {
  std::vector<int> out;
  for (int c = 1; c <= total; c *= 2) out.push_back(c);
  return out;
}

}  // namespace crius::scheduler
