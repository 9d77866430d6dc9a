// Which Cells a cluster can give a model, and their ranking.
#include <algorithm>

#include "estimator/cost.h"

namespace crius::estimator {

using namespace detail;

namespace {

bool better(const Estimate& a, const Estimate& b) {
  if (a.feasible != b.feasible) return a.feasible;
  if (a.feasible && a.iter_time_s != b.iter_time_s) return a.iter_time_s < b.iter_time_s;
  if (a.cell.gpus() != b.cell.gpus()) return a.cell.gpus() < b.cell.gpus();
  if (a.cell.partition != b.cell.partition) return a.cell.partition < b.cell.partition;
  if (a.cell.nodes != b.cell.nodes) return a.cell.nodes < b.cell.nodes;
  return a.cell.stages < b.cell.stages;
}

}  // namespace

std::vector<Cell> enumerate_cells(const Model& model, Runtime runtime, const Cluster& cluster, const CellFilter& f) {
  std::vector<Cell> out;
  const int smax = max_stages(model, runtime);
  for (const auto& p : cluster.partitions) {
    if (f.partition && *f.partition != p.name) continue;
    if (f.gpu && *f.gpu != p.gpu) continue;
    std::vector<std::pair<int, int>> shapes;  // (nodes, gpus_per_node)
    if (f.nodes && f.gpus_per_node) {
      // One explicit allocation: any shape the partition can hold.
      if (*f.nodes <= p.nodes && *f.gpus_per_node <= p.gpus_per_node && *f.nodes >= 1 && *f.gpus_per_node >= 1)
        shapes.emplace_back(*f.nodes, *f.gpus_per_node);
    } else {
      for (int g : divisors(p.gpus_per_node)) shapes.emplace_back(1, g);
      for (int n = 2; n <= p.nodes; ++n) shapes.emplace_back(n, p.gpus_per_node);
    }
    for (auto [n, g] : shapes) {
      if (f.nodes && *f.nodes != n) continue;
      if (f.gpus_per_node && *f.gpus_per_node != g) continue;
      for (int s : divisors(static_cast<long long>(n) * g)) {
        if (s > smax) break;
        if (f.stages && *f.stages != s) continue;
        out.push_back(Cell{p.name, p.gpu, n, g, s});
      }
    }
  }
  return out;
}

std::vector<Estimate> rank_cells(const Request& req, const Cluster& cluster, const CellFilter& filter,
                                 const SearchOptions& opts) {
  std::vector<Estimate> out;
  try {
    for (const Cell& c : enumerate_cells(req.model, req.runtime, cluster, filter))
      out.push_back(opts.budget && opts.budget->exhausted() ? infeasible(c, kBudgetOut)
                                                             : estimate_cell(req, c, cluster, opts));
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
