// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Scheduler core: throughput table, trace parsing, placement, the stateless
// Scheduler::decide (what criusd calls each round) and the invariant checker.
#define BOOST_TEST_MODULE sched_core
#include <boost/test/unit_test.hpp>

#include <random>

#include <algorithm>
#include <cmath>

#include "tests/unit/test_sched_fixture.h"

using namespace sched_fixture;

namespace {

cs::Job running(cs::Job j, const cs::ClusterState& c, const std::string& part, int gpn,
                std::vector<int> nodes, bool opportunistic = false) {
  j.state = cs::JobState::running;
  j.alloc.partition = part == "x" ? 0 : 1;
  j.alloc.shape = cs::shape(c.partitions[j.alloc.partition].gpu, static_cast<int>(nodes.size()), gpn);
  j.alloc.node_ids = std::move(nodes);
  j.opportunistic = opportunistic;
  j.first_start = 100;
  return j;
}

std::string describe(const std::vector<cs::Decision>& ds) {
  std::string out;
  for (const cs::Decision& d : ds) {
    out += std::string(cs::to_string(d.kind)) + " j" + std::to_string(d.job);
    if (!d.target.empty()) {
      out += " " + d.target.shape.gpu + " " + std::to_string(d.target.shape.nodes) + "x" +
             std::to_string(d.target.shape.gpus_per_node) + " on";
      for (int n : d.target.node_ids) out += " " + std::to_string(n);
    }
    if (d.opportunistic) out += " opportunistic";
    out += "; ";
  }
  return out;
}

// The decisions of one crius round over `jobs` at `now`, described.
std::string crius_round(const cs::ClusterState& c, const std::vector<cs::Job>& jobs, double now,
                        const cs::PolicyOptions& o = {}) {
  auto t = table();
  auto pol = cs::make_policy("crius", o);
  cs::Scheduler s(**pol, *t, o);
  auto d = s.decide(c, jobs, now);
  BOOST_REQUIRE(d);
  return describe(*d);
}

}  // namespace

BOOST_AUTO_TEST_CASE(table_lookup_oom_and_fallback) {
  auto t = table();
  BOOST_TEST(t->rows() == 17u);
  cs::Perf p = t->best("a", 8, cs::shape("x", 1, 2));
  BOOST_TEST(p.feasible);
  BOOST_TEST(p.iter_time_s == 5);
  BOOST_TEST(p.samples_per_s == 8.0 / 5);
  BOOST_TEST(!t->best("b", 8, cs::shape("x", 1, 1)).feasible);         // oom row
  BOOST_TEST(!t->best("a", 8, cs::shape("x", 4, 1)).feasible);         // missing, no fallback
  BOOST_TEST(t->best("a", 8, cs::shape("x", 4, 1)).why.find("no measurement") == 0);
  auto unknown = t->check_model("aa");
  BOOST_TEST(!unknown.ok());
  BOOST_TEST(unknown.error().find("did you mean a") != std::string::npos);
  // Missing shapes go to the fallback source.
  auto t2 = table();
  t->set_fallback(t2.get());
  BOOST_TEST(t->best("a", 8, cs::shape("y", 2, 2)).iter_time_s == 5);
}

