// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#define BOOST_TEST_MODULE launch_layout
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "job/env.h"
#include "launcher/layout.h"
#include "launcher/plan_source.h"
#include "launcher/progress_scan.h"
#include "launcher/rank_env.h"

using namespace crius::launcher;
namespace est = crius::estimator;
using Groups = std::vector<std::vector<int>>;

namespace {

Plan uniform_plan(int tp, int pp, int dp) {
  auto p = plan_from_shape(std::to_string(tp), pp, std::to_string(dp), "", 0);
  BOOST_REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error()));
  return *p;
}

Groups sorted(Groups g) {
  for (auto& x : g) std::sort(x.begin(), x.end());
  std::sort(g.begin(), g.end());
  return g;
}

// Brute force: enumerate every (stage, dp, tp) coordinate in the documented
// order (stage slowest, then dp, then tp) and hand out ranks 0,1,2,... in turn;
// groups are the sets of ranks that share all other coordinates.
struct Brute {
  std::map<std::tuple<int, int, int>, int> rank;
  Groups tp, dp, pp;
};

Brute brute(const Plan& plan) {
  Brute b;
  int next = 0;
  for (int s = 0; s < plan.pp(); ++s)
    for (int d = 0; d < plan.stages[s].dp; ++d)
      for (int t = 0; t < plan.stages[s].tp; ++t) b.rank[{s, d, t}] = next++;
  for (int s = 0; s < plan.pp(); ++s) {
    for (int d = 0; d < plan.stages[s].dp; ++d) {
      std::vector<int> g;
      for (int t = 0; t < plan.stages[s].tp; ++t) g.push_back(b.rank[{s, d, t}]);
      b.tp.push_back(g);
    }
    for (int t = 0; t < plan.stages[s].tp; ++t) {
      std::vector<int> g;
      for (int d = 0; d < plan.stages[s].dp; ++d) g.push_back(b.rank[{s, d, t}]);
      b.dp.push_back(g);
    }
  }
  // equal stages: PP groups share (dp, tp)
  if (plan.uniform())
    for (int d = 0; d < plan.stages[0].dp; ++d)
      for (int t = 0; t < plan.stages[0].tp; ++t) {
        std::vector<int> g;
        for (int s = 0; s < plan.pp(); ++s) g.push_back(b.rank[{s, d, t}]);
        b.pp.push_back(g);
      }
  return b;
}

}  // namespace

BOOST_AUTO_TEST_CASE(megatron_16_gpu_example) {
  // parallel_state.py: tp=2, pp=4 on 16 GPUs (dp=2), two nodes of 8.
  auto l = Layout::make(uniform_plan(2, 4, 2), {"n0", "n1"}, 8);
  BOOST_REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error()));
  Groups tp = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}};
  Groups dp = {{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}};
  Groups pp = {{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}};
  BOOST_TEST(l->tp_groups() == tp);
  BOOST_TEST(l->dp_groups() == dp);
  BOOST_TEST(l->pp_groups() == pp);
  BOOST_TEST(l->pp_group(9) == (std::vector<int>{1, 5, 9, 13}));
  BOOST_TEST(l->dp_group(9) == (std::vector<int>{9, 11}));
  BOOST_TEST(l->rank(13).host == "n1");
  BOOST_TEST(l->rank(13).local_rank == 5);
  BOOST_TEST(l->rank(13).stage == 3);
  BOOST_TEST(l->rank(13).dp_rank == 0);
  BOOST_TEST(l->rank(13).tp_rank == 1);
}

