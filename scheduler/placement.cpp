#include "scheduler/placement.h"

#include <algorithm>

namespace crius::scheduler {

FreeMap::FreeMap(const ClusterState& cluster, const std::vector<unsigned>* tie)
    : m_cluster(&cluster), m_tie(tie && tie->size() == cluster.nodes.size() ? tie : nullptr) {
  int most = 0;
  for (const Node& n : cluster.nodes) most = std::max(most, n.capacity);
  m_by_free.assign(cluster.partitions.size(), std::vector<std::set<Key>>(static_cast<std::size_t>(most) + 1));
  m_free.assign(cluster.nodes.size(), 0);
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    const Node& n = cluster.nodes[i];
    auto t = std::find(m_types.begin(), m_types.end(), n.gpu);
    if (t == m_types.end()) {
      m_types.push_back(n.gpu);
      m_type_free.push_back(0);
      t = m_types.end() - 1;
    }
    m_type.push_back(static_cast<int>(t - m_types.begin()));
    m_free[i] = n.capacity;
    m_type_free[m_type[i]] += n.capacity;
    if (n.partition >= 0 && n.partition < static_cast<int>(m_by_free.size()) && n.capacity >= 0)
      m_by_free[n.partition][n.capacity].insert(key(static_cast<int>(i)));
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

// Moves the node to its new bucket; below zero (a caller that takes more than is free) it is in
// none, as it holds nothing to place on.
void FreeMap::set_free(int node, int gpus) {
  const int p = m_cluster->nodes[node].partition;
  const bool indexed = p >= 0 && p < static_cast<int>(m_by_free.size());
  auto in_range = [&](int f) { return indexed && f >= 0 && f < static_cast<int>(m_by_free[p].size()); };
  if (in_range(m_free[node])) m_by_free[p][m_free[node]].erase(key(node));
  m_type_free[m_type[node]] += gpus - m_free[node];
  m_free[node] = gpus;
  if (indexed && gpus >= static_cast<int>(m_by_free[p].size())) m_by_free[p].resize(static_cast<std::size_t>(gpus) + 1);
  if (in_range(gpus)) m_by_free[p][gpus].insert(key(node));
}

void FreeMap::take(const Allocation& a) {
  for (int id : a.node_ids) set_free(id, m_free[id] - a.shape.gpus_per_node);
}

void FreeMap::give(const Allocation& a) {
  for (int id : a.node_ids) set_free(id, m_free[id] + a.shape.gpus_per_node);
}

std::optional<Allocation> FreeMap::place(int partition, const Cell& shape) const {
  if (partition < 0 || partition >= static_cast<int>(m_by_free.size()) || shape.nodes < 1) return std::nullopt;
  const auto& buckets = m_by_free[partition];
  std::size_t holding = 0;
  for (std::size_t f = static_cast<std::size_t>(std::max(0, shape.gpus_per_node)); f < buckets.size(); ++f)
    holding += buckets[f].size();
  if (holding < static_cast<std::size_t>(shape.nodes)) return std::nullopt;
  std::vector<int> chosen;
  chosen.reserve(static_cast<std::size_t>(shape.nodes));
  for (std::size_t f = static_cast<std::size_t>(std::max(0, shape.gpus_per_node));
       f < buckets.size() && static_cast<int>(chosen.size()) < shape.nodes; ++f)
    for (const Key& k : buckets[f]) {
      chosen.push_back(k.second);
      if (static_cast<int>(chosen.size()) == shape.nodes) break;
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
