// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The one rule of what a framework can run (estimator/framework.h), and that every part asks it:
// the plan search and the Cell listing offer a Megatron-LM job only plans its release can
// express, on every model of the shipped catalogue over every Cell of the shipped example
// clusters; crius-launch hands each such plan over in full (launcher/megatron.h). Without the
// rule the same sweep finds plans Megatron-Core 0.8 and 0.10 cannot express. The same for a
// torchtitan job (launcher/torchtitan.h).
#define BOOST_TEST_MODULE framework
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <numeric>

#include "estimator/estimator.h"
#include "launcher/megatron.h"
#include "launcher/torchtitan.h"

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
    if (!f.ok()) BOOST_TEST(f.error().find("expected crius-train, megatron, megatron:MAJOR.MINOR") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(each_framework_defaults_to_the_profile_of_its_own_stack) {
  BOOST_TEST(est::to_string(est::default_runtime(fw("crius-train"))) == "megatron");
  BOOST_TEST(est::to_string(est::default_runtime(fw("megatron:0.8"))) == "megatron-core");
  BOOST_TEST(est::to_string(est::default_runtime(fw("megatron"))) == "megatron-core");
  BOOST_TEST(est::to_string(est::default_runtime(fw("torchtitan"))) == "megatron-core");
}

BOOST_AUTO_TEST_CASE(torchtitan_releases_read_and_print) {
  BOOST_TEST(est::to_string(fw("torchtitan")) == "torchtitan:0.2");
  BOOST_TEST(est::to_string(fw("torchtitan:0.1")) == "torchtitan:0.1");
  BOOST_TEST((fw("torchtitan:0.1").kind == est::Framework::Kind::torchtitan));
  for (const char* bad : {"torchtitan:0.0", "torchtitan:", "torchtitan:1", "titan:0.1", "torchtitan:0.1;x"}) {
    BOOST_TEST_INFO(bad);
    BOOST_TEST(!est::parse_framework(bad).ok());
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
  // Interleaved: even before 0.11, then first and last with --num-virtual-stages-per-pipeline-rank,
  // any with 0.13's layout; torchtitan even.
  BOOST_TEST((est::split_rule(fw("megatron:0.10"), inter) == est::SplitRule::even));
  BOOST_TEST((est::split_rule(fw("megatron:0.11"), inter) == est::SplitRule::first_last));
  BOOST_TEST((est::split_rule(fw("megatron:0.13"), inter) == est::SplitRule::any));
  BOOST_TEST((est::split_rule(fw("torchtitan"), inter) == est::SplitRule::even));
  const int even[] = {8, 16, 24, 32}, first_last[] = {7, 15, 23, 32}, middle[] = {8, 15, 24, 32};
  // With V chunks per stage: a multiple of V (even, first_last), at least V (any).
  const int by2[] = {6, 14, 22, 32}, short_last[] = {10, 19, 28, 29};
  BOOST_TEST(est::split_allowed(est::SplitRule::first_last, by2, 4, 2));
  BOOST_TEST(!est::split_allowed(est::SplitRule::first_last, first_last, 4, 2));
  BOOST_TEST(!est::split_allowed(est::SplitRule::even, even, 4, 3));
  BOOST_TEST(est::split_allowed(est::SplitRule::any, middle, 4, 7));
  BOOST_TEST(!est::split_allowed(est::SplitRule::any, middle, 4, 8));
  BOOST_TEST(!est::split_allowed(est::SplitRule::any, short_last, 4, 2));
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
        const est::StackSwitches stack = c.gpus.runtime(req.runtime).stack;
        if (auto ok = est::check_plan(check, m, e.plan, &stack); !ok) {
          if (s.rejected++ == 0) s.first_rejection = m.id + " in " + est::describe(e.cell) + ": " + ok.error();
          continue;
        }
        if (!hand_over) continue;
        const est::StackSwitches st = c.gpus.runtime(req.runtime).stack;
        auto args = check.kind == est::Framework::Kind::torchtitan ? crius::launcher::torchtitan_args(e.plan, m, st, check)
                                                                  : crius::launcher::megatron_args(e.plan, m, st, check);
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

// ---- crius-launch's hand-over (launcher/megatron.h) ----------------------------------------------

static std::string joined(const std::vector<std::string>& a) {
  std::string s;
  for (const auto& x : a) s += (s.empty() ? "" : " ") + x;
  return " " + s + " ";
}

static bool has(const std::vector<std::string>& a, const std::string& flag) {
  return joined(a).find(" " + flag + " ") != std::string::npos;
}

// The value crius gives `flag`, "" when absent or a bare flag.
static std::string value(const std::vector<std::string>& a, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] == flag && a[i + 1].rfind("--", 0) != 0) return a[i + 1];
  return "";
}

// llama2-70b (80 layers, 8 query groups) on 4 stages of tp 8 x dp 2, ZeRO-1, sequence parallel,
// interleaved over 2 chunks: a plan every switch has something to act on.
static est::Plan llama_plan() {
  est::Plan p;
  p.runtime = est::Runtime::megatron_core;
  for (int b : {0, 20, 40, 60}) p.stages.push_back({b, b + 20, 2, 8});
  p.micro_batch_size = 1;
  p.micro_batches = 16;
  p.schedule = {est::Schedule::Kind::interleaved, 2};
  p.sequence_parallel = true;
  p.zero = 1;
  return p;
}

BOOST_AUTO_TEST_CASE(each_switch_of_the_profile_puts_its_flag_on_and_off) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  const est::Model llama = model(c, "llama2-70b");
  const est::Plan p = llama_plan();
  struct Case {
    bool est::StackSwitches::*field;
    std::vector<std::string> on, off;  // flags present with the switch on / off (the other absent)
  };
  const std::vector<Case> cases = {
      {&est::StackSwitches::fused_attention, {"--attention-backend fused"}, {"--attention-backend unfused"}},
      {&est::StackSwitches::overlap_grad_reduce, {"--overlap-grad-reduce"}, {}},
      {&est::StackSwitches::overlap_param_gather, {"--overlap-param-gather"}, {}},
      {&est::StackSwitches::tp_comm_overlap, {"--tp-comm-overlap"}, {}},
      {&est::StackSwitches::overlap_p2p_comm, {}, {"--no-overlap-p2p-communication"}},
      {&est::StackSwitches::master_param_remainders, {"--use-precision-aware-optimizer"}, {}},
  };
  for (const char* release : {"megatron:0.13", "megatron:0.19"})
    for (const Case& k : cases) {
      est::StackSwitches st = est::StackSwitches::of(est::Runtime::megatron_core);
      st.overlap_grad_reduce = true;  // the parameter all-gather overlaps only with it
      for (bool on : {true, false}) {
        st.*k.field = on;
        if (k.field == &est::StackSwitches::overlap_grad_reduce) st.overlap_param_gather = false;
        auto a = crius::launcher::megatron_args(p, llama, st, fw(release));
        BOOST_TEST_INFO(release << " switch " << (on ? "on" : "off") << ": " << (a ? joined(*a) : a.error()));
        BOOST_REQUIRE(a.ok());
        for (const auto& f : on ? k.on : k.off) BOOST_TEST(joined(*a).find(" " + f + " ") != std::string::npos);
        for (const auto& f : on ? k.off : k.on) BOOST_TEST(joined(*a).find(" " + f + " ") == std::string::npos);
      }
    }
  // Before 0.11 there is no --attention-backend: the unfused attention is the local implementation.
  est::StackSwitches off = est::StackSwitches::of(est::Runtime::megatron);
  auto old = crius::launcher::megatron_args(p, llama, off, fw("megatron:0.8"));
  BOOST_REQUIRE(old.ok());
  BOOST_TEST(value(*old, "--transformer-impl") == "local");
  BOOST_TEST(!has(*old, "--attention-backend"));
  off.fused_attention = true;
  old = crius::launcher::megatron_args(p, llama, off, fw("megatron:0.8"));
  BOOST_REQUIRE(old.ok());
  BOOST_TEST(value(*old, "--transformer-impl") == "transformer_engine");
  // A switch the release has no flag for stops the hand-over: the parameter remainders before 0.13,
  // and without the distributed optimizer in any release.
  off.master_param_remainders = true;
  BOOST_TEST(!crius::launcher::megatron_args(p, llama, off, fw("megatron:0.8")).ok());
  est::Plan no_zero = p;
  no_zero.zero = 0;
  BOOST_TEST(!crius::launcher::megatron_args(no_zero, llama, off, fw("megatron:0.13")).ok());
}

