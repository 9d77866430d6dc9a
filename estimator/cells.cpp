// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Which Cells a cluster can give a model, and their ranking.
#include <algorithm>
#include <optional>
#include <queue>
#include <tuple>

#include "estimator/cost.h"

namespace crius::estimator {

using namespace detail;

namespace {

// Nodes of the Cells whose estimates say why no Cell of a request has a plan shape.
constexpr int kReasonNodes = 2;
// Layer visits (WorkBudget) a Cell listed by usable_cells costs: it is memory until ranked.
constexpr std::int64_t kCellVisits = 64;
// Infeasible Cells the frontier keeps to say why none is feasible: the largest, closest to fit.
constexpr std::size_t kReasonCells = 16;

bool better(const Estimate& a, const Estimate& b) {
  if (a.feasible != b.feasible) return a.feasible;
  if (a.feasible && a.iter_time_s != b.iter_time_s) return a.iter_time_s < b.iter_time_s;
  if (a.cell.gpus() != b.cell.gpus()) return a.cell.gpus() < b.cell.gpus();
  if (a.cell.partition != b.cell.partition) return a.cell.partition < b.cell.partition;
  if (a.cell.nodes != b.cell.nodes) return a.cell.nodes < b.cell.nodes;
  return a.cell.stages < b.cell.stages;
}

}  // namespace

namespace {

// enumerate_cells() on partitions cut to `max_nodes` nodes (0: whole).
std::vector<Cell> all_cells(const Model& model, Runtime runtime, const Cluster& cluster, const CellFilter& f,
                            int max_nodes) {
  std::vector<Cell> out;
  const int smax = max_stages(model, runtime);
  for (const auto& p : cluster.partitions) {
    if (f.partition && *f.partition != p.name) continue;
    if (f.gpu && *f.gpu != p.gpu) continue;
    const int nodes = max_nodes > 0 ? std::min(p.nodes, max_nodes) : p.nodes;
    std::vector<std::pair<int, int>> shapes;  // (nodes, gpus_per_node)
    if (f.nodes && f.gpus_per_node) {
      // One explicit allocation: any shape the partition can hold.
      if (*f.nodes <= p.nodes && *f.gpus_per_node <= p.gpus_per_node && *f.nodes >= 1 && *f.gpus_per_node >= 1)
        shapes.emplace_back(*f.nodes, *f.gpus_per_node);
    } else {
      for (int g : divisors(p.gpus_per_node)) shapes.emplace_back(1, g);
      for (int n = 2; n <= nodes; ++n) shapes.emplace_back(n, p.gpus_per_node);
    }
    for (auto [n, g] : shapes) {
      if (f.nodes && *f.nodes != n) continue;
      if (f.gpus_per_node && *f.gpus_per_node != g) continue;
      for (int s : divisors(static_cast<long long>(n) * g)) {
        if (s > smax) break;
        if (f.stages && *f.stages != s) continue;
        if (f.max_gpus && static_cast<long long>(n) * g > *f.max_gpus) continue;
        out.push_back(Cell{p.name, p.gpu, n, g, s});
      }
    }
  }
  return out;
}

}  // namespace

std::vector<Cell> enumerate_cells(const Model& model, Runtime runtime, const Cluster& cluster, const CellFilter& f) {
  return all_cells(model, runtime, cluster, f, 0);
}

std::vector<Cell> usable_cells(const Request& req, const Cluster& cluster, const CellFilter& f, WorkBudget* budget) {
  std::vector<Cell> out;
  auto spend = [&](std::int64_t visits) {
    if (budget) budget->used += visits;
    return budget && budget->exhausted();
  };
  if (req.global_batch < 1) return out;
  const ModelDesc d = describe(req.model);
  const int layers = static_cast<int>(d.layer_kind.size());
  const int smax = max_stages(req.model, req.runtime);
  std::vector<int> dps;  // data-parallel degrees that split the batch, ascending
  for (int dp : divisors(req.global_batch))
    if (!micro_batch_sizes(req, dp).empty()) dps.push_back(dp);
  const StackSwitches stack = cluster.gpus.runtime(req.runtime).stack;
  const std::vector<int> cps = context_parallel_sizes(req.framework, req.model, &stack);
  for (const auto& p : cluster.partitions) {
    if (f.partition && *f.partition != p.name) continue;
    if (f.gpu && *f.gpu != p.gpu) continue;
    const std::size_t first = out.size();
    auto add = [&](int n, int g, int s, int t, int c) {
      if ((f.nodes && *f.nodes != n) || (f.gpus_per_node && *f.gpus_per_node != g) || (f.stages && *f.stages != s) ||
          (f.max_gpus && static_cast<long long>(n) * g > *f.max_gpus))
        return;
      const long long gps = static_cast<long long>(n) * g / s;
      if (tp_allowed(req, d, p, g, static_cast<int>(gps), t, c) && stages_allowed(req.framework, layers, s))
        out.push_back(Cell{p.name, p.gpu, n, g, s});
    };
    bool out_of_work = false;
    if (f.nodes && f.gpus_per_node) {
      // One explicit allocation: the stage counts and TP degrees that leave a data-parallel degree
      // splitting the batch.
      const int n = *f.nodes, g = *f.gpus_per_node;
      if (n < 1 || g < 1 || n > p.nodes || g > p.gpus_per_node) continue;
      for (int s : divisors(static_cast<long long>(n) * g)) {
        if (s > smax) break;
        const long long gps = static_cast<long long>(n) * g / s;
        for (int t : divisors(gps))
          for (int c : cps)
            if (gps % (static_cast<long long>(t) * c) == 0 && std::binary_search(dps.begin(), dps.end(), gps / t / c))
              add(n, g, s, t, c);
      }
    } else {
      // GPUs = stages x TP x CP x DP: walk those four (not the node counts), keep the products that
      // are a divisor of a node or whole nodes of the partition.
      long long most = static_cast<long long>(p.nodes) * p.gpus_per_node;
      if (f.max_gpus) most = std::min<long long>(most, *f.max_gpus);
      const int gpn = p.gpus_per_node;
      for (int s = 1; s <= smax && s <= most && !out_of_work; ++s)
        for (int t : divisors(gpn))
          for (int c : cps) {
            if (out_of_work) break;
            for (int dp : dps) {
              const long long G = static_cast<long long>(s) * t * c * dp;
              const std::size_t listed = out.size();
              if (G > most || (out_of_work = spend(1))) break;
              if (G <= gpn && gpn % G == 0) add(1, static_cast<int>(G), s, t, c);
              else if (G % gpn == 0 && G > gpn) add(static_cast<int>(G / gpn), gpn, s, t, c);
              if (out.size() > listed && (out_of_work = spend(kCellVisits))) break;
            }
          }
    }
    // The order of enumerate_cells: shapes by node count then GPUs per node, stages ascending.
    auto key = [](const Cell& c) { return std::make_tuple(c.nodes, c.gpus_per_node, c.stages); };
    std::sort(out.begin() + static_cast<long>(first), out.end(), [&](const Cell& a, const Cell& b) { return key(a) < key(b); });
    out.erase(std::unique(out.begin() + static_cast<long>(first), out.end()), out.end());
  }
  return out;
}

std::vector<Estimate> rank_cells(const Request& req, const Cluster& cluster, const CellFilter& filter,
                                 const SearchOptions& opts) {
  std::vector<Estimate> out;
  try {
    // Listing the Cells may take half of a request's budget; estimating them has the rest.
    WorkBudget listing;
    if (opts.budget && opts.budget->limit > 0) listing.limit = std::max<std::int64_t>(1, opts.budget->limit / 2);
    std::vector<Cell> cells = usable_cells(req, cluster, filter, opts.budget ? &listing : nullptr);
    if (opts.budget) opts.budget->used += listing.used;
    // None has a plan shape: the smallest Cells say why.
    if (cells.empty()) cells = all_cells(req.model, req.runtime, cluster, filter, kReasonNodes);
    auto estimate = [&](const Cell& c, double at_most_s) {
      if (opts.budget && opts.budget->exhausted()) return infeasible(c, kBudgetOut);
      SearchOptions o = opts;
      o.at_most_s = at_most_s;
      return estimate_cell(req, c, cluster, o);
    };
    if (opts.frontier) {
      // Cells come shape after shape, each shape after every smaller one of its partition.
      std::vector<Estimate> infeasible_cells;
      double partition_best = kInf;
      for (std::size_t i = 0, j; i < cells.size(); i = j) {
        const Cell& first = cells[i];
        if (i == 0 || cells[i - 1].partition != first.partition) partition_best = kInf;
        std::optional<Estimate> best;
        for (j = i; j < cells.size() && cells[j].partition == first.partition && cells[j].nodes == first.nodes &&
                    cells[j].gpus_per_node == first.gpus_per_node;
             ++j) {
          Estimate e = estimate(cells[j], std::min(partition_best, best ? best->iter_time_s : kInf));
          if (e.feasible) {
            if (!best || better(e, *best)) best = std::move(e);
          } else if (e.why != kNotFaster) {
            if (infeasible_cells.size() == kReasonCells) infeasible_cells.erase(infeasible_cells.begin());
            infeasible_cells.push_back(std::move(e));
          }
        }
        if (best && best->iter_time_s < partition_best) {
          partition_best = best->iter_time_s;
          out.push_back(std::move(*best));
        }
      }
      if (out.empty()) out = std::move(infeasible_cells);
    } else if (opts.top > 0) {
      // Largest Cells first: usually the fastest, so the bound on the others tightens early.
      std::vector<std::size_t> order(cells.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return cells[a].gpus() > cells[b].gpus(); });
      std::priority_queue<double> fastest;  // the `top` smallest iteration times so far
      std::vector<std::pair<std::size_t, Estimate>> kept;
      for (std::size_t i : order) {
        Estimate e = estimate(cells[i], fastest.size() >= opts.top ? fastest.top() : kInf);
        if (e.feasible) {
          fastest.push(e.iter_time_s);
          if (fastest.size() > opts.top) fastest.pop();
        }
        if (e.feasible || e.why != kNotFaster) kept.emplace_back(i, std::move(e));
      }
      std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& k : kept) out.push_back(std::move(k.second));
    } else {
      for (const Cell& c : cells) out.push_back(estimate(c, kInf));
    }
    std::stable_sort(out.begin(), out.end(), better);
  } catch (const std::exception&) {
  }
  return out;
}

