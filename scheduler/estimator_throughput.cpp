// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/estimator_throughput.h"

namespace crius::scheduler {

const estimator::Model* EstimatorThroughput::model(const std::string& id) {
  auto it = m_models.find(id);
  if (it != m_models.end()) return &it->second;
  Result<estimator::Model> m = m_cluster.models.resolve(id);
  if (!m) return nullptr;
  return &m_models.emplace(id, std::move(m.value())).first->second;
}

static Perf to_perf(const estimator::Estimate& e) {
  Perf p;
  p.feasible = e.feasible && e.iter_time_s > 0;
  p.iter_time_s = e.iter_time_s;
  p.samples_per_s = e.samples_per_s;
  p.stages = e.cell.stages;
  p.why = e.why;
  return p;
}

Perf EstimatorThroughput::do_best(const std::string& model_id, int batch, const Cell& shape, RuntimeChoice rt) {
  const estimator::Model* m = model(model_id);
  if (!m) return Perf{false, 0, 0, 0, "unknown model '" + model_id + "'"};
  estimator::Request req;
  req.model = *m;
  req.global_batch = batch;
  req.runtime = rt.runtime.value_or(m_runtime);
  req.framework = rt.framework.value_or(m_cluster.framework);
  return to_perf(estimator::best_for_allocation(req, m_cluster, shape.gpu, shape.nodes,
                                                shape.gpus_per_node));
}

Perf EstimatorThroughput::do_data_parallel(const std::string& model_id, int batch, const Cell& shape,
                                           RuntimeChoice rt) {
  const estimator::Model* m = model(model_id);
  if (!m) return Perf{false, 0, 0, 0, "unknown model '" + model_id + "'"};
  const estimator::Partition* part = nullptr;
  for (const estimator::Partition& p : m_cluster.partitions)
    if (p.gpu == shape.gpu && p.nodes >= shape.nodes && p.gpus_per_node >= shape.gpus_per_node) {
      part = &p;
      break;
    }
  if (!part) return Perf{false, 0, 0, 0, "no partition of " + shape.gpu + " holds the shape"};
  estimator::Request req;
  req.model = *m;
  req.global_batch = batch;
  req.runtime = rt.runtime.value_or(m_runtime);
  req.framework = rt.framework.value_or(m_cluster.framework);
  req.pins.tp = 1;
  req.pins.dp = shape.gpus();
  estimator::Cell cell{part->name, shape.gpu, shape.nodes, shape.gpus_per_node, 1};
  return to_perf(estimator::estimate_cell(req, cell, m_cluster));
}

Result<void> EstimatorThroughput::check_model(const std::string& id) {
  Result<estimator::Model> m = m_cluster.models.resolve(id);
  if (!m) return make_error(m.error());
  return {};
}

std::string EstimatorThroughput::describe() const {
  return std::string("estimator (runtime ") + std::string(estimator::to_string(m_runtime)) + ")";
}

ClusterState cluster_state(const estimator::Cluster& cluster) {
  std::vector<Partition> parts;
  for (const estimator::Partition& p : cluster.partitions)
    parts.push_back(Partition{p.name, p.gpu, p.nodes, p.gpus_per_node});
  return ClusterState::from_partitions(std::move(parts));
}

std::vector<std::string> gpu_ids(const estimator::Cluster& cluster) {
  std::vector<std::string> out;
  for (const estimator::GpuType& g : cluster.gpus.types()) out.push_back(g.id);
  return out;
}

}  // namespace crius::scheduler