// ZeRO-2 and 3 are Megatron-FSDP's optim_grads and optim_grads_params, in each release's own
// flags (tests/cli/megatron_validate.sh feeds them to 0.12's and 0.19's argument checks).
BOOST_AUTO_TEST_CASE(sharded_gradients_and_parameters_are_megatron_fsdp) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  const est::Model llama = model(c, "llama2-70b");
  const est::StackSwitches st = est::StackSwitches::of(est::Runtime::megatron_core);
  for (int zero : {2, 3}) {
    est::Plan p = llama_plan();
    p.zero = zero;
    const std::string strategy = zero == 3 ? "optim_grads_params" : "optim_grads";
    for (const char* release : {"megatron:0.12", "megatron:0.13", "megatron:0.19"}) {
      auto a = crius::launcher::megatron_args(p, llama, st, fw(release));
      BOOST_TEST_INFO(release << " ZeRO-" << zero << ": " << (a ? joined(*a) : a.error()));
      BOOST_REQUIRE(a.ok());
      const bool renamed = fw(release).version >= est::kMegatronFsdpFlag;
      BOOST_TEST(has(*a, "--use-distributed-optimizer"));
      BOOST_TEST(has(*a, "--use-megatron-fsdp") == renamed);
      BOOST_TEST(has(*a, "--use-custom-fsdp") == !renamed);
      BOOST_TEST(value(*a, "--data-parallel-sharding-strategy") == strategy);
      BOOST_TEST(has(*a, "--no-gradient-accumulation-fusion") == !renamed);
      BOOST_TEST(value(*a, "--ckpt-format") == (renamed ? "fsdp_dtensor" : ""));
    }
    auto refused = [&](const est::Plan& q, const char* release, const est::StackSwitches& s, const std::string& why) {
      auto r = est::check_plan(fw(release), llama, q, &s);
      BOOST_TEST_INFO(release << " ZeRO-" << q.zero << ": " << (r ? "accepted" : r.error()));
      BOOST_TEST((!r.ok() && r.error().find(why) != std::string::npos));
    };
    refused(p, "megatron:0.11", st, "Megatron-FSDP, which comes with 0.12");
    refused(p, "crius-train", st, "crius-train reduces whole gradients");
    est::StackSwitches no_reduce = st;
    no_reduce.overlap_grad_reduce = false, no_reduce.overlap_param_gather = false;
    refused(p, "megatron:0.13", no_reduce, "always reduces gradients during the backward");
    est::StackSwitches rem = st;
    rem.master_param_remainders = true;
    refused(p, "megatron:0.13", rem, "low bits with the distributed optimizer (ZeRO-1)");
  }
  // One DP rank shards nothing: any stage runs.
  est::Plan one = llama_plan();
  for (auto& s : one.stages) s.dp = 1;
  one.zero = 3;
  BOOST_TEST(est::check_plan(fw("megatron:0.8"), llama, one, &st).ok());
  // --zero asks for a stage the framework has.
  est::Request req;
  req.model = llama;
  req.global_batch = 64;
  req.framework = fw("megatron:0.11");
  req.pins.zero = 3;
  BOOST_TEST(!est::validate_request(req).ok());
  req.framework = fw("megatron:0.12");
  BOOST_TEST(est::validate_request(req).ok());
  req.pins.zero = 4;
  BOOST_TEST(!est::validate_request(req).ok());
}