BOOST_AUTO_TEST_CASE(table_errors_name_the_line) {
  std::string path = write_temp("model,global_batch,gpu_type,num_nodes,gpus_per_node,iter_time_s\n"
                                "a,8,x,1,1,10\n"
                                "a,8,x,one,1,10\n");
  auto t = cs::TableThroughput::load(path);
  std::remove(path.c_str());
  BOOST_REQUIRE(!t);
  BOOST_TEST(t.error() == path + ":3: column 'num_nodes' must be a positive integer");
  path = write_temp("model,gpu_type\n");
  t = cs::TableThroughput::load(path);
  std::remove(path.c_str());
  BOOST_TEST(!t.ok());
  BOOST_TEST(t.error().find(":1: header lacks column 'global_batch'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(trace_parsing_and_iter_scale) {
  std::string path = write_temp(
      "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,gpu_type\n"
      "j-0,100,50,a,1100,8,2,x\n"
      "j-1,150,7,b,650.5,8,4,y\n");
  auto jobs = cs::load_trace(path, 0.2);
  std::remove(path.c_str());
  BOOST_REQUIRE(jobs);
  BOOST_REQUIRE(jobs->size() == 2u);
  const cs::Job& j = (*jobs)[0];
  BOOST_TEST(j.name == "j-0");
  BOOST_TEST(j.iterations == 10);          // 50 x 0.2
  BOOST_TEST(j.deadline == 100 + 1000 / 0.2);
  BOOST_TEST(j.req_gpus == 2);
  BOOST_TEST((*jobs)[1].iterations == 1);  // rounded, at least one
}

BOOST_AUTO_TEST_CASE(trace_errors_name_the_line) {
  const std::string header =
      "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,gpu_type\n";
  struct Case {
    std::string rows, want;
  };
  for (const Case& c : {Case{"j,0,5,a,10,8,2,x\nk,0,5,a,10,8,two,x\n",
                             ":3: column 'num_gpu' must be an integer > 0, got 'two'"},
                        Case{"j,0,5,a,10,8,2\n", ":2: 7 fields, the header has 8"},
                        Case{"j,-4,5,a,10,8,2,x\n", ":2: column 'submission_time' must be"},
                        Case{"j,0,0,a,10,8,2,x\n", ":2: column 'num_iteration' must be"},
                        Case{"", ": no jobs"}}) {
    std::string path = write_temp(header + c.rows);
    auto jobs = cs::load_trace(path, 1);
    std::remove(path.c_str());
    BOOST_TEST_CONTEXT(c.rows) {
      BOOST_REQUIRE(!jobs);
      BOOST_TEST(jobs.error().find(path + c.want) == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(trace_kind_column_is_optional_and_checked) {
  const std::string header =
      "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,gpu_type,kind\n";
  std::string path = write_temp(header + "j,0,5,a,10,8,2,x,fixed\nk,0,5,a,10,8,2,x,plain\nl,0,5,a,10,8,2,x,\n");
  auto jobs = cs::load_trace(path, 1);
  std::remove(path.c_str());
  BOOST_TEST_REQUIRE(jobs.ok(), (jobs.ok() ? std::string() : jobs.error()));
  BOOST_TEST(((*jobs)[0].kind == cs::JobKind::fixed));
  BOOST_TEST(((*jobs)[1].kind == cs::JobKind::plain));
  BOOST_TEST(((*jobs)[2].kind == cs::JobKind::movable));  // empty: the default
  path = write_temp(header + "j,0,5,a,10,8,2,x,pinned\n");
  jobs = cs::load_trace(path, 1);
  std::remove(path.c_str());
  BOOST_REQUIRE(!jobs);
  BOOST_TEST(jobs.error() == path + ":2: column 'kind' must be movable, fixed or plain, got 'pinned'");
}

BOOST_AUTO_TEST_CASE(trace_validation_unknown_model_and_gpu) {
  auto t = table();
  std::vector<cs::Job> jobs = {job(0, "a", "x", 1, 1)};
  BOOST_TEST(cs::validate_trace("t.csv", jobs, *t, {"x", "y"}).ok());
  jobs.push_back(job(1, "a", "z", 1, 1));
  auto r = cs::validate_trace("t.csv", jobs, *t, {"x", "y"});
  BOOST_REQUIRE(!r);
  BOOST_TEST(r.error() == "t.csv: job j1: unknown GPU type 'z'; did you mean x, y? (known: x, y)");
  jobs.back() = job(1, "q", "x", 1, 1);
  r = cs::validate_trace("t.csv", jobs, *t, {"x", "y"});
  BOOST_REQUIRE(!r);
  BOOST_TEST(r.error().find("t.csv: job j1: unknown model 'q'") == 0);
}

BOOST_AUTO_TEST_CASE(shapes_consolidated_first) {
  cs::ClusterState c = cs::ClusterState::from_partitions({cs::Partition{"p", "v", 3, 4}});
  auto shapes = cs::shapes_for(c, "v", 4);
  BOOST_REQUIRE(shapes.size() == 2u);  // 1x4, 2x2 (4x1 needs 4 nodes)
  BOOST_TEST(shapes[0].shape.nodes == 1);
  BOOST_TEST(shapes[1].shape.gpus_per_node == 2);
  BOOST_TEST(cs::shapes_for(c, "v", 16).empty());
  BOOST_TEST((cs::counts_for(c.total_gpus("v")) == std::vector<int>{1, 2, 4, 8}));
}

BOOST_AUTO_TEST_CASE(placement_is_best_fit) {
  cs::ClusterState c = cs::ClusterState::from_partitions({cs::Partition{"p", "v", 3, 4}});
  cs::FreeMap free(c);
  auto a = free.place(0, cs::shape("v", 1, 3));
  BOOST_REQUIRE(a);
  free.take(*a);  // node 0: 1 free
  // A 1-GPU job goes to the fullest node that holds it (node 0), keeping 4-GPU holes.
  auto b = free.place(0, cs::shape("v", 1, 1));
  BOOST_REQUIRE(b);
  BOOST_TEST(b->node_ids == std::vector<int>{0});
  free.take(*b);
  BOOST_TEST(free.free_gpus("v") == 8);
  BOOST_TEST(!free.place(0, cs::shape("v", 3, 4)));
  BOOST_TEST(!free.fits(cs::Allocation{0, cs::shape("v", 2, 1), {1, 1}}));  // a node twice
}

// The placement FreeMap indexes by partition and free GPUs is the one a scan of every node
// gives: best fit, then the tie rank, then the node index; through random takes and gives.
BOOST_AUTO_TEST_CASE(indexed_placement_is_the_scan_of_every_node) {
  cs::ClusterState c = cs::ClusterState::from_partitions(
      {cs::Partition{"p", "v", 40, 8}, cs::Partition{"q", "v", 30, 4}, cs::Partition{"r", "w", 20, 2}});
  std::mt19937 rng(7);
  std::vector<unsigned> tie(c.nodes.size());
  for (std::size_t i = 0; i < tie.size(); ++i) tie[i] = static_cast<unsigned>(i % 7);  // many ties
  std::shuffle(tie.begin(), tie.end(), rng);
  for (const std::vector<unsigned>* t : {static_cast<const std::vector<unsigned>*>(nullptr), static_cast<const std::vector<unsigned>*>(&tie)}) {
    cs::FreeMap free(c, t);
    std::vector<int> left;
    for (const auto& n : c.nodes) left.push_back(n.capacity);
    auto scan = [&](int part, const cs::Cell& s) -> std::optional<std::vector<int>> {
      std::vector<int> cand;
      for (std::size_t i = 0; i < c.nodes.size(); ++i)
        if (c.nodes[i].partition == part && left[i] >= s.gpus_per_node) cand.push_back(static_cast<int>(i));
      if (static_cast<int>(cand.size()) < s.nodes) return std::nullopt;
      std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) {
        if (left[a] != left[b]) return left[a] < left[b];
        return t ? (*t)[a] < (*t)[b] : false;
      });
      cand.resize(s.nodes);
      std::sort(cand.begin(), cand.end());
      return cand;
    };
    std::vector<cs::Allocation> held;
    int placed = 0, refused = 0;
    for (int step = 0; step < 3000; ++step) {
      if (!held.empty() && rng() % 3 == 0) {
        std::size_t k = rng() % held.size();
        free.give(held[k]);
        for (int n : held[k].node_ids) left[n] += held[k].shape.gpus_per_node;
        held.erase(held.begin() + static_cast<long>(k));
        continue;
      }
      const int part = static_cast<int>(rng() % 3);
      const int gpn = 1 << (rng() % 4);
      const cs::Cell s = cs::shape(part == 2 ? "w" : "v", 1 + static_cast<int>(rng() % 12), gpn);
      auto a = free.place(part, s);
      auto want = scan(part, s);
      BOOST_TEST_REQUIRE(a.has_value() == want.has_value());
      if (!a) {
        ++refused;
        continue;
      }
      BOOST_TEST_REQUIRE(a->node_ids == *want);
      free.take(*a);
      for (int n : a->node_ids) left[n] -= gpn;
      held.push_back(*a);
      ++placed;
      int v = 0, w = 0;
      for (std::size_t i = 0; i < c.nodes.size(); ++i) (c.nodes[i].gpu == "v" ? v : w) += left[i];
      BOOST_TEST_REQUIRE(free.free_gpus("v") == v);
      BOOST_TEST_REQUIRE(free.free_gpus("w") == w);
    }
    BOOST_TEST(placed > 500);
    BOOST_TEST(refused > 100);
  }
}

BOOST_AUTO_TEST_CASE(invariant_checker_catches_breaks) {
  auto t = table();
  cs::ClusterState c = cluster();
  std::vector<cs::Job> jobs = {running(job(0, "a", "x", 2, 10), c, "x", 2, {0}),
                               running(job(1, "a", "x", 1, 10), c, "x", 1, {1})};
  BOOST_TEST(cs::check_invariants(c, jobs, *t).ok());
  jobs[1].alloc.node_ids = {0};  // node 0 now holds 3 GPUs
  auto r = cs::check_invariants(c, jobs, *t);
  BOOST_TEST(!r.ok());
  BOOST_TEST(r.error() == "node x0: 3 GPUs given, capacity 2");
  jobs[1].alloc.node_ids = {2};  // a y node under an x Cell
  BOOST_TEST(cs::check_invariants(c, jobs, *t).error().find("mixes partitions or GPU types") !=
             std::string::npos);
  jobs[1] = running(job(1, "b", "x", 1, 10), c, "x", 1, {1});  // b does not fit 1 GPU
  BOOST_TEST(cs::check_invariants(c, jobs, *t).error().find("is not feasible") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(decide_is_stateless_and_repeatable) {
  // The same state in, the same decisions out, also from a fresh Scheduler (a
  // restarted controller).
  auto t = table();
  cs::ClusterState c = cluster();
  std::vector<cs::Job> jobs = {running(job(0, "a", "x", 2, 100), c, "x", 2, {0}),
                               job(1, "a", "x", 2, 30, 5), job(2, "b", "y", 4, 30, 6)};
  for (const std::string& p : cs::policy_names()) {
    auto pol1 = cs::make_policy(p, {});
    auto pol2 = cs::make_policy(p, {});
    cs::Scheduler s1(**pol1, *t, {}), s2(**pol2, *t, {});
    auto a = s1.decide(c, jobs, 300);
    auto b = s1.decide(c, jobs, 300);
    auto d = s2.decide(c, jobs, 300);
    BOOST_TEST_CONTEXT("policy " << p) {
      BOOST_REQUIRE(a);
      BOOST_TEST(describe(*a) == describe(*b));
      BOOST_TEST(describe(*a) == describe(*d));
      BOOST_TEST(!a->empty());
    }
  }
  // Jobs submitted after `now` are not seen.
  auto pol = cs::make_policy("fcfs", {});
  cs::Scheduler s(**pol, *t, {});
  auto early = s.decide(c, jobs, 1);
  BOOST_REQUIRE(early);
  BOOST_TEST(early->empty());
}

BOOST_AUTO_TEST_CASE(crius_blocked_head_preempts_opportunistic_job) {
  // x: node 0 runs j0 (model b, 1x2, cannot shrink: b needs 2 GPUs of a node);
  // node 1 runs j2 (model a, 1 GPU) started opportunistically. The queue head
  // j1 (b, 2 GPUs) fits nowhere and no shrink or move helps: it preempts j2.
  auto t = table();
  cs::ClusterState c = cs::ClusterState::from_partitions({cs::Partition{"x", "x", 2, 2}});
  std::vector<cs::Job> jobs = {running(job(0, "b", "x", 2, 1000), c, "x", 2, {0}),
                               job(1, "b", "x", 2, 10, 50),
                               running(job(2, "a", "x", 1, 1000, 60), c, "x", 1, {1}, true),
                               job(3, "a", "x", 1, 10, 70)};
  auto pol = cs::make_policy("crius", {});
  cs::Scheduler s(**pol, *t, {});
  auto d = s.decide(c, jobs, 300);
  BOOST_REQUIRE(d);
  BOOST_TEST(describe(*d) == "preempt j2; start j1 x 1x2 on 1; ");
  BOOST_TEST(d->at(0).reason.find("preempted by the blocked queue head j1") == 0);

  // Not opportunistic: j2 keeps its GPU, j1 waits, and j3 (behind the blocked
  // head) takes the free GPU of node 1 as an opportunistic job.
  jobs[2].opportunistic = false;
  d = s.decide(c, jobs, 300);
  BOOST_REQUIRE(d);
  BOOST_TEST(describe(*d) == "start j3 x 1x1 on 1 opportunistic; ");
}

BOOST_AUTO_TEST_CASE(a_head_gets_all_the_gpus_it_needs_or_preempts_no_one) {
  // x: node 0 runs j1 and j2 (a, 1 GPU each, opportunistic), node 1 runs j3 (b, 1x2). The
  // blocked head j0 (b: 2 GPUs of one node) needs both of node 0's jobs to give way.
  cs::ClusterState c = cs::ClusterState::from_partitions({cs::Partition{"x", "x", 2, 2}});
  std::vector<cs::Job> jobs = {job(0, "b", "x", 2, 10, 50),
                               running(job(1, "a", "x", 1, 1000, 60), c, "x", 1, {0}, true),
                               running(job(2, "a", "x", 1, 1000, 60), c, "x", 1, {0}, true),
                               running(job(3, "b", "x", 2, 1000), c, "x", 2, {1})};
  BOOST_TEST(crius_round(c, jobs, 300) == "preempt j1; preempt j2; start j0 x 1x2 on 0; ");
  // One move a round: preempting j1 alone would not let j0 start (and j1 would start again
  // where it was): no one is preempted.
  cs::PolicyOptions one;
  one.max_moves_per_round = 1;
  BOOST_TEST(crius_round(c, jobs, 300, one) == "");
  // j2 has run less than min_runtime_s: it may not change now, so neither is preempted.
  cs::PolicyOptions young;
  young.min_runtime_s = 150;
  jobs[2].last_start = 200;
  BOOST_TEST(crius_round(c, jobs, 300, young) == "");
}

BOOST_AUTO_TEST_CASE(a_fixed_job_gets_a_cell_for_life_while_others_wait) {
  // j0 ("c", fits nowhere) waits ahead of j1 (a), so j1 is chosen while another job waits:
  // adaptive takes the most efficient Cell. Model a scales linearly on x (0.8 samples/s per GPU
  // on 1, 2 or 4 GPUs): a movable j1 gets 1 GPU (fewer GPUs break the tie); a fixed one, which
  // keeps it for life, the most efficient of those at least a third as fast as 4 GPUs: 2 GPUs.
  cs::ClusterState c = cs::ClusterState::from_partitions({cs::Partition{"x", "x", 2, 2}});
  std::vector<cs::Job> jobs = {job(0, "c", "x", 1, 10, 0), job(1, "a", "x", 1, 10, 10)};
  cs::PolicyOptions o;
  o.objective = cs::Objective::adaptive;
  BOOST_TEST(crius_round(c, jobs, 100, o) == "start j1 x 1x1 on 1 opportunistic; ");
  jobs[1].kind = cs::JobKind::fixed;
  BOOST_TEST(crius_round(c, jobs, 100, o) == "start j1 x 1x2 on 1 opportunistic; ");
}

BOOST_AUTO_TEST_CASE(crius_queues_pending_plain_jobs) {
  // x: node 0 runs j0 (b, 1x2, not movable by the policy's rules: not opportunistic); node 1
  // runs j2 (a, 1 GPU), started while the plain job j1 (2 GPUs of one node, submitted at 50)
  // waited: j2 is opportunistic and j1, the blocked head, takes node 1 back. The policy decides
  // nothing for j1 (Slurm starts it) and holds node 1 for it.
  auto t = table();
  cs::ClusterState c = cs::ClusterState::from_partitions({cs::Partition{"x", "x", 2, 2}});
  auto plain = [](cs::Job j) {
    j.kind = cs::JobKind::plain;
    j.model.clear();  // criusd knows nothing of a plain job but its request
    j.held = cs::shape("x", 1, 2);
    j.held_partition = 0;
    return j;
  };
  std::vector<cs::Job> jobs = {running(job(0, "b", "x", 2, 1000), c, "x", 2, {0}),
                               plain(job(1, "", "x", 2, 10, 50)),
                               running(job(2, "a", "x", 1, 1000, 60), c, "x", 1, {1}, true),
                               job(3, "a", "x", 1, 10, 70)};
  auto pol = cs::make_policy("crius", {});
  cs::Scheduler s(**pol, *t, {});
  auto d = s.decide(c, jobs, 300);
  BOOST_REQUIRE(d);
  BOOST_TEST(describe(*d) == "preempt j2; ");
  BOOST_TEST(d->at(0).reason.find("preempted by the blocked queue head j1") == 0);
  BOOST_REQUIRE(s.reserved().size() == 1u);
  BOOST_TEST(s.reserved()[0].first == 1);
  BOOST_TEST(s.reserved()[0].second.node_ids == std::vector<int>{1});

  // j2 not opportunistic: it keeps its GPU; j1 waits, blocked, and j3 behind it starts on the
  // GPU left as an opportunistic job (j1 may take it back in a later round).
  jobs[2].opportunistic = false;
  d = s.decide(c, jobs, 300);
  BOOST_REQUIRE(d);
  BOOST_TEST(describe(*d) == "start j3 x 1x1 on 1 opportunistic; ");
  BOOST_TEST(s.reserved().empty());

  // j0 gone (the others renumbered: j3 is id 2): j1 starts on the free node (the resource
  // manager's to start), held for it, and j3 behind it gets node 1's free GPU, not j1's.
  jobs.erase(jobs.begin());
  for (std::size_t k = 0; k < jobs.size(); ++k) jobs[k].id = static_cast<int>(k);
  d = s.decide(c, jobs, 300);
  BOOST_REQUIRE(d);
  BOOST_REQUIRE(s.reserved().size() == 1u);
  BOOST_TEST(s.reserved()[0].second.node_ids == std::vector<int>{0});
  BOOST_TEST(describe(*d) == "start j2 x 1x1 on 1; ");

  // crius-sim knows a plain job's model too: on an idle cluster the upgrade pass, which would
  // double a crius job that scales, leaves its request as it is (and no search shrinks it).
  std::vector<cs::Job> alone = {plain(job(0, "a", "x", 1, 1000, 0))};
  alone[0].model = "a";
  alone[0].held = cs::shape("x", 1, 1);
  d = s.decide(c, alone, 300);
  BOOST_REQUIRE(d);
  BOOST_TEST(d->empty());
  BOOST_REQUIRE(s.reserved().size() == 1u);
  BOOST_TEST(s.reserved()[0].second.shape.gpus() == 1);
  alone[0].kind = cs::JobKind::movable;  // the control: a crius job is grown
  d = s.decide(c, alone, 300);
  BOOST_REQUIRE(d);
  BOOST_REQUIRE(d->size() == 1u);
  BOOST_TEST(d->at(0).target.shape.gpus() > 1);

  // A policy that does not queue them (fcfs) leaves plain jobs to the resource manager.
  auto fcfs = cs::make_policy("fcfs", {});
  cs::Scheduler f(**fcfs, *t, {});
  BOOST_REQUIRE(f.decide(c, jobs, 300));
  BOOST_TEST(f.reserved().empty());
}

BOOST_AUTO_TEST_CASE(decide_leaves_an_infeasible_running_job_alone) {
  // A live cluster may run a job on a Cell the estimator calls infeasible (b on
  // one GPU): decide() does not fail the round over it, but would never put a
  // job there itself (check_invariants flags it).
  auto t = table();
  cs::ClusterState c = cluster();
  std::vector<cs::Job> jobs = {running(job(0, "b", "x", 1, 100), c, "x", 1, {0}),
                               job(1, "a", "y", 1, 10, 5)};
  auto pol = cs::make_policy("fcfs", {});
  cs::Scheduler s(**pol, *t, {});
  auto d = s.decide(c, jobs, 300);
  BOOST_REQUIRE(d.ok());
  BOOST_TEST(describe(*d) == "start j1 y 1x1 on 3; ");  // node 2 or 3: the seed decides
  BOOST_TEST(!cs::check_invariants(c, jobs, *t).ok());
}

BOOST_AUTO_TEST_CASE(table_dp_column_and_cache_round_trip) {
  std::string path = write_temp(
      "model,global_batch,gpu_type,num_nodes,gpus_per_node,iter_time_s,kind,dp_iter_time_s\n"
      "a,8,x,1,2,5,estimate,8\n"
      "a,8,x,1,1,10,estimate,\n");
  auto t = cs::TableThroughput::load(path);
  BOOST_REQUIRE(t.ok());
  BOOST_TEST((*t)->data_parallel("a", 8, cs::shape("x", 1, 2)).iter_time_s == 8);
  BOOST_TEST((*t)->best("a", 8, cs::shape("x", 1, 2)).iter_time_s == 5);
  BOOST_TEST(!(*t)->data_parallel("a", 8, cs::shape("x", 1, 1)).feasible);
  // What a cache answered, saved and loaded back, answers the same.
  cs::CachedThroughput cache(**t);
  cache.best("a", 8, cs::shape("x", 1, 2));
  cache.data_parallel("a", 8, cs::shape("x", 1, 2));
  cache.best("a", 8, cs::shape("x", 1, 1));
  cache.data_parallel("a", 8, cs::shape("x", 1, 1));
  BOOST_TEST(cache.misses() == 4u);
  cache.best("a", 8, cs::shape("x", 1, 2));
  BOOST_TEST(cache.misses() == 4u);  // cached
  std::string saved = write_temp("");
  BOOST_REQUIRE(cache.save(saved).ok());
  auto back = cs::TableThroughput::load(saved);
  std::remove(path.c_str());
  std::remove(saved.c_str());
  BOOST_REQUIRE(back.ok());
  BOOST_TEST((*back)->rows() == 2u);
  BOOST_TEST((*back)->data_parallel("a", 8, cs::shape("x", 1, 2)).iter_time_s == 8);
  BOOST_TEST(!(*back)->data_parallel("a", 8, cs::shape("x", 1, 1)).feasible);
  BOOST_TEST((*back)->best("a", 8, cs::shape("x", 1, 1)).iter_time_s == 10);
}

namespace {
// A scripted policy: job 0 starts on 1 x GPU of x at t=0; at t=100 it is resized to 2 GPUs
// (`resize`) or preempted and started again on 1 GPU at t=200 (otherwise).
class Scripted final : public cs::Policy {
 public:
  // Starts job 0 on 1 x at 0; at `at`, resizes it to 2 x or preempts it; 100 s later resumes it.
  explicit Scripted(bool resize, bool cell = false, double at = 100) : m_resize(resize), m_cell(cell), m_at(at) {}
  std::string name() const override { return "scripted"; }
  bool cell_policy() const override { return m_cell; }
  std::vector<cs::Target> schedule(const cs::Context& ctx) override {
    std::vector<cs::Target> t = cs::keep_running(ctx);
    auto on_x = [&](int gpus) {
      cs::Allocation a;
      a.partition = 0;
      a.shape.gpu = "x";
      a.shape.nodes = 1;
      a.shape.gpus_per_node = gpus;
      a.node_ids = {0};
      return a;
    };
    if (ctx.now == 0) t[0].alloc = on_x(1);
    if (ctx.now == m_at) t[0].alloc = m_resize ? on_x(2) : cs::Allocation{};
    if (ctx.now == m_at + 100 && !m_resize) t[0].alloc = on_x(1);
    return t;
  }

 private:
  bool m_resize, m_cell;
  double m_at;
};
}  // namespace

BOOST_AUTO_TEST_CASE(restart_cost_gives_an_exact_jct) {
  // Model a: 10 s per iteration on 1 x, 5 s on 2 x; rounds of 100 s, restart cost 30 s.
  auto t = table();
  cs::CachedThroughput tput(*t);
  cs::SimOptions so;
  so.policy.interval_s = 100;
  so.policy.restart_cost_s = 30;
  // Resized at 100: 10 iterations by then, none until 130, 14 to 200, 20 to 300, the last
  // 6 by 330.
  Scripted resize(true);
  auto r = cs::simulate(cluster(), {job(0, "a", "x", 1, 50)}, resize, tput, so);
  BOOST_TEST_REQUIRE(r.ok(), (r.ok() ? std::string() : r.error()));
  BOOST_TEST(r->jobs[0].finish_time == 330);
  BOOST_TEST(r->jobs[0].reconfigurations == 1);
  // Preempted at 100 (10 done), resumed at 200: none until 230, 7 to 300, the last 3 by 330.
  Scripted preempt(false);
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 20)}, preempt, tput, so);
  BOOST_TEST_REQUIRE(r.ok(), (r.ok() ? std::string() : r.error()));
  BOOST_TEST(r->jobs[0].finish_time == 330);
  BOOST_TEST(r->jobs[0].reconfigurations == 1);
  // Charged 50 s where the policy weighs a move at 30 s (crius-sim --policy-restart-cost): 20 s later.
  so.charged_restart_cost_s = 50;
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 50)}, resize, tput, so);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->jobs[0].finish_time == 350);
  so.charged_restart_cost_s = -1;
  // Without the restart cost both end 30 s sooner.
  so.policy.restart_cost_s = 0;
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 50)}, resize, tput, so);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->jobs[0].finish_time == 300);

  // The paper's model, per GPU of the new allocation: a baseline pays 2 x 150 s, so nothing
  // runs from 100 to 400 and the last 40 iterations end at 600; a Cell policy pays 2 x 10 s
  // and ends at 320. A resume after a preemption on 1 GPU costs a baseline 150 s: none from
  // 200 to 350, 5 by 400, the last 5 by 450.
  so.policy.restart_model = cs::RestartModel::paper;
  BOOST_TEST(cs::restart_cost(so.policy, false, 8) == 600);  // the caps
  BOOST_TEST(cs::restart_cost(so.policy, true, 8) == 40);
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 50)}, resize, tput, so);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->jobs[0].finish_time == 600);
  Scripted cell_resize(true, true);
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 50)}, cell_resize, tput, so);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->jobs[0].finish_time == 320);
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 20)}, preempt, tput, so);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->jobs[0].finish_time == 450);
}

