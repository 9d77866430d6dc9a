// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The estimator (libcrius) as the scheduler's throughput source, and the
// scheduler's view of an estimator cluster.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "estimator/estimator.h"
#include "scheduler/throughput.h"

namespace crius::scheduler {

class EstimatorThroughput final : public ThroughputSource {
 public:
  explicit EstimatorThroughput(const estimator::Cluster& cluster,
                               estimator::Runtime runtime = estimator::Runtime::megatron)
      : m_cluster(cluster), m_runtime(runtime) {}
  Result<void> check_model(const std::string& model) override;
  std::string describe() const override;

 private:
  // Best plan over stage counts for the allocation (estimator::best_for_allocation).
  Perf do_best(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) override;
  // One stage, tp = 1, dp = all GPUs: pure data parallelism.
  Perf do_data_parallel(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) override;
  const estimator::Model* model(const std::string& id);
  const estimator::Cluster& m_cluster;
  estimator::Runtime m_runtime;
  std::map<std::string, estimator::Model> m_models;
};

ClusterState cluster_state(const estimator::Cluster& cluster);
std::vector<std::string> gpu_ids(const estimator::Cluster& cluster);

}  // namespace crius::scheduler