BOOST_AUTO_TEST_CASE(the_plan_and_the_model_dimensions_launched_are_the_estimates) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  const est::StackSwitches st = c.gpus.runtime(est::Runtime::megatron_core).stack;
  // Every catalogue model Megatron trains, in its best Cell on the DGX H100 cluster.
  int checked = 0;
  for (const est::Model& m : c.models.models()) {
    if (!est::check_request(fw("megatron"), m, est::Runtime::megatron_core)) continue;
    est::Request req;
    req.model = m;
    req.global_batch = 256;
    req.runtime = est::Runtime::megatron_core;
    req.framework = fw("megatron");
    const auto ranked = est::rank_cells(req, c, {}, {});
    if (ranked.empty() || !ranked.front().feasible) continue;
    const est::Plan& p = ranked.front().plan;
    auto a = crius::launcher::megatron_args(p, m, st, fw("megatron"));
    BOOST_TEST_INFO(m.id << ": " << (a ? joined(*a) : a.error()));
    BOOST_REQUIRE(a.ok());
    ++checked;
    BOOST_TEST(value(*a, "--num-layers") == std::to_string(m.layers));
    BOOST_TEST(value(*a, "--hidden-size") == std::to_string(m.hidden));
    BOOST_TEST(value(*a, "--num-attention-heads") == std::to_string(m.heads));
    BOOST_TEST(value(*a, "--ffn-hidden-size") == std::to_string(m.ffn_hidden));
    BOOST_TEST(value(*a, "--seq-length") == std::to_string(m.seq_len));
    BOOST_TEST(value(*a, "--max-position-embeddings") == std::to_string(m.seq_len));
    BOOST_TEST(has(*a, "--swiglu") == m.swiglu);
    BOOST_TEST(value(*a, "--position-embedding-type") == (m.rope ? "rope" : "learned_absolute"));
    BOOST_TEST(has(*a, "--bf16") == (m.dtype == est::Dtype::bf16));
    BOOST_TEST(has(*a, "--fp16") == (m.dtype == est::Dtype::fp16));
    const int groups = m.kv_heads ? m.kv_heads : m.heads;
    BOOST_TEST(value(*a, "--num-query-groups") == (groups == m.heads ? "" : std::to_string(groups)));
    BOOST_TEST(value(*a, "--tensor-model-parallel-size") == std::to_string(p.stages[0].tp));
    BOOST_TEST(value(*a, "--pipeline-model-parallel-size") == std::to_string(p.pp()));
    BOOST_TEST(value(*a, "--micro-batch-size") == std::to_string(p.micro_batch_size));
    BOOST_TEST(value(*a, "--global-batch-size") == "256");
    BOOST_TEST(has(*a, "--sequence-parallel") == (p.sequence_parallel && p.stages[0].tp > 1));
    BOOST_TEST(has(*a, "--use-distributed-optimizer") == (p.zero >= 1));
    BOOST_TEST(has(*a, "--use-megatron-fsdp") == (p.zero >= 2));
    if (m.family == est::Family::moe) {
      BOOST_TEST(value(*a, "--num-experts") == std::to_string(m.experts));
      BOOST_TEST(value(*a, "--moe-router-topk") == std::to_string(m.top_k));
      const int ep = p.expert_parallel ? std::gcd(m.experts, p.stages[0].dp) : 1;
      BOOST_TEST(value(*a, "--expert-model-parallel-size") == std::to_string(ep));
    }
  }
  BOOST_TEST(checked >= 10);
}

