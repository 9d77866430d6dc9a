// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/types.h"

#include <algorithm>

namespace crius::scheduler {

ClusterState ClusterState::from_partitions(std::vector<Partition> partitions) {
  ClusterState c;
  c.partitions = std::move(partitions);
  for (size_t p = 0; p < c.partitions.size(); ++p) {
    const Partition& part = c.partitions[p];
    for (int i = 0; i < part.nodes; ++i)
      c.nodes.push_back(Node{part.name + std::to_string(i), static_cast<int>(p), part.gpu,
                             part.gpus_per_node});
  }
  return c;
}

std::vector<std::string> ClusterState::gpu_types() const {
  std::vector<std::string> out;
  for (const Partition& p : partitions) out.push_back(p.gpu);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int ClusterState::total_gpus(const std::string& gpu) const {
  int n = 0;
  for (const Node& node : nodes)
    if (node.gpu == gpu) n += node.capacity;
  return n;
}

int ClusterState::total_gpus() const {
  int n = 0;
  for (const Node& node : nodes) n += node.capacity;
  return n;
}

int ClusterState::max_gpus_per_node(const std::string& gpu) const {
  int n = 0;
  for (const Partition& p : partitions)
    if (p.gpu == gpu) n = std::max(n, p.gpus_per_node);
  return n;
}

const char* to_string(JobState s) {
  switch (s) {
    case JobState::pending: return "pending";
    case JobState::running: return "running";
    case JobState::finished: return "finished";
    case JobState::unrunnable: return "unrunnable";
  }
  return "?";
}

const char* to_string(JobKind k) {
  switch (k) {
    case JobKind::movable: return "movable";
    case JobKind::fixed: return "fixed";
    case JobKind::plain: return "plain";
  }
  return "?";
}

std::optional<JobKind> parse_job_kind(std::string_view s) {
  for (JobKind k : {JobKind::movable, JobKind::fixed, JobKind::plain})
    if (s == to_string(k)) return k;
  return std::nullopt;
}

const char* to_string(Decision::Kind k) {
  switch (k) {
    case Decision::Kind::start: return "start";
    case Decision::Kind::move: return "move";
    case Decision::Kind::resize: return "resize";
    case Decision::Kind::preempt: return "preempt";
  }
  return "?";
}

}  // namespace crius::scheduler