BOOST_AUTO_TEST_CASE(criusds_bounds_on_one_job_hold_in_the_simulation) {
  // The resize at 100 (scripted) comes before 150 s of run time: reverted, the job runs on 1 GPU
  // to the end (50 iterations of 10 s: 500). Preempted at 100 with one change allowed per
  // 1000 s: the preemption happens, and so does the restart at 200 (a start, not a change).
  auto t = table();
  cs::CachedThroughput tput(*t);
  cs::SimOptions so;
  so.policy.interval_s = 100;
  so.policy.restart_cost_s = 0;
  so.policy.min_runtime_s = 150;
  Scripted resize(true);
  auto r = cs::simulate(cluster(), {job(0, "a", "x", 1, 50)}, resize, tput, so);
  BOOST_TEST_REQUIRE(r.ok(), (r.ok() ? std::string() : r.error()));
  BOOST_TEST(r->jobs[0].reconfigurations == 0);
  BOOST_TEST(r->jobs[0].finish_time == 500);
  so.policy.min_runtime_s = 100;  // run 100 s by then: the resize goes through
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 50)}, resize, tput, so);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->jobs[0].reconfigurations == 1);
  BOOST_TEST(r->jobs[0].finish_time == 300);
  so.policy.min_runtime_s = 0;
  so.policy.max_moves_per_job = 0;  // no change at all
  so.policy.rate_window_s = 1000;
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 50)}, resize, tput, so);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->jobs[0].reconfigurations == 0);
  so.policy.max_moves_per_job = 1;
  Scripted preempt(false);
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 20)}, preempt, tput, so);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->jobs[0].reconfigurations == 1);
  BOOST_TEST(r->jobs[0].finish_time == 300);
  cs::Job j = job(0, "a", "x", 1, 50);
  j.changed_at = {100};
  BOOST_TEST(!cs::may_change(j, so.policy, 1099));
  BOOST_TEST(cs::may_change(j, so.policy, 1100));
}