BOOST_AUTO_TEST_CASE(fast_formula_equals_brute_force_on_a_grid) {
  int cases = 0;
  for (int tp : {1, 2, 3, 4, 8})
    for (int pp : {1, 2, 3, 4, 5})
      for (int dp : {1, 2, 3, 4}) {
        Plan plan = uniform_plan(tp, pp, dp);
        auto l = Layout::make(plan, {}, 0);
        BOOST_REQUIRE(l.ok());
        Brute b = brute(plan);
        for (const auto& [coord, r] : b.rank) {
          auto [s, d, t] = coord;
          BOOST_TEST(r == t + tp * (d + dp * s));  // DESIGN.md formula
          BOOST_TEST(l->rank_of(s, d, t) == r);
          BOOST_TEST(l->rank(r).stage == s);
          BOOST_TEST(l->rank(r).dp_rank == d);
          BOOST_TEST(l->rank(r).tp_rank == t);
        }
        BOOST_TEST(sorted(l->tp_groups()) == sorted(b.tp));
        BOOST_TEST(sorted(l->dp_groups()) == sorted(b.dp));
        BOOST_TEST(sorted(l->pp_groups()) == sorted(b.pp));
        // every rank's own groups contain it
        for (int r = 0; r < l->world_size(); ++r) {
          for (const auto& g : {l->tp_group(r), l->dp_group(r), l->pp_group(r)})
            BOOST_TEST((std::find(g.begin(), g.end(), r) != g.end()));
        }
        ++cases;
      }
  BOOST_TEST(cases == 100);
}

BOOST_AUTO_TEST_CASE(uneven_stages) {
  // stage 0: tp=2 dp=2 (ranks 0-3), stage 1: tp=4 dp=1 (ranks 4-7), stage 2: tp=1 dp=2 (8-9)
  auto p = plan_from_shape("2,4,1", 3, "2,1,2", "0-3,4-9,10-11", 0);
  BOOST_REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error()));
  auto l = Layout::make(*p, {"a", "b", "c"}, 4);
  BOOST_REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error()));
  BOOST_TEST(l->world_size() == 10);
  BOOST_TEST(l->tp_groups() == (Groups{{0, 1}, {2, 3}, {4, 5, 6, 7}, {8}, {9}}));
  BOOST_TEST(l->dp_groups() == (Groups{{0, 2}, {1, 3}, {4}, {5}, {6}, {7}, {8, 9}}));
  // chains: G=4; stage sizes 4,4,2 -> stage 2 index floor(g*2/4)
  BOOST_TEST(l->pp_groups() == (Groups{{0, 4, 8}, {1, 5, 8}, {2, 6, 9}, {3, 7, 9}}));
  BOOST_TEST(l->pp_group(8) == (std::vector<int>{0, 4, 8}));
  BOOST_TEST(l->pp_group(9) == (std::vector<int>{2, 6, 9}));
  BOOST_TEST(l->pp_group(5) == (std::vector<int>{1, 5, 8}));
  BOOST_TEST(l->rank(9).host == "c");
  BOOST_TEST(l->rank(9).local_rank == 1);
  // equal-size stages with different shapes: chains partition the ranks
  auto q = plan_from_shape("1,2", 2, "4,2", "", 8);
  BOOST_REQUIRE(q.ok());
  auto m = Layout::make(*q, {}, 0);
  BOOST_REQUIRE(m.ok());
  std::multiset<int> seen;
  for (const auto& g : m->pp_groups()) seen.insert(g.begin(), g.end());
  BOOST_TEST(seen.size() == 8u);
  BOOST_TEST(std::set<int>(seen.begin(), seen.end()).size() == 8u);
  BOOST_TEST(q->stages[1].layer_begin == 4);
}