BOOST_AUTO_TEST_CASE(moe_plans_carry_their_expert_parallelism) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  const est::Model mixtral = model(c, "mixtral-8x7b");
  est::Request req;
  req.model = mixtral;
  req.global_batch = 256;
  req.runtime = est::Runtime::megatron_core;
  req.framework = fw("megatron:0.13");
  est::CellFilter f;
  f.nodes = 4, f.gpus_per_node = 8, f.stages = 1;  // tp 8 x dp 4
  const auto ranked = est::rank_cells(req, c, f, {});
  BOOST_REQUIRE(!ranked.empty());
  BOOST_REQUIRE(ranked.front().feasible);
  const est::Plan& p = ranked.front().plan;
  const int ep = std::gcd(8, p.stages[0].dp);
  BOOST_TEST(ep > 1);
  auto a = crius::launcher::megatron_args(p, mixtral, c.gpus.runtime(req.runtime).stack, req.framework);
  BOOST_REQUIRE(a.ok());
  BOOST_TEST(value(*a, "--expert-model-parallel-size") == std::to_string(ep));
  BOOST_TEST(value(*a, "--moe-token-dispatcher-type") == "alltoall");
  // The same plan without expert parallelism hands over EP 1.
  est::Plan q = p;
  q.expert_parallel = false;
  a = crius::launcher::megatron_args(q, mixtral, c.gpus.runtime(req.runtime).stack, req.framework);
  BOOST_REQUIRE(a.ok());
  BOOST_TEST(value(*a, "--expert-model-parallel-size") == "1");
}

BOOST_AUTO_TEST_CASE(uneven_splits_in_each_releases_own_words) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  const est::Model llama = model(c, "llama2-70b");
  const est::StackSwitches st = c.gpus.runtime(est::Runtime::megatron_core).stack;
  est::Plan p;
  p.runtime = est::Runtime::megatron_core;
  p.stages = {{0, 19, 2, 8}, {19, 39, 2, 8}, {39, 59, 2, 8}, {59, 80, 2, 8}};
  auto a = crius::launcher::megatron_args(p, llama, st, fw("megatron:0.10"));
  BOOST_REQUIRE(a.ok());
  BOOST_TEST(value(*a, "--decoder-first-pipeline-num-layers") == "19");
  BOOST_TEST(value(*a, "--decoder-last-pipeline-num-layers") == "21");
  BOOST_TEST(!has(*a, "--pipeline-model-parallel-layout"));
  a = crius::launcher::megatron_args(p, llama, st, fw("megatron:0.13"));
  BOOST_REQUIRE(a.ok());
  BOOST_TEST(value(*a, "--pipeline-model-parallel-layout") == "Et*19|t*20|t*20|t*21L");
  BOOST_TEST(!has(*a, "--decoder-first-pipeline-num-layers"));
  auto e = crius::launcher::megatron_args(p, llama, st, fw("megatron:0.8"));
  BOOST_TEST(!e.ok());
  // Even splits need neither.
  p.stages = {{0, 20, 2, 8}, {20, 40, 2, 8}, {40, 60, 2, 8}, {60, 80, 2, 8}};
  a = crius::launcher::megatron_args(p, llama, st, fw("megatron:0.8"));
  BOOST_REQUIRE(a.ok());
  BOOST_TEST(!has(*a, "--pipeline-model-parallel-layout"));
  BOOST_TEST(!has(*a, "--decoder-first-pipeline-num-layers"));
}