BOOST_AUTO_TEST_CASE(noisy_truth_is_seeded_per_shape_and_has_the_estimators_spread) {
  auto t = table();
  cs::NoisyThroughput a(*t, 0.15, 7), b(*t, 0.15, 7), other(*t, 0.15, 8);
  const cs::Cell shape{"", "x", 1, 2, 0};
  BOOST_TEST(a.factor("a", 8, shape) == b.factor("a", 8, shape));
  BOOST_TEST(a.factor("a", 8, shape) != other.factor("a", 8, shape));
  BOOST_TEST(a.best("a", 8, shape).iter_time_s == 5 * a.factor("a", 8, shape));
  // Over many shapes: the median absolute error is about 10%, the 90th percentile about 28%.
  std::vector<double> err;
  for (int n = 1; n <= 4000; ++n) err.push_back(std::abs(a.factor("m" + std::to_string(n), 8, shape) - 1));
  std::sort(err.begin(), err.end());
  BOOST_TEST(err[2000] > 0.08);
  BOOST_TEST(err[2000] < 0.13);
  BOOST_TEST(err[3600] > 0.22);
  BOOST_TEST(err[3600] < 0.34);
}

BOOST_AUTO_TEST_CASE(jobs_run_at_the_truth_not_at_what_the_policy_believes) {
  // The policy believes 10 s per iteration on 1 x; the job runs at the noisy truth.
  auto t = table();
  cs::CachedThroughput belief(*t);
  cs::NoisyThroughput noisy(*t, 0.15, 3);
  cs::CachedThroughput truth(noisy);
  const double f = noisy.factor("a", 8, cs::Cell{"", "x", 1, 1, 0});
  auto pol = cs::make_policy("fcfs", {});
  BOOST_TEST_REQUIRE(pol.ok());
  cs::SimOptions so;
  so.policy.interval_s = 100;
  so.truth = &truth;
  auto r = cs::simulate(cluster(), {job(0, "a", "x", 1, 20)}, **pol, belief, so);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->jobs[0].finish_time == 200 * f, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(a_job_on_a_shape_the_truth_measures_out_of_memory_fails) {
  // The policy believes b fits one x GPU; measured, it does not: the job fails, reported.
  std::string believed = write_temp("model,global_batch,gpu_type,num_nodes,gpus_per_node,iter_time_s,kind\n"
                                    "b,8,x,1,1,8,measured\n");
  auto belief_table = cs::TableThroughput::load(believed);
  std::remove(believed.c_str());
  BOOST_TEST_REQUIRE(belief_table.ok());
  cs::CachedThroughput belief(**belief_table);
  auto t = table();  // b on 1 x: oom
  cs::CachedThroughput truth(*t);
  auto pol = cs::make_policy("fcfs", {});
  BOOST_TEST_REQUIRE(pol.ok());
  cs::SimOptions so;
  so.truth = &truth;
  auto r = cs::simulate(cluster(), {job(0, "b", "x", 1, 10)}, **pol, belief, so);
  BOOST_TEST_REQUIRE(r.ok(), (r.ok() ? std::string() : r.error()));
  BOOST_TEST((r->jobs[0].state == cs::JobState::unrunnable));
  BOOST_TEST_REQUIRE(r->unrunnable.size() == 1u);
  BOOST_TEST(r->unrunnable[0].find("job j0: failed on x 1x1, which the policy believed fits") == 0, r->unrunnable[0]);
}

BOOST_AUTO_TEST_CASE(the_summary_counts_deadlines_met) {
  // Two jobs of 10 iterations on 1 x (10 s each, 100 s): one by 50 s (missed), one by 1000 s.
  auto t = table();
  cs::CachedThroughput tput(*t);
  auto pol = cs::make_policy("fcfs", {});
  BOOST_TEST_REQUIRE(pol.ok());
  const cs::ClusterState c = cluster();
  auto r = cs::simulate(c, {job(0, "a", "x", 1, 10, 0, 50), job(1, "a", "x", 1, 10, 0, 1000)}, **pol, tput, {});
  BOOST_TEST_REQUIRE(r.ok());
  cs::Summary s = cs::summarize(*r, c);
  BOOST_TEST(s.deadlines == 2);
  BOOST_TEST(s.deadlines_met == 1);
  BOOST_TEST(cs::format_summary(s).find("deadlines met      1 of 2 (50.0%)") != std::string::npos);
  BOOST_TEST(cs::to_json({s})["policies"]["fcfs"]["deadlines_met"] == 1);
}

BOOST_AUTO_TEST_CASE(the_objective_rule_fastest_or_most_efficient) {
  // 1 GPU 10/s, 2 GPUs 13/s, 4 GPUs 14/s, 8 GPUs 16/s.
  const std::vector<cs::CellOption> o = {{10, 1}, {13, 2}, {14, 4}, {16, 8}};
  for (bool others_wait : {false, true}) {
    BOOST_TEST(cs::choose_cell(o, cs::Objective::throughput, others_wait).value() == 3u);
    BOOST_TEST(cs::choose_cell(o, cs::Objective::efficiency, others_wait).value() == 0u);
  }
  // Adaptive: the fastest while no one else waits, the most efficient while others do.
  BOOST_TEST(cs::choose_cell(o, cs::Objective::adaptive, false).value() == 3u);
  BOOST_TEST(cs::choose_cell(o, cs::Objective::adaptive, true).value() == 0u);
  // A Cell kept for life (not movable) is, where one is among the options, at least the floor
  // (a third of the fastest: 12 of 36 here) fast: of those the most efficient (2 GPUs, 6.5/s per
  // GPU, not 1 GPU's 10/s). The fastest rule has no floor; above every option it is none.
  const std::vector<cs::CellOption> k = {{10, 1}, {13, 2}, {14, 4}, {36, 8}};
  const double floor = cs::kKeptCellFloor * 36;
  BOOST_TEST(cs::choose_cell(k, cs::Objective::adaptive, true).value() == 0u);
  BOOST_TEST(cs::choose_cell(k, cs::Objective::adaptive, true, floor).value() == 1u);
  BOOST_TEST(cs::choose_cell(k, cs::Objective::efficiency, false, floor).value() == 1u);
  BOOST_TEST(cs::choose_cell(k, cs::Objective::adaptive, false, floor).value() == 3u);
  BOOST_TEST(cs::choose_cell(k, cs::Objective::adaptive, true, 100).value() == 0u);
  // Ties go to fewer GPUs, then to the earlier option.
  BOOST_TEST(cs::choose_cell({{10, 2}, {10, 1}}, cs::Objective::throughput, false).value() == 1u);
  BOOST_TEST(cs::choose_cell({{10, 2}, {10, 2}}, cs::Objective::efficiency, false).value() == 0u);
  BOOST_TEST(!cs::choose_cell({}, cs::Objective::adaptive, false).has_value());
  auto bad = cs::parse_objective("fastest");
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.error().find("known: adaptive, throughput, efficiency") != std::string::npos);
  BOOST_TEST((cs::parse_objective("efficiency").value() == cs::Objective::efficiency));
  BOOST_TEST((cs::PolicyOptions{}.objective == cs::Objective::adaptive), "the default");
}