BOOST_AUTO_TEST_CASE(shapes_that_do_not_fit_give_clear_errors) {
  struct Bad {
    std::string tp;
    int pp;
    std::string dp, layers;
    int nlayers;
    std::string want;
  };
  std::vector<Bad> bad = {
      {"0", 1, "1", "", 0, "--tp: '0' is not a positive integer"},
      {"2,2,2", 2, "1", "", 0, "--tp: 3 values for 2 stages"},
      {"2", 2, "1,1,1", "", 0, "--dp: 3 values for 2 stages"},
      {"2", 0, "1", "", 0, "--pp: must be >= 1"},
      {"1", 3, "1", "", 10, "10 layers do not divide into 3 equal stages"},
      {"1", 2, "1", "0-3,5-7", 0, "must start at layer 4"},
      {"1", 2, "1", "0-3", 0, "1 layer ranges for 2 stages"},
      {"1", 2, "1", "0-x,4-7", 0, "'0-x' is not a layer range"},
      {"1", 2, "1", "0-3,4-7", 12, "cover 8 layers, not 12"},
  };
  for (const auto& b : bad) {
    auto p = plan_from_shape(b.tp, b.pp, b.dp, b.layers, b.nlayers);
    BOOST_TEST_INFO("case " << b.want);
    BOOST_REQUIRE(!p.ok());
    BOOST_TEST(p.error().find(b.want) != std::string::npos, p.error());
  }
  // TP group across a node boundary: tp=4 on nodes of 6 GPUs.
  auto l = Layout::make(uniform_plan(4, 1, 3), {"a", "b"}, 6);
  BOOST_REQUIRE(!l.ok());
  BOOST_TEST(l.error().find("TP group 4,5,6,7 of stage 0 would span nodes a and b") != std::string::npos, l.error());
  // more ranks than slots
  auto m = Layout::make(uniform_plan(2, 2, 2), {"a"}, 4);
  BOOST_REQUIRE(!m.ok());
  BOOST_TEST(m.error().find("needs 8 ranks but the allocation has 1 node(s) x 4 GPU(s) = 4 slots") != std::string::npos,
             m.error());
}

BOOST_AUTO_TEST_CASE(plan_through_the_job_environment) {
  // What job_submit and crius-launch write (job::plan_env) reads back as the same plan.
  auto p = plan_from_shape("2,1", 2, "1,2", "0-5,6-11", 0);
  BOOST_REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error()));
  p->micro_batches = 8;
  p->micro_batch_size = 2;
  p->schedule = est::Schedule{est::Schedule::Kind::gpipe, 1};
  p->recompute = est::Recompute::full;
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : crius::job::plan_env(*p)) env[k] = v;
  BOOST_TEST(env["CRIUS_STAGES"] == "2");
  BOOST_TEST(env["CRIUS_STAGE_TP"] == "2,1");
  BOOST_TEST(env["CRIUS_STAGE_DP"] == "1,2");
  BOOST_TEST(env["CRIUS_STAGE_LAYERS"] == "0-5,6-11");
  BOOST_TEST(env["CRIUS_SCHEDULE"] == "gpipe");
  BOOST_TEST(env["CRIUS_RECOMPUTE"] == "full");
  auto back = est::plan_from_json_text(env["CRIUS_PLAN_JSON"], "CRIUS_PLAN_JSON");
  BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? std::string() : back.error()));
  const Plan& plan = *back;
  BOOST_TEST((plan == *p));
  BOOST_TEST(plan.pp() == 2);
  BOOST_TEST(plan.stages[1].dp == 2);
  BOOST_TEST(plan.stages[0].tp == 2);
  BOOST_TEST(plan.stages[1].layer_begin == 6);
  BOOST_TEST(plan.micro_batches == 8);
  BOOST_TEST(plan.micro_batch_size == 2);
  BOOST_TEST(crius::job::format_layer_ranges(plan) == "0-5,6-11");
  BOOST_TEST(est::plan_hash(plan) == est::plan_hash(*p));
  Plan other = plan;
  other.stages[0].tp = 4;
  BOOST_TEST(est::plan_hash(other) != est::plan_hash(plan));
  auto bad = est::plan_from_json_text("{bad", "CRIUS_PLAN_JSON");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.error().find("CRIUS_PLAN_JSON: not valid JSON") != std::string::npos, bad.error());
  auto stages = est::plan_from_json_text(R"({"version":1,"stages":"two"})", "CRIUS_PLAN_JSON");
  BOOST_TEST(!stages.ok());
  auto old = est::plan_from_json_text(R"({"stages":[{"tp":1,"dp":1}]})", "CRIUS_PLAN_JSON");
  BOOST_REQUIRE(!old.ok());
  BOOST_TEST(old.error().find("key 'version' is missing") != std::string::npos, old.error());
}