// Uneven stages with an interleaved schedule (80 layers, 4 stages, 3 chunks each: 80 is not a
// multiple of 12): 0.11-0.12 name the first and last stage and the chunks per stage, each stage a
// multiple of 3; 0.13 names every chunk in its layout; 0.10 cannot.
BOOST_AUTO_TEST_CASE(uneven_interleaved_stages_in_each_releases_own_words) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  const est::Model llama = model(c, "llama2-70b");
  const est::StackSwitches st = c.gpus.runtime(est::Runtime::megatron_core).stack;
  est::Plan p;
  p.runtime = est::Runtime::megatron_core;
  p.micro_batches = 8;
  p.schedule = {est::Schedule::Kind::interleaved, 3};
  p.stages = {{0, 18, 2, 8}, {18, 39, 2, 8}, {39, 60, 2, 8}, {60, 80, 2, 8}};  // 18, 21, 21, 20
  auto a = crius::launcher::megatron_args(p, llama, st, fw("megatron:0.13"));
  BOOST_TEST_REQUIRE(a.ok(), (a.ok() ? "" : a.error()));
  BOOST_TEST(value(*a, "--pipeline-model-parallel-layout") == "Et*6|t*7|t*7|t*7|t*6|t*7|t*7|t*7|t*6|t*7|t*7|t*6L");
  BOOST_TEST(!has(*a, "--num-layers-per-virtual-pipeline-stage"));
  BOOST_TEST(!has(*a, "--num-virtual-stages-per-pipeline-rank"));
  // 18 and 20 are no multiples of 3: only the layout says it.
  auto e = crius::launcher::megatron_args(p, llama, st, fw("megatron:0.12"));
  BOOST_TEST(!e.ok());
  if (!e.ok()) BOOST_TEST(e.error().find("each a multiple of 3") != std::string::npos, e.error());
  // 84 layers: 18, 24, 24, 18 is a first and last stage of multiples of 3 around equal middles.
  est::Model wide = llama;
  wide.layers = 84;
  p.stages = {{0, 18, 2, 8}, {18, 42, 2, 8}, {42, 66, 2, 8}, {66, 84, 2, 8}};
  a = crius::launcher::megatron_args(p, wide, st, fw("megatron:0.11"));
  BOOST_TEST_REQUIRE(a.ok(), (a.ok() ? "" : a.error()));
  BOOST_TEST(value(*a, "--decoder-first-pipeline-num-layers") == "18");
  BOOST_TEST(value(*a, "--decoder-last-pipeline-num-layers") == "18");
  BOOST_TEST(value(*a, "--num-virtual-stages-per-pipeline-rank") == "3");
  BOOST_TEST(!has(*a, "--num-layers-per-virtual-pipeline-stage"));
  e = crius::launcher::megatron_args(p, wide, st, fw("megatron:0.10"));
  BOOST_TEST(!e.ok());
  if (!e.ok()) BOOST_TEST(e.error().find("uneven ones come with 0.11") != std::string::npos, e.error());
  // Equal stages whose layers do not divide into the chunks (40 = 4 x 10, 3 chunks): a layout
  // (Megatron-LM 0.19 refused --num-layers-per-virtual-pipeline-stage 3 for it).
  est::Model forty = llama;
  forty.layers = 40;
  p.stages = {{0, 10, 2, 8}, {10, 20, 2, 8}, {20, 30, 2, 8}, {30, 40, 2, 8}};
  a = crius::launcher::megatron_args(p, forty, st, fw("megatron:0.19"));
  BOOST_TEST_REQUIRE(a.ok(), (a.ok() ? "" : a.error()));
  BOOST_TEST(value(*a, "--pipeline-model-parallel-layout") == "Et*4|t*4|t*4|t*4|t*3|t*3|t*3|t*3|t*3|t*3|t*3|t*3L");
  BOOST_TEST(!has(*a, "--num-layers-per-virtual-pipeline-stage"));
  // Even: the per-chunk count, as before.
  p.stages = {{0, 21, 2, 8}, {21, 42, 2, 8}, {42, 63, 2, 8}, {63, 84, 2, 8}};
  a = crius::launcher::megatron_args(p, wide, st, fw("megatron:0.10"));
  BOOST_TEST_REQUIRE(a.ok(), (a.ok() ? "" : a.error()));
  BOOST_TEST(value(*a, "--num-layers-per-virtual-pipeline-stage") == "7");
  BOOST_TEST(!has(*a, "--pipeline-model-parallel-layout"));
}

BOOST_AUTO_TEST_CASE(a_command_that_says_otherwise_is_refused) {
  const std::vector<std::string> args = {"--tensor-model-parallel-size", "8", "--sequence-parallel", "--hidden-size", "8192"};
  BOOST_TEST(crius::launcher::check_command({"pretrain_gpt.py", "--data-path", "x"}, args).ok());
  BOOST_TEST(crius::launcher::check_command({"pretrain_gpt.py", "--hidden-size", "8192", "--sequence-parallel"}, args).ok());
  auto e = crius::launcher::check_command({"pretrain_gpt.py", "--tensor-model-parallel-size=4"}, args);
  BOOST_TEST(!e.ok());
  if (!e.ok()) BOOST_TEST(e.error().find("gives --tensor-model-parallel-size 4, the plan 8") != std::string::npos);
  BOOST_TEST(!crius::launcher::check_command({"x", "--hidden-size", "4096"}, args).ok());
}

// ---- torchtitan (launcher/torchtitan.h) ----------------------------------------------------------

