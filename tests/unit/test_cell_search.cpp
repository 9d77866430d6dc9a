// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The Cell search's shortcuts against the full enumeration, on every model of the shipped
// catalogue: the Cells left out have no plan (usable_cells), and the K fastest (SearchOptions::top)
// and the frontier (SearchOptions::frontier) are what estimating every Cell to the end gives, so
// a job gets the same Cell whatever is free.
#define BOOST_TEST_MODULE cell_search
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "estimator/estimator.h"

namespace est = crius::estimator;

static std::string top() {
  const char* t = std::getenv("TOP");
  return t ? t : ".";
}

static est::Cluster cluster(const std::string& file) {
  auto c = est::load_cluster(top() + "/tests/data/estimator/" + file);
  if (!c.ok()) throw std::runtime_error(c.error());
  return std::move(*c);
}

static std::string name(const est::Request& r) {
  return r.model.id + " batch " + std::to_string(r.global_batch) + (r.runtime == est::Runtime::alpa ? " alpa" : "");
}

// rank_cells' order, on Cells estimated to the end.
static bool faster(const est::Estimate& a, const est::Estimate& b) {
  if (a.feasible != b.feasible) return a.feasible;
  if (!a.feasible) return false;
  if (a.iter_time_s != b.iter_time_s) return a.iter_time_s < b.iter_time_s;
  return std::make_tuple(a.cell.gpus(), a.cell.partition, a.cell.nodes, a.cell.stages) <
         std::make_tuple(b.cell.gpus(), b.cell.partition, b.cell.nodes, b.cell.stages);
}

static std::vector<est::Estimate> every_cell_to_the_end(const est::Request& req, const est::Cluster& c,
                                                        const std::vector<est::Cell>& cells) {
  std::vector<est::Estimate> out;
  for (const auto& cell : cells) out.push_back(est::estimate_cell(req, cell, c));
  std::stable_sort(out.begin(), out.end(), faster);
  return out;
}

// The frontier by its definition: per partition, the best Cell of each shape that is faster
// than every smaller shape's best.
static std::vector<est::Cell> frontier_of(const std::vector<est::Estimate>& all) {
  std::map<std::tuple<std::string, int, int>, const est::Estimate*> best;  // (partition, nodes, gpn)
  for (const auto& e : all)
    if (e.feasible) {
      auto& b = best[{e.cell.partition, e.cell.nodes, e.cell.gpus_per_node}];
      if (!b) b = &e;  // `all` is sorted: the first is the shape's best
    }
  std::vector<est::Cell> out;
  for (const auto& [shape, e] : best) {
    bool dominated = false;
    for (const auto& [other, o] : best)
      if (std::get<0>(other) == std::get<0>(shape) && other != shape && std::get<1>(other) <= std::get<1>(shape) &&
          std::get<2>(other) <= std::get<2>(shape) && o->iter_time_s <= e->iter_time_s)
        dominated = true;
    if (!dominated) out.push_back(e->cell);
  }
  return out;
}

// The Cell a job gets among those that fit `free_nodes` nodes of `free_gpn` free GPUs in every
// partition: the fastest, or the most samples per GPU; fewer GPUs on a tie.
static std::optional<est::Cell> choose(const std::vector<est::Estimate>& cells, int free_nodes, int free_gpn,
                                       bool per_gpu) {
  const est::Estimate* best = nullptr;
  auto value = [&](const est::Estimate& e) { return per_gpu ? e.samples_per_s / e.cell.gpus() : e.samples_per_s; };
  for (const auto& e : cells) {
    if (!e.feasible || e.cell.nodes > free_nodes || e.cell.gpus_per_node > free_gpn) continue;
    if (!best || value(e) > value(*best) || (value(e) == value(*best) && e.cell.gpus() < best->cell.gpus()))
      best = &e;
  }
  if (!best) return std::nullopt;
  return best->cell;
}

static std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