BOOST_AUTO_TEST_CASE(plan_from_estimate_json) {
  auto p = plan_from_document_text(R"({"cells":[{"feasible":false,"why":"oom"},
      {"feasible":true,"plan":{"version":1,"stages":[{"layers":[0,4],"dp":2,"tp":1},
                                         {"layers":[4,8],"dp":1,"tp":2}],
       "micro_batches":4,"micro_batch_size":2,"schedule":"interleaved:2","recompute":"selective",
       "sequence_parallel":true,"zero":1}}]})",
                               "est.json");
  BOOST_REQUIRE_MESSAGE(p.ok(), (p.ok() ? std::string() : p.error()));
  BOOST_TEST(p->pp() == 2);
  BOOST_TEST(p->stages[0].dp == 2);
  BOOST_TEST(p->stages[1].layer_end == 8);
  BOOST_TEST(est::to_string(p->schedule) == "interleaved:2");
  BOOST_TEST(p->sequence_parallel);
  auto bad = plan_from_document_text(R"({"plan":{"version":1,"stages":[{"tp":"two"}]}})", "est.json");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.error() == "est.json: stages[0]: key 'tp' must be an integer");
  // A value of the wrong type is named, never thrown (issue: an uncaught nlohmann type_error).
  auto feasible = plan_from_document_text(R"({"cells":[{"feasible":"yes","plan":{"version":1,"stages":[]}}]})", "est.json");
  BOOST_REQUIRE(!feasible.ok());
  BOOST_TEST(feasible.error() == "est.json: key 'cells[0].feasible' must be true or false");
  auto sched = plan_from_document_text(R"({"version":1,"stages":[{"tp":1,"dp":1}],"schedule":"zigzag"})", "x.json");
  BOOST_REQUIRE(!sched.ok());
  BOOST_TEST(sched.error().find("unknown schedule 'zigzag'") != std::string::npos);
  // One layer form only: [BEGIN, END); the inclusive dialects of earlier versions are errors.
  auto dialect = plan_from_document_text(
      R"({"version":1,"stages":[{"first_layer":0,"last_layer":3,"dp":1,"tp":1}]})", "old.json");
  BOOST_REQUIRE(!dialect.ok());
  BOOST_TEST(dialect.error().find("unknown key 'first_layer'") != std::string::npos, dialect.error());
}

BOOST_AUTO_TEST_CASE(hostlists) {
  auto h = expand_hostlist("a100-[1-2],v100-1,n[08-10,3]x");
  BOOST_REQUIRE(h.ok());
  BOOST_TEST(*h == (std::vector<std::string>{"a100-1", "a100-2", "v100-1", "n08x", "n09x", "n10x", "n3x"}));
  BOOST_TEST(!expand_hostlist("a[1-").ok());
  BOOST_TEST(!expand_hostlist("a[3-1]").ok());
}

BOOST_AUTO_TEST_CASE(bind_cpus_shares) {
  using V = std::vector<int>;
  const V cpus = {0, 2, 4, 6};
  // Fewer ranks than CPUs: equal blocks, every CPU given once.
  BOOST_TEST(cpu_share(cpus, 0, 2) == (V{0, 2}));
  BOOST_TEST(cpu_share(cpus, 1, 2) == (V{4, 6}));
  BOOST_TEST(cpu_share(cpus, 2, 3) == (V{4, 6}));
  // More ranks than CPUs: consecutive ranks share one.
  const V two = {0, 1};
  V got;
  for (int r = 0; r < 4; ++r) got.push_back(cpu_share(two, r, 4).at(0));
  BOOST_TEST(got == (V{0, 0, 1, 1}));
  BOOST_TEST(cpu_share(two, 2, 3) == (V{1}));
  // Nothing to split or a rank out of range: left as it is.
  BOOST_TEST(cpu_share(V{}, 0, 2).empty());
  BOOST_TEST(cpu_share(cpus, 5, 2) == cpus);
}

BOOST_AUTO_TEST_CASE(bind_cpus_round_trips_in_the_spec) {
  LaunchSpec s;
  s.plan = uniform_plan(1, 1, 2);
  s.hosts = {"localhost"};
  s.gpus_per_node = 2;
  s.master_addr = "127.0.0.1";
  s.master_port = 29500;
  s.bind_cpus = true;
  auto back = launch_spec_from_json(to_json(s), "spec");
  BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? std::string() : back.error()));
  BOOST_TEST(back->bind_cpus);
  s.bind_cpus = false;
  BOOST_TEST(!launch_spec_from_json(to_json(s), "spec")->bind_cpus);
}