// The crius policy takes a job's Cell as the first of preference_order that places: for every
// subset of the options (those that place), that is choose_cell's choice.
BOOST_AUTO_TEST_CASE(the_preference_order_is_choose_cell_on_every_subset) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<cs::CellOption> o(1 + rng() % 8);
    for (auto& x : o) x = {double(1 + rng() % 6), 1 << (rng() % 4)};  // ties in speed and per GPU
    for (bool per_gpu : {false, true}) {
      const std::vector<std::size_t> order = cs::preference_order(o, per_gpu);
      BOOST_TEST_REQUIRE(order.size() == o.size());
      for (unsigned mask = 1; mask < (1u << o.size()); ++mask) {
        std::vector<cs::CellOption> subset;
        std::vector<std::size_t> index;
        for (std::size_t k = 0; k < o.size(); ++k)
          if (mask >> k & 1) subset.push_back(o[k]), index.push_back(k);
        const auto objective = per_gpu ? cs::Objective::efficiency : cs::Objective::throughput;
        const std::size_t chosen = index[cs::choose_cell(subset, objective, false).value()];
        const auto first = std::find_if(order.begin(), order.end(), [&](std::size_t k) { return mask >> k & 1; });
        BOOST_TEST_REQUIRE(*first == chosen);
      }
    }
  }
  BOOST_TEST(cs::efficient(cs::Objective::adaptive, true));
  BOOST_TEST(!cs::efficient(cs::Objective::adaptive, false));
  BOOST_TEST(cs::efficient(cs::Objective::efficiency, false));
  BOOST_TEST(!cs::efficient(cs::Objective::throughput, true));
}

