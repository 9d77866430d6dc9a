// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Where the scheduler gets the speed of a job on an allocation.
//
// best():           the Cell-optimal plan for the allocation (what the job runs at).
// data_parallel():  pure data parallelism on the allocation (what the baseline
//                   schedulers can know when they decide; the paper's setup).
// Both are keyed by (model, global batch, gpu, nodes, gpus_per_node).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "estimator/result.h"
#include "scheduler/types.h"

namespace crius::scheduler {

struct Perf {
  bool feasible = false;
  double iter_time_s = 0;      // one optimizer step over the global batch
  double samples_per_s = 0;
  int stages = 0;              // of the best plan (0 = unknown)
  std::string why;             // when infeasible
};


class ThroughputSource {
 public:
  virtual ~ThroughputSource() = default;
  Perf best(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt = {}) {
    return do_best(model, batch, shape, rt);
  }
  Perf data_parallel(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt = {}) {
    return do_data_parallel(model, batch, shape, rt);
  }
  // Error (listing close matches) when the model is unknown to this source.
  virtual Result<void> check_model(const std::string& model) = 0;
  virtual std::string describe() const = 0;

 protected:
  virtual Perf do_best(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) = 0;
  virtual Perf do_data_parallel(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) {
    return do_best(model, batch, shape, rt);
  }
};

// Memoises another source per (model, batch, gpu, nodes, gpus_per_node).
class CachedThroughput final : public ThroughputSource {
 public:
  // max_entries: forget everything when the cache reaches it (0 = unbounded; a long-running
  // criusd bounds it, a simulation keeps a run's speeds).
  explicit CachedThroughput(ThroughputSource& inner, size_t max_entries = 0)
      : m_inner(inner), m_max_entries(max_entries) {}
  Result<void> check_model(const std::string& model) override { return m_inner.check_model(model); }
  std::string describe() const override { return m_inner.describe(); }
  size_t misses() const { return m_misses; }
  // Every answer given so far, as a table TableThroughput::load reads back
  // (with the dp_iter_time_s column), sorted: a run's speeds, frozen.
  Result<void> save(const std::string& path) const;

 private:
  Perf do_best(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) override;
  Perf do_data_parallel(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) override;
  struct Key {
    std::string model, gpu;
    int batch, nodes, gpn;
    bool dp;
    int stack;  // RuntimeChoice::key()
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  Perf lookup(const Key& k, const std::string& model, int batch, const Cell& shape, RuntimeChoice rt);
  ThroughputSource& m_inner;
  std::unordered_map<Key, Perf, KeyHash> m_cache;
  size_t m_max_entries = 0;
  size_t m_misses = 0;
};

// A measured table (the format of measured-calibration.csv):
//   model,size,global_batch,gpu_type,num_nodes,gpus_per_node,iter_time_s,kind
// `size` is optional (model id = model "__" size when present); kind "oom" (or
// an empty iter_time_s) marks a shape that does not fit. An optional column
// dp_iter_time_s gives the pure data-parallel time (empty: does not fit).
// Shapes missing from the table go to the fallback source, or are infeasible
// without one.
class TableThroughput final : public ThroughputSource {
 public:
  static Result<std::unique_ptr<TableThroughput>> load(const std::string& path);
  void set_fallback(ThroughputSource* fallback) { m_fallback = fallback; }
  Result<void> check_model(const std::string& model) override;
  std::string describe() const override;
  size_t rows() const { return m_rows.size(); }

 private:
  // Measured speeds have no runtime profile: `rt` only reaches the fallback.
  Perf do_best(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) override;
  Perf do_data_parallel(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) override;
  std::string m_path;
  std::unordered_map<std::string, Perf> m_rows;   // key: model|batch|gpu|nodes|gpn
  std::unordered_map<std::string, Perf> m_dp_rows;  // from dp_iter_time_s
  std::vector<std::string> m_models;
  ThroughputSource* m_fallback = nullptr;
};

// What happens where nothing was measured: another source's speeds, each shape's iteration
// time multiplied by a fixed error drawn once per (model, batch, gpu, nodes, gpus per node)
// from a log-normal distribution, exp(N(0, sigma)), seeded. sigma 0.15 gives a median
// absolute error of 10% and a 90th percentile of 28%, the estimator's own on measured runs.
// The same seed gives the same errors in every run and every policy.
class NoisyThroughput final : public ThroughputSource {
 public:
  NoisyThroughput(ThroughputSource& inner, double sigma, std::uint64_t seed)
      : m_inner(inner), m_sigma(sigma), m_seed(seed) {}
  Result<void> check_model(const std::string& model) override { return m_inner.check_model(model); }
  std::string describe() const override;
  // The factor applied to the iteration time of that shape.
  double factor(const std::string& model, int batch, const Cell& shape) const;

 private:
  Perf do_best(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) override;
  Perf do_data_parallel(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) override;
  Perf noisy(Perf p, const std::string& model, int batch, const Cell& shape) const;
  ThroughputSource& m_inner;
  double m_sigma;
  std::uint64_t m_seed;
};

}  // namespace crius::scheduler
