// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The one rule of what a framework can run (estimator/framework.h), and that every part asks it:
// the plan search and the Cell listing offer a Megatron-LM job only plans its release can
// express, on every model of the shipped catalogue over every Cell of the shipped example
// clusters; crius-launch hands each such plan over in full (launcher/megatron.h). Without the
// rule the same sweep finds plans Megatron-Core 0.8 and 0.10 cannot express.
#define BOOST_TEST_MODULE framework
#include <boost/test/unit_test.hpp>

#include <cstdlib>

#include "estimator/estimator.h"
#include "launcher/megatron.h"

namespace est = crius::estimator;

static std::string top() {
  const char* t = std::getenv("TOP");
  return t ? t : ".";
}

static est::Framework fw(const char* text) {
  auto f = est::parse_framework(text);
  if (!f) throw std::runtime_error(f.error());
  return *f;
}

BOOST_AUTO_TEST_CASE(framework_names_read_and_print) {
  BOOST_TEST(est::to_string(fw("crius-train")) == "crius-train");
  BOOST_TEST(est::to_string(fw("megatron:0.8")) == "megatron:0.8");
  BOOST_TEST(est::to_string(fw("megatron:0.13")) == "megatron:0.13");
  BOOST_TEST(fw("megatron").version == est::kMegatronNewest);
  BOOST_TEST(fw("megatron:1.2").version == 102);
  for (const char* bad : {"", "megatron:", "megatron:0", "megatron:0.7", "megatron:x.1", "megatron:0.100", "torch",
                          "megatron:0.13;rm", "Megatron"}) {
    auto f = est::parse_framework(bad);
    BOOST_TEST_INFO(bad);
    BOOST_TEST(!f.ok());
    if (!f.ok()) BOOST_TEST(f.error().find("crius-train, megatron or megatron:MAJOR.MINOR") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(split_rules_per_release) {
  const est::Schedule f1b{}, inter{est::Schedule::Kind::interleaved, 2};
  BOOST_TEST((est::split_rule(fw("crius-train"), f1b) == est::SplitRule::any));
  BOOST_TEST((est::split_rule(fw("crius-train"), inter) == est::SplitRule::any));
  BOOST_TEST((est::split_rule(fw("megatron:0.8"), f1b) == est::SplitRule::even));
  BOOST_TEST((est::split_rule(fw("megatron:0.10"), f1b) == est::SplitRule::first_last));
  BOOST_TEST((est::split_rule(fw("megatron:0.12"), f1b) == est::SplitRule::first_last));
  BOOST_TEST((est::split_rule(fw("megatron:0.13"), f1b) == est::SplitRule::any));
  BOOST_TEST((est::split_rule(fw("megatron:0.13"), inter) == est::SplitRule::even));
  const int even[] = {8, 16, 24, 32}, first_last[] = {7, 15, 23, 32}, middle[] = {8, 15, 24, 32};
  BOOST_TEST(est::split_allowed(est::SplitRule::even, even, 4));
  BOOST_TEST(!est::split_allowed(est::SplitRule::even, first_last, 4));
  BOOST_TEST(est::split_allowed(est::SplitRule::first_last, first_last, 4));
  BOOST_TEST(!est::split_allowed(est::SplitRule::first_last, middle, 4));
  BOOST_TEST(est::split_allowed(est::SplitRule::any, middle, 4));
  BOOST_TEST(est::stages_allowed(fw("megatron:0.8"), 32, 4));
  BOOST_TEST(!est::stages_allowed(fw("megatron:0.8"), 30, 4));
  BOOST_TEST(est::stages_allowed(fw("megatron:0.10"), 30, 4));
}

static est::Model model(const est::Cluster& c, const char* id) {
  auto m = c.models.resolve(id);
  if (!m) throw std::runtime_error(m.error());
  return *m;
}

static est::Cluster load(const std::string& path) {
  auto c = est::load_cluster(path, top() + "/etc/crius");
  if (!c) throw std::runtime_error(c.error());
  return std::move(*c);
}

BOOST_AUTO_TEST_CASE(plans_megatron_cannot_run_are_named) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  const est::Model llama = model(c, "llama2-70b");  // 80 layers, 64 heads, 8 query groups
  est::Plan p;
  p.runtime = est::Runtime::megatron_core;
  for (int b : {0, 20, 40, 60}) p.stages.push_back({b, b + 20, 2, 8});
  BOOST_TEST(est::check_plan(fw("megatron:0.8"), llama, p).ok());
  p.stages = {{0, 19, 2, 8}, {19, 39, 2, 8}, {39, 59, 2, 8}, {59, 80, 2, 8}};
  auto e = est::check_plan(fw("megatron:0.8"), llama, p);
  BOOST_TEST(!e.ok());
  if (!e.ok()) BOOST_TEST(e.error().find("cannot express these stage layer ranges (0-18,19-38,39-58,59-79)") != std::string::npos);
  BOOST_TEST(est::check_plan(fw("megatron:0.10"), llama, p).ok());  // only the first and last differ
  p.stages[1].layer_end = 40, p.stages[2].layer_begin = 40;
  BOOST_TEST(!est::check_plan(fw("megatron:0.10"), llama, p).ok());
  BOOST_TEST(est::check_plan(fw("megatron:0.13"), llama, p).ok());
  BOOST_TEST(est::check_plan(fw("crius-train"), llama, p).ok());
  // Query groups: 8 groups do not go into 16 TP ranks, however many heads there are.
  est::Model gqa = llama;
  gqa.kv_heads = 2;
  est::Plan q;
  q.runtime = est::Runtime::megatron_core;
  q.stages = {{0, 80, 4, 8}};
  e = est::check_plan(fw("megatron:0.13"), gqa, q);
  BOOST_TEST(!e.ok());
  if (!e.ok()) BOOST_TEST(e.error().find("does not divide the 2 query groups") != std::string::npos);
  // GPipe is Alpa's, not Megatron's; a Wide-ResNet is no transformer.
  q.stages = {{0, 80, 4, 8}};
  q.schedule = {est::Schedule::Kind::gpipe, 1};
  BOOST_TEST(!est::check_plan(fw("megatron:0.13"), llama, q).ok());
  const est::Model wrn = model(c, "wide_resnet__1B");
  BOOST_TEST(!est::check_request(fw("megatron"), wrn, est::Runtime::megatron).ok());
  BOOST_TEST(est::check_request(fw("crius-train"), wrn, est::Runtime::megatron).ok());
}

BOOST_AUTO_TEST_CASE(the_search_never_offers_tp_beyond_the_query_groups) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  est::Request req;
  req.model = model(c, "llama3-8b");
  req.model.kv_heads = 2;  // 32 heads, 2 query groups
  req.global_batch = 64;
  req.runtime = est::Runtime::megatron_core;
  for (const est::Estimate& e : est::rank_cells(req, c, {}, {}))
    if (e.feasible) {
      BOOST_TEST_INFO(est::describe(e.cell));
      BOOST_TEST(e.plan.stages[0].tp <= 2);
    }
}

// Every catalogue model `check` trains, over every Cell of every shipped example cluster:
// how many chosen plans `check` admits, and how many it rejects.
struct Sweep {
  int plans = 0, rejected = 0, args_failed = 0;
  std::string first_rejection;
};

static Sweep sweep(const est::Framework& search_as, const est::Framework& check, bool hand_over) {
  Sweep s;
  for (const char* file : {"/etc/crius/examples/dgx-h100.toml", "/etc/crius/examples/paper-sim.toml",
                           "/etc/crius/examples/paper-testbed.toml", "/etc/crius/crius.toml"}) {
    const est::Cluster c = load(top() + file);
    for (const est::Model& m : c.models.models()) {
      // Models the framework does not train at all (a Wide-ResNet, Adafactor) are refused at submission.
      if (!est::check_request(check, m, est::Runtime::megatron_core)) continue;
      est::Request req;
      req.model = m;
      req.global_batch = 512;
      req.runtime = est::Runtime::megatron_core;
      req.framework = search_as;
      for (const est::Estimate& e : est::rank_cells(req, c, {}, {})) {
        if (!e.feasible) continue;
        ++s.plans;
        BOOST_TEST((e.plan.framework == search_as));
        if (auto ok = est::check_plan(check, m, e.plan); !ok) {
          if (s.rejected++ == 0) s.first_rejection = m.id + " in " + est::describe(e.cell) + ": " + ok.error();
          continue;
        }
        if (!hand_over) continue;
        auto args = crius::launcher::megatron_args(e.plan, m, c.gpus.runtime(req.runtime).stack, check);
        if (!args) {
          if (s.args_failed++ == 0) s.first_rejection = m.id + " in " + est::describe(e.cell) + ": " + args.error();
        }
      }
    }
  }
  return s;
}

BOOST_AUTO_TEST_CASE(every_plan_offered_to_a_megatron_job_is_one_its_release_runs) {
  for (const char* release : {"megatron:0.8", "megatron:0.10", "megatron:0.13"}) {
    const Sweep s = sweep(fw(release), fw(release), true);
    BOOST_TEST_MESSAGE(release << ": " << s.plans << " plans, " << s.rejected << " not expressible, " << s.args_failed
                               << " not handed over");
    BOOST_TEST_INFO(release << ": " << s.first_rejection);
    BOOST_TEST(s.plans > 1000);
    BOOST_TEST(s.rejected == 0);
    BOOST_TEST(s.args_failed == 0);
  }
}

BOOST_AUTO_TEST_CASE(without_the_rule_older_releases_get_plans_they_cannot_run) {
  // The same sweep searched as for crius-train: the check above would fail without the rule.
  for (const char* release : {"megatron:0.8", "megatron:0.10"}) {
    const Sweep s = sweep(fw("crius-train"), fw(release), false);
    BOOST_TEST_MESSAGE("searched as crius-train, checked as " << release << ": " << s.rejected << " of " << s.plans
                                                                << " plans not expressible");
    BOOST_TEST_INFO(release << ": " << s.rejected << " of " << s.plans);
    BOOST_TEST(s.rejected > s.plans / 10);
  }
}