BOOST_AUTO_TEST_CASE(crius_gives_an_arriving_job_the_cell_of_its_objective) {
  // Model a on one x GPU asked: the fastest Cell within 4x is x 2x2 (2.5 s); per GPU, x 1x1
  // and x 1x2 tie (0.8 samples/s each) and the fewer GPUs win.
  auto t = table();
  cs::CachedThroughput tput(*t);
  const cs::ClusterState c = cluster();
  std::vector<cs::Job> jobs = {job(0, "a", "x", 1, 10)};
  cs::PolicyOptions po;
  // Adaptive: as throughput while no other job waits (job_submit's count: `waiting`), as
  // efficiency while one does.
  struct Case { cs::Objective obj; int waiting, gpus; };
  for (auto [obj, waiting, gpus] : {Case{cs::Objective::throughput, 3, 4}, Case{cs::Objective::efficiency, 0, 1},
                                    Case{cs::Objective::adaptive, 0, 4}, Case{cs::Objective::adaptive, 1, 1}}) {
    po.objective = obj;
    auto pol = cs::make_policy("crius", po);
    BOOST_TEST_REQUIRE(pol.ok());
    cs::Scheduler s(**pol, tput, po);
    auto held = s.arrive(c, jobs, jobs[0], 0, waiting);
    BOOST_TEST_REQUIRE(held.has_value());
    BOOST_TEST(held->shape.gpu == "x");
    BOOST_TEST(held->shape.gpus() == gpus, cs::to_string(obj) << " waiting " << waiting);
  }
  // x busy: the fastest Cell of what is free (y 2x2, 5 s); nothing free: its ideal Cell, to wait in.
  po.objective = cs::Objective::throughput;
  auto pol = cs::make_policy("crius", po);
  cs::Scheduler s(**pol, tput, po);
  jobs.push_back(running(job(1, "a", "x", 4, 1000), c, "x", 2, {0, 1}));
  auto held = s.arrive(c, jobs, jobs[0], 0, 0);
  BOOST_TEST_REQUIRE(held.has_value());
  BOOST_TEST(held->shape.gpu == "y");
  BOOST_TEST(held->shape.gpus() == 4);
  jobs.push_back(running(job(2, "a", "y", 4, 1000), c, "y", 2, {2, 3}));
  held = s.arrive(c, jobs, jobs[0], 0, 0);
  BOOST_TEST_REQUIRE(held.has_value());
  BOOST_TEST(held->shape.gpu == "x");
  BOOST_TEST(held->shape.gpus() == 4);
}