Estimate best_for_allocation(const Request& req, const Cluster& cluster, std::string gpu, int nodes, int gpus_per_node,
                             const SearchOptions& opts) {
  Cell none{"", gpu, nodes, gpus_per_node, 0};
  const Partition* part = nullptr;
  for (const auto& p : cluster.partitions)
    if (p.gpu == gpu && p.nodes >= nodes && p.gpus_per_node >= gpus_per_node) {
      part = &p;
      break;
    }
  if (!part) return infeasible(none, "no partition has " + std::to_string(nodes) + " nodes x " +
                                         std::to_string(gpus_per_node) + " GPUs of type '" + gpu + "'");
  none.partition = part->name;
  Estimate best = infeasible(none, "no stage count fits");
  bool first = true;
  try {
    const long long G = static_cast<long long>(nodes) * gpus_per_node;
    for (int s : divisors(G)) {
      if (s > max_stages(req.model, req.runtime)) break;
      Cell c{part->name, gpu, nodes, gpus_per_node, s};
      Estimate e = estimate_cell(req, c, cluster, opts);
      if (first || better(e, best)) {
        // Keep the first infeasible reason (fewest stages) unless something fits.
        if (first || e.feasible) best = e;
        first = false;
      }
    }
  } catch (const std::exception& ex) {
    return infeasible(none, std::string("internal error: ") + ex.what());
  }
  return best;
}

}  // namespace crius::estimator