BOOST_AUTO_TEST_CASE(torchtitan_builds_only_its_llama3_flavors) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  BOOST_TEST(est::torchtitan_flavor(model(c, "llama3-8b")) == "8B");
  BOOST_TEST(est::torchtitan_flavor(model(c, "llama3-70b")) == "70B");
  BOOST_TEST(est::torchtitan_flavor(model(c, "llama2-70b")) == "");
  est::Model m = model(c, "llama3-8b");
  m.ffn_hidden = 14000;
  BOOST_TEST(est::torchtitan_flavor(m) == "");
  auto e = est::check_request(fw("torchtitan"), model(c, "gpt3-13b"), est::Runtime::megatron_core);
  BOOST_TEST(!e.ok());
  if (!e.ok()) BOOST_TEST(e.error().find("builds only its Llama 3 flavors") != std::string::npos);
  BOOST_TEST(!est::check_request(fw("torchtitan"), model(c, "mixtral-8x7b"), est::Runtime::megatron_core).ok());
  BOOST_TEST(!est::check_request(fw("torchtitan"), model(c, "llama3-8b"), est::Runtime::alpa).ok());
  BOOST_TEST(est::check_request(fw("torchtitan"), model(c, "llama3-8b"), est::Runtime::megatron_core).ok());
}

// llama3-70b on 4 stages of tp 8 x dp 2 with FSDP (ZeRO-1), sequence parallel, 1F1B, uneven.
static est::Plan titan_plan() {
  est::Plan p;
  p.runtime = est::Runtime::megatron_core;
  p.stages = {{0, 19, 2, 8}, {19, 39, 2, 8}, {39, 59, 2, 8}, {59, 80, 2, 8}};
  p.micro_batch_size = 1;
  p.micro_batches = 16;
  p.sequence_parallel = true;
  p.zero = 1;
  return p;
}

BOOST_AUTO_TEST_CASE(plans_torchtitan_cannot_run_as_estimated_are_named) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  const est::Model m = model(c, "llama3-70b");
  const est::StackSwitches st = est::StackSwitches::of(est::Runtime::megatron_core);
  BOOST_TEST(est::check_plan(fw("torchtitan"), m, titan_plan(), &st).ok());
  auto refused = [&](est::Plan p, const std::string& why, const est::StackSwitches& s, const char* release = "torchtitan") {
    auto r = est::check_plan(fw(release), m, p, &s);
    BOOST_TEST_INFO(why << ": " << (r ? "accepted" : r.error()));
    BOOST_TEST((!r.ok() && r.error().find(why) != std::string::npos));
  };
  est::Plan p = titan_plan();
  p.sequence_parallel = false;
  refused(p, "always shards the sequence at the norms", st);
  p = titan_plan();
  p.zero = 0;
  refused(p, "DDP has not supported > 1D parallelism", st);
  p = titan_plan();
  p.recompute = est::Recompute::selective;
  refused(p, "selective recomputation", st);
  p = titan_plan();
  p.stages = {{0, 80, 16, 1}};
  p.sequence_parallel = false;
  refused(p, "reduces the gradients again in each of the 16 micro-batches", st);
  p.micro_batches = 1;
  p.micro_batch_size = 16;
  BOOST_TEST(est::check_plan(fw("torchtitan"), m, p, &st).ok());
  // Resharding after forward (ZeRO-3) gathers and reduces in every micro-batch, as the plan says.
  p.micro_batches = 16;
  p.micro_batch_size = 1;
  p.zero = 3;
  BOOST_TEST(est::check_plan(fw("torchtitan"), m, p, &st).ok());
  p.zero = 2;
  refused(p, "it has no ZeRO-2", st);
  p = titan_plan();
  p.zero = 3;
  refused(p, "pipeline schedules keep FSDP's gathered parameters", st);
  est::Model odd = m;
  odd.seq_len = 8188;  // not a multiple of 2 x TP 8: 0.2's parallelize.py asserts it
  BOOST_TEST(!est::check_plan(fw("torchtitan:0.2"), odd, titan_plan(), &st).ok());
  BOOST_TEST(est::check_plan(fw("torchtitan:0.1"), odd, titan_plan(), &st).ok());
  for (auto [field, name] : {std::pair{&est::StackSwitches::fused_attention, "fused_attention"},
                             {&est::StackSwitches::overlap_grad_reduce, "overlap_grad_reduce"},
                             {&est::StackSwitches::overlap_param_gather, "overlap_param_gather"}}) {
    est::StackSwitches off = st;
    off.*field = false;
    refused(titan_plan(), std::string("the runtime profile turns ") + name + " off", off);
  }
  est::StackSwitches rem = st;
  rem.master_param_remainders = true;
  refused(titan_plan(), "keeps the fp32 parameters whole", rem);
}

BOOST_AUTO_TEST_CASE(every_plan_offered_to_a_torchtitan_job_is_one_it_runs) {
  for (const char* release : {"torchtitan:0.1", "torchtitan:0.2"}) {
    const Sweep s = sweep(fw(release), fw(release), true);
    BOOST_TEST_MESSAGE(release << ": " << s.plans << " plans, " << s.rejected << " not runnable as estimated, "
                               << s.args_failed << " not handed over");
    BOOST_TEST_INFO(release << ": " << s.first_rejection);
    BOOST_TEST(s.plans > 500);
    BOOST_TEST(s.rejected == 0);
    BOOST_TEST(s.args_failed == 0);
  }
  // Without the rule the same sweep offers torchtitan jobs plans it runs otherwise or not at all.
  const Sweep s = sweep(fw("crius-train"), fw("torchtitan"), false);
  BOOST_TEST_MESSAGE("searched as crius-train, checked as torchtitan: " << s.rejected << " of " << s.plans);
  BOOST_TEST(s.rejected > 0);
}