namespace {
// The live restart model with rounds of 100 s and Slurm's passes every 10 s.
cs::SimOptions live_options() {
  cs::SimOptions so;
  so.policy.interval_s = 100;
  so.policy.restart_model = cs::RestartModel::live;
  so.tick_s = 10;
  return so;
}
}  // namespace

BOOST_AUTO_TEST_CASE(live_mechanics_start_at_submission_and_between_rounds) {
  // fcfs, rounds of 100 s (criusd's clock: the first half an interval after the first
  // submission, at 50), Slurm's passes every 10 s, a start costs 5 s. Model a on x 2x2: 2.5 s
  // per iteration. j0 (20 iterations) is submitted at 0 and starts at once: it runs from 5 and
  // ends at 55. j1, submitted at 12, waits for x; the pass at 60 starts it (the round at 150
  // would have): it runs from 65 and ends at 115.
  auto t = table();
  cs::CachedThroughput tput(*t);
  cs::SimOptions so = live_options();
  so.start_latency_s = 5;
  std::vector<double> rounds;
  so.on_round = [&](double now, const std::vector<cs::Job>&, const std::vector<cs::Decision>&) { rounds.push_back(now); };
  auto pol = cs::make_policy("fcfs", so.policy);
  BOOST_TEST_REQUIRE(pol.ok());
  auto r = cs::simulate(cluster(), {job(0, "a", "x", 4, 20), job(1, "a", "x", 4, 20, 12)}, **pol, tput, so);
  BOOST_TEST_REQUIRE(r.ok(), (r.ok() ? std::string() : r.error()));
  BOOST_TEST(rounds == (std::vector<double>{50}), rounds.size() << " rounds");
  so.on_round = nullptr;
  BOOST_TEST(r->jobs[0].first_start == 0);
  BOOST_TEST(std::abs(r->jobs[0].finish_time - 55) < 1e-6);
  BOOST_TEST(r->jobs[1].first_start == 60);
  BOOST_TEST(std::abs(r->jobs[1].finish_time - 115) < 1e-6);
  // Round-based (flat), the same jobs: j1 starts in the round at 100, both without a latency.
  so.policy.restart_model = cs::RestartModel::flat;
  r = cs::simulate(cluster(), {job(0, "a", "x", 4, 20), job(1, "a", "x", 4, 20, 12)}, **pol, tput, so);
  BOOST_TEST_REQUIRE(r.ok());
  BOOST_TEST(r->jobs[1].first_start == 100);
  // A move under the live model costs the grace and the restart: 30 + 20 s.
  so.policy.restart_model = cs::RestartModel::live;
  so.policy.checkpoint_grace_s = 30;
  so.policy.restart_cost_s = 20;
  BOOST_TEST(cs::restart_cost(so.policy, true, 4) == 50);
  BOOST_TEST(cs::restart_cost(so.policy, false, 4) == 50);
  // A preempted job is requeued: Slurm's next pass starts it again where it fits (here at
  // once, on the GPUs it left), and it pays the restart: preempted in the round at 150 after
  // 15 iterations, none until 200, the last 5 by 250.
  so.start_latency_s = 0;
  Scripted preempt(false, false, 150);
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 20)}, preempt, tput, so);
  BOOST_TEST_REQUIRE(r.ok(), (r.ok() ? std::string() : r.error()));
  BOOST_TEST(r->jobs[0].reconfigurations == 1);
  BOOST_TEST(std::abs(r->jobs[0].finish_time - 250) < 1e-6);
}

