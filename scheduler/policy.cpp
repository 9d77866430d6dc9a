// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "common/util.h"
#include "scheduler/policy.h"

#include <algorithm>

#include "scheduler/policies/crius.h"
#include "scheduler/policies/elasticflow_ls.h"
#include "scheduler/policies/fcfs.h"
#include "scheduler/policies/gandiva.h"
#include "scheduler/policies/gavel.h"
#include "scheduler/policies/sia.h"

namespace crius::scheduler {

bool Context::feasible(const Job& j, const std::string& gpu, int gpus) const {
  for (const PlacedShape& ps : shapes_for(cluster, gpu, gpus)) {
    if (best(j, ps.shape).feasible) return true;
  }
  return false;
}

bool Context::allowed(const Job& j, int partition, const Cell& shape) const {
  if (const int cap = max_gpus(j); cap > 0 && shape.gpus() > cap) return false;
  if (j.max_nodes > 0 && shape.nodes > j.max_nodes) return false;
  if (j.max_gpus_per_node > 0 && shape.gpus_per_node > j.max_gpus_per_node) return false;
  if (auto it = j.max_gpus_of_type.find(shape.gpu); it != j.max_gpus_of_type.end() && shape.gpus() > it->second)
    return false;
  if (j.partition_max_nodes.empty()) return true;
  if (partition < 0 || partition >= static_cast<int>(j.partition_max_nodes.size())) return false;
  const int most = j.partition_max_nodes[static_cast<size_t>(partition)];
  return most == 0 || (most > 0 && shape.nodes <= most);
}

double restart_cost(const PolicyOptions& o, bool cell_policy, int gpus) {
  if (o.restart_model == RestartModel::flat) return o.restart_cost_s;
  if (o.restart_model == RestartModel::live) return o.checkpoint_grace_s + o.restart_cost_s;
  const double per_gpu = cell_policy ? 10 : 150, cap = cell_policy ? 40 : 600;
  return std::min(cap, per_gpu * std::max(1, gpus));
}

Result<CriusMechanisms> crius_without(const std::string& list) {
  CriusMechanisms m;
  const std::pair<const char*, bool CriusMechanisms::*> names[] = {
      {"search", &CriusMechanisms::search},       {"scaling", &CriusMechanisms::scaling},
      {"type-change", &CriusMechanisms::type_change}, {"migration", &CriusMechanisms::migration},
      {"opportunistic", &CriusMechanisms::opportunistic}, {"upgrade", &CriusMechanisms::upgrade}};
  if (list.empty()) return m;
  for (size_t from = 0, comma = 0; comma != std::string::npos; from = comma + 1) {
    comma = list.find(',', from);
    const std::string_view name = std::string_view(list).substr(from, comma - from);
    auto at = std::find_if(std::begin(names), std::end(names), [&](const auto& n) { return name == n.first; });
    if (at == std::end(names)) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + std::string(n.first);
      return make_error("unknown crius mechanism '" + std::string(name) + "' (known: " + known + ")");
    }
    m.*(at->second) = false;
  }
  return m;
}

bool may_change(const Job& j, const PolicyOptions& o, double now) {
  if (o.min_runtime_s > 0 && j.last_start >= 0 && now - j.last_start < o.min_runtime_s) return false;
  if (o.max_moves_per_job < 0) return true;
  const auto recent = std::count_if(j.changed_at.begin(), j.changed_at.end(),
                                    [&](double t) { return t > now - o.rate_window_s; });
  return recent < o.max_moves_per_job;
}

std::optional<PlacedShape> requested_shape(const Context& ctx, const Job& j) {
  std::optional<PlacedShape> first;
  for (const PlacedShape& ps : shapes_for(ctx.cluster, j.req_gpu, j.req_gpus)) {
    if (!ctx.allowed(j, ps.partition, ps.shape)) continue;
    if (decision_speed(ctx, j, ps.shape, true) > 0) return ps;
    if (!first) first = ps;
  }
  return first;
}

std::optional<PlacedShape> Policy::arrive(const Context& ctx, std::size_t i, int /*waiting*/) {
  return requested_shape(ctx, *ctx.jobs[i]);
}

Result<void> Policy::runnable(const Job& job, const Context& ctx) const {
  const int cap = ctx.max_gpus(job);
  for (const std::string& gpu : ctx.gpu_types())
    for (int c : counts_for(ctx.total_gpus(gpu)))
      if ((cap <= 0 || c <= cap) && ctx.feasible(job, gpu, c)) return {};
  if (cap > 0) return make_error("no Cell of at most " + std::to_string(cap) + " GPUs (the site's or the job's max_gpus) can run it");
  return make_error("no Cell of the cluster can run it (every shape is out of memory or unknown)");
}

