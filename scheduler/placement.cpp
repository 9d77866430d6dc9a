#include "scheduler/placement.h"

#include <algorithm>

namespace crius::scheduler {

FreeMap::FreeMap(const ClusterState& cluster, const std::vector<unsigned>* tie)
    : m_cluster(&cluster), m_tie(tie && tie->size() == cluster.nodes.size() ? tie : nullptr) {
  for (const Node& n : cluster.nodes) m_free.push_back(n.capacity);
}

int FreeMap::free_gpus(const std::string& gpu) const {
  int n = 0;
  for (size_t i = 0; i < m_free.size(); ++i)
    if (m_cluster->nodes[i].gpu == gpu) n += m_free[i];
  return n;
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

void FreeMap::take(const Allocation& a) {
  for (int id : a.node_ids) m_free[id] -= a.shape.gpus_per_node;
}

void FreeMap::give(const Allocation& a) {
  for (int id : a.node_ids) m_free[id] += a.shape.gpus_per_node;
}

std::optional<Allocation> FreeMap::place(int partition, const Cell& shape) const {
  std::vector<int> cand;
  for (size_t i = 0; i < m_free.size(); ++i)
    if (m_cluster->nodes[i].partition == partition && m_free[i] >= shape.gpus_per_node)
      cand.push_back(static_cast<int>(i));
  if (static_cast<int>(cand.size()) < shape.nodes) return std::nullopt;
  std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) {
    if (m_free[a] != m_free[b]) return m_free[a] < m_free[b];
    return m_tie ? (*m_tie)[a] < (*m_tie)[b] : false;
  });
  cand.resize(shape.nodes);
  std::sort(cand.begin(), cand.end());
  Allocation a;
  a.partition = partition;
  a.shape = shape;
  a.node_ids = std::move(cand);
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

std::vector<int> counts_for(const ClusterState& cluster, const std::string& gpu) {
  std::vector<int> out;
  int total = cluster.total_gpus(gpu);
  for (int c = 1; c <= total; c *= 2) out.push_back(c);
  return out;
}

}  // namespace crius::scheduler