static void check(const est::Request& req, const est::Cluster& c, const std::vector<est::Cell>& reference_cells) {
  BOOST_TEST_CONTEXT(name(req)) {
    const auto full = every_cell_to_the_end(req, c, reference_cells);
    const auto usable = est::usable_cells(req, c, {});
    // usable_cells leaves out only Cells without a plan.
    auto key = [](const est::Cell& x) { return std::make_tuple(x.partition, x.nodes, x.gpus_per_node, x.stages); };
    std::set<std::tuple<std::string, int, int, int>> listed;
    for (const auto& cell : usable) listed.insert(key(cell));
    for (const auto& e : full)
      if (e.feasible) BOOST_TEST(listed.count(key(e.cell)) == 1u, est::describe(e.cell) << " is feasible but not usable");
    const bool any = !full.empty() && full.front().feasible;

    // The K fastest, searched only until a Cell cannot enter them.
    for (std::size_t k : {std::size_t{1}, std::size_t{10}}) {
      est::SearchOptions o;
      o.top = k;
      const auto ranked = est::rank_cells(req, c, {}, o);
      for (std::size_t i = 0; i < k && i < full.size() && full[i].feasible; ++i) {
        BOOST_TEST_REQUIRE(i < ranked.size());
        BOOST_TEST(est::describe(ranked[i].cell) == est::describe(full[i].cell));
        BOOST_TEST(ranked[i].iter_time_s == full[i].iter_time_s);
      }
    }

    // The frontier: the same Cells, and the same choice whatever is free.
    est::SearchOptions o;
    o.frontier = true;
    const auto frontier = est::rank_cells(req, c, {}, o);
    std::vector<std::string> got, want;
    for (const auto& e : frontier)
      if (e.feasible) got.push_back(est::describe(e.cell));
    for (const auto& cell : frontier_of(full)) want.push_back(est::describe(cell));
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    BOOST_TEST(got == want, joined(got) << " vs " << joined(want));
    if (!any) BOOST_TEST(!frontier.empty());  // the infeasible Cells say why
    for (int nodes : {1, 2, 3, 5, 8, 100000})
      for (int gpn : {1, 2, 4, 8, 16})
        for (bool per_gpu : {false, true}) {
          auto a = choose(full, nodes, gpn, per_gpu), b = choose(frontier, nodes, gpn, per_gpu);
          BOOST_TEST(a.has_value() == b.has_value());
          if (a && b) BOOST_TEST(est::describe(*a) == est::describe(*b), nodes << " x " << gpn << " free");
        }
  }
}

BOOST_AUTO_TEST_CASE(the_shortcuts_give_what_every_cell_estimated_to_the_end_gives) {
  const est::Cluster c = cluster("cell-search.toml");
  int cases = 0;
  for (const est::Model& m : c.models.models())
    for (int batch : {96, 512}) {
      est::Request req;
      req.model = m;
      req.global_batch = batch;
      check(req, c, est::enumerate_cells(m, req.runtime, c, {}));
      ++cases;
    }
  // Alpa's 16 micro-batches and a pinned dimension leave fewer Cells usable.
  for (const char* id : {"gpt3-1.3b", "bert__2.6B", "wide_resnet__1B"}) {
    est::Request req;
    req.model = *c.models.resolve(id);
    req.global_batch = 256;
    req.runtime = est::Runtime::alpa;
    check(req, c, est::enumerate_cells(req.model, req.runtime, c, {}));
    req.runtime = est::Runtime::megatron;
    req.pins.tp = 2;
    check(req, c, est::enumerate_cells(req.model, req.runtime, c, {}));
    cases += 2;
  }
  BOOST_TEST(cases == 2 * static_cast<int>(c.models.models().size()) + 6);
}

BOOST_AUTO_TEST_CASE(on_65536_gpus_the_shortcuts_give_what_every_cell_gives) {
  const est::Cluster c = cluster("h100-8192.toml");
  for (auto [id, batch] : {std::pair{"llama2-70b", 1024}, {"gpt3-175b", 1536}, {"llama3-8b", 512}}) {
    est::Request req;
    req.model = *c.models.resolve(id);
    req.global_batch = batch;
    const auto every = est::enumerate_cells(req.model, req.runtime, c, {});
    BOOST_TEST(every.size() > 50000u);  // every node count, every stage count dividing it
    BOOST_TEST(est::usable_cells(req, c, {}).size() < 2000u);
    check(req, c, every);
  }
}

BOOST_AUTO_TEST_CASE(the_cell_filter_bounds_the_gpus) {
  const est::Cluster c = cluster("cell-search.toml");
  est::Request req;
  req.model = *c.models.resolve("gpt3-1.3b");
  req.global_batch = 512;
  est::CellFilter f;
  f.max_gpus = 6;
  const auto cells = est::usable_cells(req, c, f);
  BOOST_TEST(!cells.empty());
  for (const auto& cell : cells) BOOST_TEST(cell.gpus() <= 6);
  for (const auto& cell : est::enumerate_cells(req.model, req.runtime, c, f)) BOOST_TEST(cell.gpus() <= 6);
}