const std::vector<std::pair<std::string, PolicyFactory>>& policy_registry() {
  static const std::vector<std::pair<std::string, PolicyFactory>> registry = {
      {"crius", [](const PolicyOptions& o) { return std::make_unique<CriusPolicy>(o); }},
      {"fcfs", [](const PolicyOptions& o) { return std::make_unique<FcfsPolicy>(o, true); }},
      {"fcfs-strict", [](const PolicyOptions& o) { return std::make_unique<FcfsPolicy>(o, false); }},
      {"gandiva", [](const PolicyOptions& o) { return std::make_unique<GandivaPolicy>(o); }},
      {"gavel", [](const PolicyOptions& o) { return std::make_unique<GavelPolicy>(o); }},
      {"elasticflow-ls",
       [](const PolicyOptions& o) { return std::make_unique<ElasticFlowLsPolicy>(o); }},
      {"sia", [](const PolicyOptions& o) { return std::make_unique<SiaPolicy>(o); }},
  };
  return registry;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> out;
  for (const auto& [name, f] : policy_registry()) out.push_back(name);
  return out;
}

Result<std::unique_ptr<Policy>> make_policy(std::string_view name, const PolicyOptions& options) {
  for (const auto& [n, f] : policy_registry())
    if (n == name) return f(options);
  std::vector<std::string> near = util::close_matches(name, policy_names(), 3);
  return make_error("unknown policy '" + std::string(name) + "'" +
                    (near.empty() ? "" : "; did you mean " + util::join(near, ", ") + "?") +
                    " (policies: " + util::join(policy_names(), ", ") + ", all)");
}

std::vector<Target> keep_running(const Context& ctx) {
  std::vector<Target> t(ctx.jobs.size());
  for (size_t i = 0; i < ctx.jobs.size(); ++i) {
    if (ctx.jobs[i]->state == JobState::running) {
      t[i].alloc = ctx.jobs[i]->alloc;
      t[i].opportunistic = ctx.jobs[i]->opportunistic;
    }
  }
  return t;
}

ClusterTotals::ClusterTotals(const ClusterState& cluster) : types(cluster.gpu_types()), gpus(types.size(), 0) {
  for (const Node& n : cluster.nodes) {
    all += n.capacity;
    auto t = std::lower_bound(types.begin(), types.end(), n.gpu);
    if (t != types.end() && *t == n.gpu) gpus[t - types.begin()] += n.capacity;
  }
}

int ClusterTotals::of(const std::string& gpu) const {
  auto t = std::lower_bound(types.begin(), types.end(), gpu);
  return t != types.end() && *t == gpu ? gpus[t - types.begin()] : 0;
}

FreeMap taken(const Context& ctx, const std::vector<Target>& targets) {
  FreeMap free = ctx.free_map();
  for (const Target& t : targets)
    if (!t.alloc.empty()) free.take(t.alloc);
  return free;
}

Result<void> runnable_on_requested_type(const Job& job, const Context& ctx, bool exact_count) {
  std::vector<std::string> types = ctx.gpu_types();
  if (std::find(types.begin(), types.end(), job.req_gpu) == types.end())
    return make_error("requests GPU type '" + job.req_gpu + "', which the cluster does not have (" +
                      util::join(types, ", ") + ")");
  if (exact_count) {
    if (job.req_gpus > ctx.total_gpus(job.req_gpu))
      return make_error("requests " + std::to_string(job.req_gpus) + " " + job.req_gpu +
                        " GPUs, the cluster has " +
                        std::to_string(ctx.total_gpus(job.req_gpu)));
    if (!ctx.feasible(job, job.req_gpu, job.req_gpus))
      return make_error("no Cell of " + std::to_string(job.req_gpus) + " " + job.req_gpu +
                        " GPUs fits it in memory");
    return {};
  }
  for (int c : counts_for(ctx.total_gpus(job.req_gpu)))
    if (ctx.feasible(job, job.req_gpu, c)) return {};
  return make_error("no Cell of " + job.req_gpu + " GPUs fits it in memory");
}

double decision_speed(const Context& ctx, const Job& job, const Cell& shape,
                      bool data_parallel) {
  Perf b = ctx.best(job, shape);
  if (!b.feasible) return -1;
  if (!data_parallel) return b.samples_per_s;
  Perf d = ctx.dp(job, shape);
  return d.feasible ? d.samples_per_s : b.samples_per_s;
}

std::optional<Allocation> place_fastest(const FreeMap& free, const std::vector<RatedShape>& shapes, double* speed) {
  std::optional<Allocation> best;
  double best_speed = 0;
  for (const RatedShape& s : shapes) {
    if (s.speed <= 0 || s.speed <= best_speed * (1 + 1e-9)) continue;
    if (auto a = free.place(s.partition, s.shape)) {
      best = std::move(a);
      best_speed = s.speed;
    }
  }
  if (speed) *speed = best_speed;
  return best;
}

std::optional<Allocation> place_best(const Context& ctx, const FreeMap& free, const Job& job,
                                     const std::string& gpu, int gpus, bool data_parallel) {
  std::vector<RatedShape> shapes;
  for (const PlacedShape& ps : shapes_for(ctx.cluster, gpu, gpus))
    if (ctx.allowed(job, ps.partition, ps.shape))
      shapes.push_back({ps.partition, ps.shape, decision_speed(ctx, job, ps.shape, data_parallel)});
  return place_fastest(free, shapes);
}

}  // namespace crius::scheduler