BOOST_AUTO_TEST_CASE(live_arrivals_are_decided_on_criusds_last_report) {
  // crius (adaptive), rounds of 100 s from 50, Slurm's passes every 10 s. Model a asking 1 x:
  // its Cells within 4x are x 2x2 (the fastest, 2.5 s per iteration), y 2x2 (5 s) and, per
  // GPU, x 1x1 then y 1x1 (fewer GPUs win ties).
  auto t = table();
  cs::CachedThroughput tput(*t);
  const cs::SimOptions so = live_options();
  auto pol = cs::make_policy("crius", so.policy);
  BOOST_TEST_REQUIRE(pol.ok());
  auto first_cell = [](const cs::Job& j) { return j.held.gpu + " " + std::to_string(j.held.gpus()); };
  // j0 at 0: nothing waits (criusd's report of an empty cluster): the fastest, all of x. j1 at 5:
  // no round since, so j0 counts as waiting and its Cell as taken: the most efficient Cell on
  // y. (With a round between the two, j1 would see nobody waiting: y 2x2.)
  auto r = cs::simulate(cluster(), {job(0, "a", "x", 1, 200), job(1, "a", "x", 1, 20, 5)}, **pol, tput, so);
  BOOST_TEST_REQUIRE(r.ok(), (r.ok() ? std::string() : r.error()));
  BOOST_TEST(first_cell(r->jobs[0]) == "x 4");
  BOOST_TEST(first_cell(r->jobs[1]) == "y 1");
  BOOST_TEST(r->jobs[1].first_start == 10);
  // j0 (30 iterations) ends at 75, after the round at 50 reported x full; j1, submitted at 80
  // before the next round, is decided on that report: x taken, nobody waiting: the fastest
  // Cell of y, though x is free by then.
  r = cs::simulate(cluster(), {job(0, "a", "x", 1, 30), job(1, "a", "x", 1, 20, 80)}, **pol, tput, so);
  BOOST_TEST_REQUIRE(r.ok(), (r.ok() ? std::string() : r.error()));
  BOOST_TEST(std::abs(r->jobs[0].finish_time - 75) < 1e-6);
  BOOST_TEST(first_cell(r->jobs[1]) == "y 4");
  BOOST_TEST(r->jobs[1].first_start == 80);
}

BOOST_AUTO_TEST_CASE(fixed_and_plain_jobs_are_outside_the_policys_rounds) {
  // x's two nodes are held by a running fixed crius job (node 0) and a running plain job
  // (node 1): crius's round leaves both alone and places the pending movable job on y, as
  // criusd sees the GPUs of the jobs it may not move. Were the first movable, throughput would
  // grow it onto both of x's nodes... which the plain job holds: it never moves either way.
  auto t = table();
  cs::CachedThroughput tput(*t);
  const cs::ClusterState c = cluster();
  std::vector<cs::Job> jobs = {running(job(0, "a", "x", 2, 1000), c, "x", 2, {0}),
                               running(job(1, "a", "x", 2, 1000), c, "x", 2, {1}), job(2, "a", "x", 1, 10)};
  jobs[0].kind = cs::JobKind::fixed;
  jobs[1].kind = cs::JobKind::plain;
  cs::PolicyOptions po;
  po.objective = cs::Objective::throughput;
  auto pol = cs::make_policy("crius", po);
  BOOST_TEST_REQUIRE(pol.ok());
  cs::Scheduler s(**pol, tput, po);
  auto d = s.decide(c, jobs, 0);
  BOOST_TEST_REQUIRE(d.ok(), (d.ok() ? std::string() : d.error()));
  BOOST_TEST_REQUIRE(d->size() == 1u, describe(*d));
  BOOST_TEST((*d)[0].job == 2);
  BOOST_TEST((*d)[0].target.shape.gpu == "y");
  // A fixed job is the policy's until it starts: pending, the round places it.
  jobs[0].state = cs::JobState::pending;
  jobs[0].alloc = cs::Allocation{};
  d = s.decide(c, jobs, 0);
  BOOST_TEST_REQUIRE(d.ok());
  BOOST_TEST(std::count_if(d->begin(), d->end(), [](const cs::Decision& x) { return x.job == 0; }) == 1);
  BOOST_TEST(std::count_if(d->begin(), d->end(), [](const cs::Decision& x) { return x.job == 1; }) == 0);
  // A plain job runs what it requested, or is unrunnable where that cannot run: model b needs
  // 2 GPUs of x on one node; crius could run it on 2, a plain request of 1 never.
  cs::Job b = job(3, "b", "x", 1, 10);
  BOOST_TEST(s.runnable(c, b).ok());
  b.kind = cs::JobKind::plain;
  BOOST_TEST(!s.runnable(c, b).ok());
}

BOOST_AUTO_TEST_CASE(a_plain_job_waits_for_its_request_and_never_moves) {
  // Round model, crius by throughput: alone, a movable job of model a asking 2 x GPUs grows
  // to x 2x2; a plain one runs on x 1x2 (5 s per iteration: 20 iterations end at 100) from
  // its submission, and is never changed. A fixed job grows at its start like a movable one
  // and keeps its Cell: a plain job arriving later waits for it.
  cs::PolicyOptions po;
  po.objective = cs::Objective::throughput;
  cs::Job movable = job(0, "a", "x", 2, 20);
  Run r = simulate("crius", {movable}, cluster(), 1, {}, 0, po);
  BOOST_TEST(r.result.jobs[0].alloc.empty());
  BOOST_TEST(jct(r, 0) == 20 * 2.5);
  cs::Job plain = movable;
  plain.kind = cs::JobKind::plain;
  r = simulate("crius", {plain}, cluster(), 1, {}, 0, po);
  BOOST_TEST(jct(r, 0) == 100);
  BOOST_TEST(r.result.jobs[0].reconfigurations == 0);
  BOOST_TEST(r.violations.empty());
  cs::Job fixed = job(0, "a", "x", 2, 400);
  fixed.kind = cs::JobKind::fixed;
  cs::Job late = job(1, "a", "x", 2, 20, 50);
  late.kind = cs::JobKind::plain;
  r = simulate("crius", {fixed, late}, cluster(), 1, {}, 0, po);
  BOOST_TEST(r.result.jobs[0].reconfigurations == 0);
  BOOST_TEST(jct(r, 0) == 400 * 2.5);  // x 2x2 from 0 to the end
  // x is full until 1000; the plain job, seen at the round at 300, starts at the round after.
  BOOST_TEST(r.result.jobs[1].first_start == 1200);
  BOOST_TEST(r.violations.empty());
}