BOOST_AUTO_TEST_CASE(torchtitan_gets_the_plan_the_switches_and_the_model) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  const est::Model m = model(c, "llama3-70b");
  est::StackSwitches st = est::StackSwitches::of(est::Runtime::megatron_core);
  for (const char* release : {"torchtitan:0.1", "torchtitan:0.2"}) {
    const bool v02 = std::string(release) == "torchtitan:0.2";
    auto a = crius::launcher::torchtitan_args(titan_plan(), m, st, fw(release));
    BOOST_TEST_INFO(release << ": " << (a ? joined(*a) : a.error()));
    BOOST_REQUIRE(a.ok());
    BOOST_TEST(value(*a, "--model.flavor") == "70B");
    BOOST_TEST(value(*a, "--training.seq_len") == std::to_string(m.seq_len));
    BOOST_TEST(value(*a, "--training.mixed_precision_param") == "bfloat16");
    BOOST_TEST(value(*a, "--parallelism.tensor_parallel_degree") == "8");
    BOOST_TEST(value(*a, "--parallelism.pipeline_parallel_degree") == "4");
    BOOST_TEST(value(*a, "--parallelism.data_parallel_shard_degree") == "2");
    BOOST_TEST(value(*a, "--parallelism.data_parallel_replicate_degree") == "1");
    BOOST_TEST(value(*a, "--parallelism.fsdp_reshard_after_forward") == "never");
    BOOST_TEST(value(*a, "--training.local_batch_size") == "16");   // one step's 16 micro-batches
    BOOST_TEST(value(*a, "--training.global_batch_size") == "32");  // x DP 2
    BOOST_TEST(value(*a, "--parallelism.pipeline_parallel_microbatch_size") == "1");
    BOOST_TEST(value(*a, "--parallelism.pipeline_parallel_schedule") == "1F1B");
    BOOST_TEST(value(*a, "--activation_checkpoint.mode") == "none");
    if (v02) {
      BOOST_TEST(!has(*a, "--parallelism.pipeline_parallel_split_points"));
      BOOST_TEST(joined(*a).find(",layers.18 layers.19,") != std::string::npos);  // stage 2 starts at layer 19
      BOOST_TEST(joined(*a).find("layers.79,norm,output ") != std::string::npos);
    } else {
      BOOST_TEST(value(*a, "--parallelism.pipeline_parallel_split_points") == "layers.19,layers.39,layers.59");
    }
    // tp_comm_overlap: async TP, which torchtitan runs only compiled; off, neither.
    const std::string compile = v02 ? "--compile.enable" : "--training.compile";
    BOOST_TEST(has(*a, "--parallelism.enable_async_tensor_parallel"));
    BOOST_TEST(has(*a, compile));
    est::StackSwitches no_overlap = st;
    no_overlap.tp_comm_overlap = false;
    auto b = crius::launcher::torchtitan_args(titan_plan(), m, no_overlap, fw(release));
    BOOST_REQUIRE(b.ok());
    BOOST_TEST(!has(*b, "--parallelism.enable_async_tensor_parallel"));
    BOOST_TEST(!has(*b, compile));
    // Interleaved: every virtual stage's first layer, the schedule torch's.
    est::Plan q = titan_plan();
    q.stages = {{0, 20, 2, 8}, {20, 40, 2, 8}, {40, 60, 2, 8}, {60, 80, 2, 8}};
    q.schedule = {est::Schedule::Kind::interleaved, 2};
    auto i = crius::launcher::torchtitan_args(q, m, st, fw(release));
    BOOST_REQUIRE(i.ok());
    BOOST_TEST(value(*i, "--parallelism.pipeline_parallel_schedule") == "Interleaved1F1B");
    if (!v02)
      BOOST_TEST(value(*i, "--parallelism.pipeline_parallel_split_points") ==
                 "layers.10,layers.20,layers.30,layers.40,layers.50,layers.60,layers.70");
    // Full recomputation: every block.
    q.recompute = est::Recompute::full;
    i = crius::launcher::torchtitan_args(q, m, st, fw(release));
    BOOST_REQUIRE(i.ok());
    BOOST_TEST(value(*i, "--activation_checkpoint.mode") == "full");
  }
  // Plain DP at ZeRO-0 is DDP; without a pipeline the batch is one micro-batch per rank.
  est::Plan d;
  d.runtime = est::Runtime::megatron_core;
  d.stages = {{0, 80, 64, 1}};
  d.micro_batch_size = 2;
  d.micro_batches = 1;
  auto a = crius::launcher::torchtitan_args(d, m, st, fw("torchtitan"));
  BOOST_REQUIRE(a.ok());
  BOOST_TEST(value(*a, "--parallelism.data_parallel_replicate_degree") == "64");
  BOOST_TEST(value(*a, "--parallelism.data_parallel_shard_degree") == "1");
  BOOST_TEST(!has(*a, "--parallelism.fsdp_reshard_after_forward"));
  BOOST_TEST(value(*a, "--training.local_batch_size") == "2");
  BOOST_TEST(value(*a, "--training.global_batch_size") == "128");
  // ZeRO-3: FSDP resharding after every forward, micro-batches accumulated by train.py.
  est::Plan z3 = d;
  z3.zero = 3;
  z3.micro_batch_size = 1;
  z3.micro_batches = 2;
  auto f3 = crius::launcher::torchtitan_args(z3, m, st, fw("torchtitan"));
  BOOST_REQUIRE(f3.ok());
  BOOST_TEST(value(*f3, "--parallelism.data_parallel_shard_degree") == "64");
  BOOST_TEST(value(*f3, "--parallelism.fsdp_reshard_after_forward") == "always");
  BOOST_TEST(value(*f3, "--training.local_batch_size") == "1");
  BOOST_TEST(value(*f3, "--training.global_batch_size") == "128");
  // A command that says otherwise, in either spelling tyro takes, is refused.
  BOOST_TEST(!crius::launcher::check_command({"-m", "torchtitan.train", "--parallelism.data-parallel-shard-degree", "8"}, *a).ok());
  BOOST_TEST(!crius::launcher::check_command({"--training.local_batch_size=4"}, *a).ok());
  BOOST_TEST(crius::launcher::check_command({"--job.config_file", "llama3_70b.toml"}, *a).ok());
}