// Progress read from a framework's own log (crius-launch(1), PROGRESS).
BOOST_AUTO_TEST_CASE(progress_from_the_frameworks_own_lines) {
  using crius::launcher::ProgressScan;
  auto m = ProgressScan::make("megatron", std::nullopt);
  BOOST_REQUIRE(m.ok());
  // Lines come in any chunks; only a complete one counts, and only a new count.
  BOOST_TEST(!m->feed(" [2026-12-06 12:00:00] iteration      12/  ").has_value());
  auto p = m->feed("500 | consumed samples: 96 |\n");
  BOOST_REQUIRE(p.has_value());
  BOOST_TEST(p->done == 12);
  BOOST_TEST(p->total == 500);
  BOOST_TEST(!m->feed(" iteration      12/     500 |\n").has_value());
  BOOST_TEST(!m->feed("validation loss at iteration 12 | lm loss value: 3.1\n").has_value());
  BOOST_TEST(!m->feed(" iteration     900/     500 |\n").has_value());  // done > total: not progress
  // torchtitan's lines carry no total: the job's, else none.
  auto t = ProgressScan::make("torchtitan", 1000);
  BOOST_REQUIRE(t.ok());
  p = t->feed("[titan] 2026-12-06 12:00:00,000 - root - INFO - \x1b[31mstep:  7  \x1b[32mloss: 10.8\r\n");
  BOOST_REQUIRE(p.has_value());
  BOOST_TEST(p->done == 7);
  BOOST_TEST(p->total == 1000);
  auto none = ProgressScan::make("torchtitan", std::nullopt);
  BOOST_TEST(!none->feed("step: 7 loss: 1\n").has_value());
  // Bad patterns are named.
  auto bad = ProgressScan::make("x(", 1);
  BOOST_TEST(!bad.ok());
  BOOST_TEST(!ProgressScan::make("no groups", 1).ok());
  BOOST_TEST(!ProgressScan::make("(a)(b)(c)", 1).ok());
}

// Megatron-Core's tp-cp-dp-pp order (parallel_state.py, order "tp-cp-ep-dp-pp"): tp=2, cp=2, dp=2
// and pp=2 on 16 GPUs of two nodes; each stage's CP rings are its ranks tp apart.
BOOST_AUTO_TEST_CASE(context_parallel_rings_sit_between_tp_and_dp) {
  Plan p = uniform_plan(2, 2, 2);
  for (auto& s : p.stages) s.cp = 2;
  auto l = Layout::make(p, {"n0", "n1"}, 8);
  BOOST_REQUIRE_MESSAGE(l.ok(), (l.ok() ? std::string() : l.error()));
  BOOST_TEST(l->world_size() == 16);
  for (int s = 0; s < 2; ++s)
    for (int d = 0; d < 2; ++d)
      for (int c = 0; c < 2; ++c)
        for (int t = 0; t < 2; ++t) {
          const int r = t + 2 * (c + 2 * (d + 2 * s));
          BOOST_TEST(l->rank_of(s, d, t, c) == r);
          BOOST_TEST(l->rank(r).cp_rank == c);
          BOOST_TEST(l->rank(r).dp_rank == d);
        }
  Groups tp = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}};
  Groups dp = {{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}};
  BOOST_TEST(sorted(l->tp_groups()) == tp);
  BOOST_TEST(sorted(l->dp_groups()) == dp);
  BOOST_TEST(l->cp_group(5) == (std::vector<int>{5, 7}));
  BOOST_TEST(l->pp_group(5) == (std::vector<int>{5, 13}));
  const auto j = l->to_json();
  BOOST_TEST(j["ranks"][5]["cp_rank"] == 0);
  BOOST_TEST(j["ranks"][7]["cp_group"] == nlohmann::json({5, 7}));
  // Every rank has its place: no two share a coordinate.
  std::set<std::tuple<int, int, int, int>> seen;
  for (const auto& ri : l->ranks()) seen.insert({ri.stage, ri.dp_rank, ri.cp_rank, ri.tp_rank});
  BOOST_TEST(seen.size() == 16u);
}