// Context parallelism: Megatron-Core's, for dense transformers with Transformer Engine's
// attention and a sequence in 2 x cp chunks; handed over as --context-parallel-size.
BOOST_AUTO_TEST_CASE(context_parallelism_is_megatrons_for_dense_transformers) {
  const est::Cluster c = load(top() + "/etc/crius/examples/dgx-h100.toml");
  const est::Model llama = model(c, "llama2-70b");
  const est::StackSwitches st = c.gpus.runtime(est::Runtime::megatron_core).stack;
  BOOST_TEST(est::check_context_parallel(fw("megatron:0.8"), llama, 2, &st).ok());
  BOOST_TEST(est::check_context_parallel(fw("crius-train"), llama, 1, &st).ok());
  auto why = [&](const char* f, const est::Model& m, int cp, const est::StackSwitches* s) {
    auto r = est::check_context_parallel(fw(f), m, cp, s);
    return r.ok() ? std::string() : r.error();
  };
  BOOST_TEST(why("crius-train", llama, 2, &st).find("crius-train runs every sequence whole") != std::string::npos);
  BOOST_TEST(why("torchtitan", llama, 2, &st).find("does not hand context parallelism over to torchtitan") != std::string::npos);
  BOOST_TEST(why("megatron", model(c, "mixtral-8x7b"), 2, &st).find("dense transformers") != std::string::npos);
  est::StackSwitches unfused = st;
  unfused.fused_attention = false;
  BOOST_TEST(why("megatron", llama, 2, &unfused).find("fused_attention off") != std::string::npos);
  est::Model odd = llama;
  odd.seq_len = 4100;  // 4100 = 2 x 2050: 2 chunks of each of 2 ranks would not be whole for cp 4
  BOOST_TEST(why("megatron", odd, 2, &st).empty());
  BOOST_TEST(why("megatron", odd, 4, &st).find("divisible by 2 x the context-parallel size (8)") != std::string::npos);
  BOOST_TEST((est::context_parallel_sizes(fw("megatron"), odd, &st) == std::vector<int>{1, 2}));
  BOOST_TEST((est::context_parallel_sizes(fw("crius-train"), llama, &st) == std::vector<int>{1}));

  est::Plan p = llama_plan();
  for (auto& s : p.stages) s.dp = 1, s.cp = 2;
  auto a = crius::launcher::megatron_args(p, llama, st, fw("megatron:0.13"));
  BOOST_REQUIRE_MESSAGE(a.ok(), (a.ok() ? "" : a.error()));
  BOOST_TEST(value(*a, "--context-parallel-size") == "2");
  // The global batch counts the DP ranks only: the CP ranks share each sequence.
  BOOST_TEST(value(*a, "--global-batch-size") == "16");
  BOOST_TEST(!has(*crius::launcher::megatron_args(llama_plan(), llama, st, fw("megatron:0.13")), "--context-parallel-size"));
  p.stages[1].cp = 1, p.stages[1].dp = 2;
  auto uneven = crius::launcher::megatron_args(p, llama, st, fw("megatron:0.13"));
  BOOST_TEST(!uneven.ok());
  BOOST_TEST((uneven.ok() ? "" : uneven.error()).find("one TP, CP and DP size") != std::string::npos);
}
