// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Cost and memory formulas, the plan search against a brute force, and
// monotonicity of the estimates.
#define BOOST_TEST_MODULE estimator_model
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <tuple>

#include "estimator/estimator.h"

namespace est = crius::estimator;
namespace tt = boost::test_tools;

static std::string top() {
  const char* t = std::getenv("TOP");
  return t ? t : ".";
}

static est::Cluster cluster(const std::string& file = "paper-sim.toml") {
  auto c = est::load_cluster(top() + "/tests/data/estimator/" + file);
  if (!c.ok()) throw std::runtime_error(c.error());
  return std::move(*c);
}

static est::Model gpt(int layers, int hidden, int heads, int seq, int vocab) {
  est::Model m;
  m.id = "test";
  m.layers = layers, m.hidden = hidden, m.heads = heads, m.kv_heads = heads, m.ffn_hidden = 4 * hidden;
  m.seq_len = seq, m.vocab = vocab;
  return m;
}

BOOST_AUTO_TEST_CASE(gpt3_175b_flops_per_iteration) {
  // Narayanan et al. 2021: 72 B s l h^2 (1 + s/6h + V/12lh) without recompute.
  est::Model m = gpt(96, 12288, 96, 2048, 51200);
  BOOST_TEST(est::iteration_flops(m, 1536, est::Recompute::none) == 3.3862e18, tt::tolerance(2e-4));
  // Full recompute adds one forward of the layers: 96 B s l h^2 (...) in the paper's form.
  double full = est::iteration_flops(m, 1536, est::Recompute::full);
  double layers_fwd = 1536.0 * 96 * (24.0 * 2048 * 12288.0 * 12288 + 4.0 * 2048 * 2048 * 12288);
  BOOST_TEST(full - est::iteration_flops(m, 1536, est::Recompute::none) == layers_fwd, tt::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(zero_memory_7_5b_on_64_ranks) {
  // Rajbhandari et al. (ZeRO), figure 1: 120 / 31.4 / 16.6 / 1.9 GB.
  const double gb = 1e9;
  BOOST_TEST(est::zero_model_state_bytes(7.5e9, 64, 0) / gb == 120.0, tt::tolerance(1e-3));
  BOOST_TEST(est::zero_model_state_bytes(7.5e9, 64, 1) / gb == 31.4, tt::tolerance(2e-3));
  BOOST_TEST(est::zero_model_state_bytes(7.5e9, 64, 2) / gb == 16.6, tt::tolerance(3e-3));  // 16.64
  BOOST_TEST(est::zero_model_state_bytes(7.5e9, 64, 3) / gb == 1.9, tt::tolerance(2e-2));
}

BOOST_AUTO_TEST_CASE(brute_force_equals_fast_search) {
  est::Cluster c = cluster();
  int cases = 0, uneven_interleaved = 0;
  // crius-train splits any way, interleaved too (at least V layers a stage); Megatron 0.12 the
  // first and last stage apart, each a multiple of V with an interleaved schedule.
  for (auto [rt, framework] : {std::pair{est::Runtime::megatron, "crius-train"}, std::pair{est::Runtime::alpa, "crius-train"},
                               std::pair{est::Runtime::megatron_core, "crius-train"},
                               std::pair{est::Runtime::megatron_core, "megatron:0.12"}}) {
    for (auto [layers, hidden, batch] : {std::tuple{8, 1024, 64}, std::tuple{6, 2048, 32}, std::tuple{12, 512, 128},
                                         std::tuple{10, 512, 64}}) {
      est::Request req;
      req.model = gpt(layers, hidden, 16, 512, 8192);
      req.global_batch = batch;
      req.runtime = rt;
      req.framework = *est::parse_framework(framework);
      for (auto [gpu, nodes, gpn] : {std::tuple{"a100", 1, 4}, std::tuple{"a40", 2, 2}, std::tuple{"v100", 1, 8}}) {
        for (int stages : {1, 2, 4}) {
          est::Cell cell{gpu, gpu, nodes, gpn, stages};
          est::Estimate fast = est::estimate_cell(req, cell, c);
          est::SearchOptions bo;
          bo.brute_force = true;
          est::Estimate brute = est::estimate_cell(req, cell, c, bo);
          BOOST_TEST_CONTEXT(gpu << " " << nodes << "x" << gpn << " S=" << stages << " L=" << layers << " rt="
                                 << est::to_string(rt) << " " << framework) {
            BOOST_TEST(fast.feasible == brute.feasible);
            if (fast.feasible && brute.feasible) {
              ++cases;
              const est::Plan& p = fast.plan;
              if (p.schedule.kind == est::Schedule::Kind::interleaved &&
                  std::any_of(p.stages.begin(), p.stages.end(), [&](const est::StagePlan& s) {
                    return (s.layer_end - s.layer_begin) % p.schedule.virtual_stages != 0 ||
                           s.layer_end - s.layer_begin != p.stages[0].layer_end - p.stages[0].layer_begin;
                  }))
                ++uneven_interleaved;
              BOOST_TEST(brute.plans_evaluated >= fast.plans_evaluated);
              if (rt != est::Runtime::megatron_core) {
                BOOST_TEST(fast.iter_time_s == brute.iter_time_s, tt::tolerance(1e-6));
              } else {
                // With DP communication hidden behind each stage's own compute, the iteration
                // time is no longer a function of the bottleneck stage and the sum alone: the fast
                // search's compute-balanced split can miss one that hides more (crius-estimate(1)).
                BOOST_TEST(fast.iter_time_s >= brute.iter_time_s * (1 - 1e-9));
                BOOST_TEST(fast.iter_time_s <= brute.iter_time_s * 1.05);
              }
            }
          }
        }
      }
    }
  }
  BOOST_TEST(cases >= 20);
  BOOST_TEST(uneven_interleaved >= 4);
}

// Where memory is tight the fast search shards gradients and parameters (ZeRO-2, 3) only for
// combos no less sharded plan fits; the brute force tries every stage the framework has.
BOOST_AUTO_TEST_CASE(brute_force_equals_fast_search_with_sharded_data_parallelism) {
  est::Cluster c = cluster();
  int cases = 0, sharded = 0;
  for (auto [layers, hidden, batch] : {std::tuple{8, 4096, 64}, std::tuple{6, 6144, 32}, std::tuple{4, 8192, 32}}) {
    est::Request req;
    req.model = gpt(layers, hidden, 32, 2048, 32000);
    req.model.dtype = est::Dtype::bf16;
    req.global_batch = batch;
    req.runtime = est::Runtime::megatron_core;
    req.framework = *est::parse_framework("megatron:0.13");
    for (auto [gpu, nodes, gpn] : {std::tuple{"a100", 2, 4}, std::tuple{"a40", 2, 2}, std::tuple{"v100", 1, 8}}) {
      for (int stages : {1, 2}) {
        est::Cell cell{gpu, gpu, nodes, gpn, stages};
        est::Estimate fast = est::estimate_cell(req, cell, c);
        est::SearchOptions bo;
        bo.brute_force = true;
        est::Estimate brute = est::estimate_cell(req, cell, c, bo);
        BOOST_TEST_CONTEXT(gpu << " " << nodes << "x" << gpn << " S=" << stages << " L=" << layers << " h=" << hidden) {
          BOOST_TEST(fast.feasible == brute.feasible);
          if (!fast.feasible || !brute.feasible) continue;
          ++cases;
          sharded += fast.plan.zero >= 2;
          BOOST_TEST(fast.iter_time_s >= brute.iter_time_s * (1 - 1e-9));
          BOOST_TEST(fast.iter_time_s <= brute.iter_time_s * 1.05);
        }
      }
    }
  }
  BOOST_TEST_MESSAGE(cases << " Cells, " << sharded << " with ZeRO-2 or 3");
  BOOST_TEST(cases >= 12);
  BOOST_TEST(sharded >= 2);
}

BOOST_AUTO_TEST_CASE(faster_hardware_is_never_slower) {
  est::Cluster base = cluster();
  est::Request req;
  req.model = *base.models.resolve("bert__2.6B");
  req.global_batch = 256;
  for (est::Runtime rt : {est::Runtime::megatron, est::Runtime::alpa}) {
    req.runtime = rt;
    for (const char* gpu : {"a100", "a40", "v100"}) {
      est::CellFilter f;
      f.gpu = gpu;
      auto before = est::rank_cells(req, base, f);
      est::Cluster fast_net = base, fast_gpu = base, big_mem = base;
      for (auto& p : fast_net.partitions) p.intra_node_bw_gbs *= 2, p.inter_node_bw_gbs *= 2;
      for (auto& g : const_cast<std::vector<est::GpuType>&>(fast_gpu.gpus.types()))
        g.tflops_fp16 *= 1.5, g.tflops_bf16 *= 1.5, g.tflops_fp32 *= 1.5, g.memory_bw_gbs *= 1.5;
      for (auto& g : const_cast<std::vector<est::GpuType>&>(big_mem.gpus.types())) g.memory_gib *= 2;
      int checked = 0;
      for (const auto& e : before) {
        for (const est::Cluster* other : {&fast_net, &fast_gpu, &big_mem}) {
          est::Estimate o = est::estimate_cell(req, e.cell, *other);
          BOOST_TEST_CONTEXT(gpu << " " << e.cell.nodes << "x" << e.cell.gpus_per_node << " S=" << e.cell.stages) {
            if (e.feasible) {
              BOOST_TEST(o.feasible);  // more of anything never makes a feasible Cell infeasible
              BOOST_TEST(o.iter_time_s <= e.iter_time_s * (1 + 1e-9));
              ++checked;
            }
          }
        }
      }
      BOOST_TEST(checked > 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(estimate_is_consistent) {
  est::Cluster c = cluster();
  est::Request req;
  req.model = *c.models.resolve("gpt3-6.7b");
  req.global_batch = 512;
  est::Cell cell{"a100", "a100", 4, 4, 2};
  est::Estimate e = est::estimate_cell(req, cell, c);
  BOOST_REQUIRE_MESSAGE(e.feasible, e.why);
  const auto& b = e.breakdown;
  BOOST_TEST(b.compute + b.tp_comm + b.dp_comm + b.pp_comm + b.moe_comm + b.bubble + b.optimizer == e.iter_time_s,
             tt::tolerance(1e-9));
  BOOST_TEST(e.samples_per_s == 512 / e.iter_time_s, tt::tolerance(1e-12));
  BOOST_TEST(e.memory_gib <= 40.0);
  int dp = e.plan.stages[0].dp, tp = e.plan.stages[0].tp;
  BOOST_TEST(dp * tp * 2 == 16);
  BOOST_TEST(tp <= 4);
  BOOST_TEST(dp * e.plan.micro_batch_size * e.plan.micro_batches == 512);
  BOOST_TEST(e.plan.stages.front().layer_begin == 0);
  BOOST_TEST(e.plan.stages.back().layer_end == 32);
  BOOST_TEST(e.plan.stages[0].layer_end == e.plan.stages[1].layer_begin);
  // The fixed-plan estimate reproduces the searched one.
  est::Estimate again = est::estimate_plan(req, cell, e.plan, c);
  BOOST_TEST(again.iter_time_s == e.iter_time_s, tt::tolerance(1e-12));
  // Per-GPU throughput of a 6.7B model on A100 is in the range Megatron-LM reports
  // (Narayanan et al. 2021: 44-52% of peak on A100 clusters).
  double tflops = e.flops_per_iter / e.iter_time_s / 16 / 1e12;
  BOOST_TEST(tflops > 0.25 * 312);
  BOOST_TEST(tflops < 0.70 * 312);
  auto j = est::to_json(e);
  for (const char* k : {"gpu", "nodes", "gpus_per_node", "stages", "feasible", "iter_time_s", "samples_per_s",
                        "memory_gib", "plan", "breakdown"})
    BOOST_TEST(j.contains(k), k);
  BOOST_TEST(j["plan"]["stages"].size() == 2u);
}

// A pipeline's bubble is what the plan makes it: one micro-batch through two stages waits for
// the other stage, about a whole one (the embedding and the head make them unequal); eight
// micro-batches of the same size pass through the same two stages (the sum of their times per
// micro-batch is the same) and wait at most one eighth of the compute.
BOOST_AUTO_TEST_CASE(pipeline_bubble_follows_the_plan) {
  est::Cluster c = cluster();
  est::Request req;
  req.model = *c.models.resolve("gpt3-1.3b");
  req.pins.tp = 1;
  req.pins.micro_batch_size = 1;
  req.pins.schedule = est::Schedule{est::Schedule::Kind::one_f_one_b, 1};
  req.pins.recompute = est::Recompute::none;
  const est::Cell cell{"a100", "a100", 1, 2, 2};
  req.global_batch = 1;
  req.pins.micro_batches = 1;
  est::Estimate one = est::estimate_cell(req, cell, c);
  BOOST_REQUIRE_MESSAGE(one.feasible, one.why);
  BOOST_TEST(one.plan.micro_batches == 1);
  const auto& b1 = one.breakdown;
  BOOST_TEST(b1.bubble > 0.6 * b1.compute);
  BOOST_TEST(b1.bubble <= b1.compute * (1 + 1e-12));
  req.global_batch = 8;
  req.pins.micro_batches = 8;
  est::Estimate eight = est::estimate_cell(req, cell, c);
  BOOST_REQUIRE_MESSAGE(eight.feasible, eight.why);
  const auto& b8 = eight.breakdown;
  BOOST_TEST(b8.compute / 8 + b8.bubble == b1.compute + b1.bubble, tt::tolerance(1e-9));
  BOOST_TEST(b8.bubble > 0);
  BOOST_TEST(b8.bubble <= b8.compute / 8 * (1 + 1e-12));
}

BOOST_AUTO_TEST_CASE(pins_are_obeyed_and_infeasible_says_why) {
  est::Cluster c = cluster();
  est::Request req;
  req.model = *c.models.resolve("gpt3-6.7b");
  req.global_batch = 512;
  req.pins.tp = 2;
  req.pins.recompute = est::Recompute::full;
  req.pins.schedule = est::Schedule{est::Schedule::Kind::one_f_one_b, 1};
  est::Estimate e = est::estimate_cell(req, est::Cell{"a100", "a100", 4, 4, 2}, c);
  BOOST_REQUIRE_MESSAGE(e.feasible, e.why);
  BOOST_TEST(e.plan.stages[0].tp == 2);
  BOOST_TEST(est::to_string(e.plan.recompute) == "full");
  BOOST_TEST(est::to_string(e.plan.schedule) == "1f1b");

  est::Request big;
  big.model = *c.models.resolve("gpt3-175b");
  big.global_batch = 1536;
  est::Estimate none = est::estimate_cell(big, est::Cell{"a10", "a10", 1, 2, 1}, c);
  BOOST_TEST(!none.feasible);
  BOOST_TEST(none.why.find("needs at least") != std::string::npos, none.why);

  est::Request bad = req;
  bad.global_batch = 500;
  bad.pins = {};
  bad.pins.micro_batches = 3;
  BOOST_TEST(!est::validate_request(bad).ok());
  bad.pins = {};
  bad.runtime = est::Runtime::alpa;
  BOOST_TEST(est::validate_request(bad).error().find("16 micro-batches") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(cells_enumeration) {
  est::Cluster c = cluster();
  est::Model m = *c.models.resolve("bert__1.3B");
  est::CellFilter f;
  f.partition = "a100";
  auto cells = est::enumerate_cells(m, est::Runtime::megatron, c, f);
  // 1x1, 1x2, 1x4, then 2..80 nodes x 4; stages divide the GPU count, <= 24 layers.
  int one_gpu = 0, max_nodes = 0;
  for (const auto& cell : cells) {
    BOOST_TEST(cell.gpus() % cell.stages == 0);
    BOOST_TEST(cell.stages <= 24);
    BOOST_TEST((cell.nodes == 1 || cell.gpus_per_node == 4));
    one_gpu += cell.gpus() == 1;
    max_nodes = std::max(max_nodes, cell.nodes);
  }
  BOOST_TEST(one_gpu == 1);
  BOOST_TEST(max_nodes == 80);
  auto alpa = est::enumerate_cells(m, est::Runtime::alpa, c, f);
  for (const auto& cell : alpa) BOOST_TEST(cell.stages <= 16);
}

// GPT-3 175B as Megatron-LM's papers ran it: tensor parallel 8, micro-batch 1.
static est::Request megatron_gpt3_175b(const est::Cluster& c, int global_batch) {
  est::Request req;
  req.model = *c.models.resolve("gpt3-175b");
  req.global_batch = global_batch;
  req.pins.tp = 8;
  req.pins.micro_batch_size = 1;
  return req;
}

BOOST_AUTO_TEST_CASE(published_megatron_gpt3_175b_on_1024_a100) {
  // Narayanan et al., SC'21, table 1: GPT-3 175B, 1024 A100-80GB (t=8, p=16, d=8),
  // global batch 1536, full recompute: 138 TFLOP/s per GPU counted with the
  // 96 B s l h^2 (1 + s/6h + V/16lh) formula -> 31.9 s per iteration. The estimate is about
  // 12% fast: the 2022 Megatron-LM of the next test ran the same model at 162 TFLOP/s per GPU
  // counted the same way, and the constants match that one.
  est::Cluster c = cluster("megatron-a100.toml");
  est::Request req = megatron_gpt3_175b(c, 1536);
  req.pins.recompute = est::Recompute::full;
  req.pins.sequence_parallel = false;
  est::Estimate e = est::estimate_cell(req, est::Cell{"dgx", "a100-80gb", 128, 8, 16}, c);
  BOOST_REQUIRE_MESSAGE(e.feasible, e.why);
  const double h = 12288, s = 2048, l = 96, V = 51200;
  const double published_flops = 96 * 1536 * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  const double published_iter = published_flops / (138e12 * 1024);
  BOOST_TEST_MESSAGE("estimate " << e.iter_time_s << " s, published " << published_iter << " s");
  BOOST_TEST(e.iter_time_s == published_iter, tt::tolerance(0.15));
  // Newer Megatron features (selective recompute, sequence parallelism) are never slower.
  est::Request free = req;
  free.pins = {};
  est::Estimate best = est::estimate_cell(free, est::Cell{"dgx", "a100-80gb", 128, 8, 16}, c);
  BOOST_TEST(best.iter_time_s <= e.iter_time_s);
}

BOOST_AUTO_TEST_CASE(published_megatron_gpt3_175b_on_64_a100_full_and_selective) {
  // Korthikanti et al. 2022 (arXiv 2205.05198), table 5: GPT-3 175B on 64 A100-80GB (t=8, p=8),
  // global batch 64, micro-batch 1, interleaved (3 chunks per GPU): 18.13 s per iteration with
  // full recompute and tensor parallelism only, 13.75 s with selective recompute and sequence
  // parallelism. tests/bench/estimator-accuracy.sh reports all of table 5; this guards one row.
  est::Cluster c = cluster("megatron-a100.toml");
  est::Request req = megatron_gpt3_175b(c, 64);
  req.pins.schedule = est::Schedule{est::Schedule::Kind::interleaved, 3};
  const est::Cell cell{"dgx", "a100-80gb", 8, 8, 8};
  for (auto [rc, sp, published] : {std::tuple{est::Recompute::full, false, 18.13},
                                   std::tuple{est::Recompute::selective, true, 13.75}}) {
    req.pins.recompute = rc;
    req.pins.sequence_parallel = sp;
    est::Estimate e = est::estimate_cell(req, cell, c);
    BOOST_REQUIRE_MESSAGE(e.feasible, e.why);
    BOOST_TEST_MESSAGE(est::to_string(rc) << ": estimate " << e.iter_time_s << " s, published " << published << " s");
    BOOST_TEST(e.iter_time_s == published, tt::tolerance(0.06));
  }
}

BOOST_AUTO_TEST_CASE(fp64_models_need_an_fp64_rate_and_cost_twice_fp32) {
  est::Cluster c = cluster();
  est::Request req;
  req.model = gpt(8, 1024, 16, 512, 8192);
  req.model.dtype = est::Dtype::fp64;
  req.global_batch = 32;
  const est::Cell cell{"a100", "a100", 1, 4, 1};
  est::Estimate none = est::estimate_cell(req, cell, c);
  BOOST_TEST(!none.feasible);
  BOOST_TEST(none.why.find("no fp64 rate") != std::string::npos, none.why);

  // With an fp64 rate equal to the fp32 one, fp64 moves and stores twice the bytes.
  auto gpus = est::GpuCatalog::parse(
      "[gpu.a100]\nname = \"x\"\nmemory_gib = 40\nmemory_bw_gbs = 1555\n"
      "tflops = { fp16 = 312, fp32 = 19.5, fp64 = 19.5 }\n",
      "inline");
  if (!gpus.ok()) BOOST_FAIL(gpus.error());
  c.gpus = std::move(*gpus);
  est::Estimate f64 = est::estimate_cell(req, cell, c);
  req.model.dtype = est::Dtype::fp32;
  est::Estimate f32 = est::estimate_cell(req, cell, c);
  BOOST_REQUIRE(f64.feasible);
  BOOST_REQUIRE(f32.feasible);
  BOOST_TEST(f64.iter_time_s > f32.iter_time_s);
  BOOST_TEST(f64.memory.params == 2 * f32.memory.params, tt::tolerance(1e-9));
}

// The megatron-core profile's switches (crius-estimate(1), RUNTIME PROFILES), each turned off in
// turn through the catalogue: what each one hides or saves, and nothing else.
static est::Estimate core_estimate(const std::string& switches, const est::Request& req, const est::Cell& cell) {
  est::Cluster c = cluster("h100-dgx.toml");
  auto over = est::GpuCatalog::parse("[runtime.megatron-core]\nruntime_overhead = 1.0\n" + switches +
                                         "\n[gpu.unused]\nname = \"x\"\nmemory_gib = 1\nmemory_bw_gbs = 1\n"
                                         "tflops = { fp16 = 1, fp32 = 1 }\n",
                                     "switches");
  if (!over.ok()) throw std::runtime_error(over.error());
  c.gpus.merge(*over);
  return est::estimate_cell(req, cell, c);
}

BOOST_AUTO_TEST_CASE(megatron_core_switches_each_hide_what_they_say) {
  est::Request req;
  req.model = gpt(16, 4096, 32, 4096, 51200);
  req.model.dtype = est::Dtype::bf16;
  req.global_batch = 64;
  req.runtime = est::Runtime::megatron_core;
  req.pins.tp = 2, req.pins.micro_batch_size = 1, req.pins.recompute = est::Recompute::none;
  req.pins.sequence_parallel = true, req.pins.zero = 1;
  req.pins.schedule = est::Schedule{est::Schedule::Kind::interleaved, 2};
  const est::Cell cell{"dgx", "h100", 2, 8, 2};  // tp 2 x dp 4 per stage, 2 stages
  const est::Estimate on = core_estimate("", req, cell);
  BOOST_REQUIRE_MESSAGE(on.feasible, on.why);
  // Fused attention: less compute (causal, no s x s traffic) and no stored scores.
  const est::Estimate unfused = core_estimate("fused_attention = false", req, cell);
  BOOST_REQUIRE(unfused.feasible);
  BOOST_TEST(on.breakdown.compute < 0.9 * unfused.breakdown.compute);
  BOOST_TEST(on.memory.activations < 0.5 * unfused.memory.activations);
  // DP overlap: the reduce-scatter and all-gather hide behind compute, all but the last bucket.
  const est::Estimate no_dp = core_estimate("overlap_grad_reduce = false\noverlap_param_gather = false", req, cell);
  BOOST_TEST(on.breakdown.dp_comm < no_dp.breakdown.dp_comm);
  BOOST_TEST(on.breakdown.dp_comm > 0);
  BOOST_TEST(no_dp.breakdown.compute == on.breakdown.compute, tt::tolerance(1e-12));
  // TP overlap (with sequence parallelism): the GEMMs hide the all-gathers and reduce-scatters.
  const est::Estimate no_tp = core_estimate("tp_comm_overlap = false", req, cell);
  BOOST_TEST(no_tp.breakdown.tp_comm > 0);
  BOOST_TEST(on.breakdown.tp_comm < no_tp.breakdown.tp_comm);
  // As Transformer Engine runs it (the shipped profile's tp_comm_splits and tp_comm_sms): one
  // chunk of what the GEMMs hide stays exposed, and the reduce-scatters' SMs slow the GEMMs beside
  // them; neither alone hides less than not overlapping at all.
  const est::Estimate chunked = core_estimate("tp_comm_splits = 4", req, cell);
  BOOST_TEST(chunked.breakdown.tp_comm > on.breakdown.tp_comm);
  BOOST_TEST(chunked.breakdown.tp_comm < no_tp.breakdown.tp_comm);
  BOOST_TEST(chunked.breakdown.tp_comm - on.breakdown.tp_comm ==
                 (no_tp.breakdown.tp_comm - on.breakdown.tp_comm) / 4,  // all hidden before: a quarter of it back
             tt::tolerance(1e-9));
  const est::Estimate sms = core_estimate("tp_comm_sms = 20", req, cell), more = core_estimate("tp_comm_sms = 40", req, cell);
  BOOST_TEST(sms.breakdown.tp_comm > on.breakdown.tp_comm);
  BOOST_TEST(more.breakdown.tp_comm > sms.breakdown.tp_comm);
  // Pipeline sends overlapped: only the fill and the drain pay them.
  const est::Estimate no_pp = core_estimate("overlap_p2p_comm = false", req, cell);
  BOOST_TEST(no_pp.breakdown.pp_comm > 0);
  BOOST_TEST(on.breakdown.pp_comm < no_pp.breakdown.pp_comm);
  // Master parameters as remainders (off by default): a bf16 model's Adam states 10 instead of
  // 12 bytes per parameter before ZeRO sharding, nothing else; an fp16 model keeps its full copy.
  const est::Estimate rem = core_estimate("master_param_remainders = true", req, cell);
  BOOST_TEST(rem.memory.optimizer == on.memory.optimizer * 10 / 12, tt::tolerance(1e-9));
  BOOST_TEST(rem.memory.params == on.memory.params, tt::tolerance(1e-12));
  BOOST_TEST(rem.memory.activations == on.memory.activations, tt::tolerance(1e-12));
  est::Request fp16 = req;
  fp16.model.dtype = est::Dtype::fp16;
  BOOST_TEST(core_estimate("master_param_remainders = true", fp16, cell).memory.optimizer ==
                 core_estimate("", fp16, cell).memory.optimizer,
             tt::tolerance(1e-12));
  // All off: the megatron profile's cost model (with the same overhead).
  const est::Estimate off = core_estimate(
      "fused_attention = false\noverlap_grad_reduce = false\noverlap_param_gather = false\n"
      "tp_comm_overlap = false\noverlap_p2p_comm = false",
      req, cell);
  est::Request old = req;
  old.runtime = est::Runtime::megatron;
  BOOST_TEST(off.iter_time_s == core_estimate("", old, cell).iter_time_s, tt::tolerance(1e-12));
  // A switch that is not a boolean names itself.
  auto bad = est::GpuCatalog::parse("[runtime.megatron-core]\ntp_comm_overlap = 1\n[gpu.x]\nname = \"x\"\n"
                                    "memory_gib = 1\nmemory_bw_gbs = 1\ntflops = { fp16 = 1, fp32 = 1 }\n", "t.toml");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.error().find("tp_comm_overlap") != std::string::npos);
  BOOST_TEST(est::to_string(*est::parse_runtime("megatron-core")) == "megatron-core");
}

// ZeRO-1 shards the optimizer states over the data-parallel ranks in the search's memory check as
// in the plan it reports: Llama-scale layers on 2 stages fit an H100 without recompute (the search
// had checked every plan with unsharded states and found none).
BOOST_AUTO_TEST_CASE(zero1_memory_counts_in_the_search) {
  est::Cluster c = cluster("h100-dgx.toml");
  est::Request req;
  req.model = *c.models.resolve("mlm-gpt-70b");
  req.global_batch = 384;
  req.runtime = est::Runtime::megatron_core;
  req.pins.tp = 8, req.pins.micro_batch_size = 1, req.pins.recompute = est::Recompute::none;
  req.pins.schedule = est::Schedule{est::Schedule::Kind::one_f_one_b, 1};
  est::Estimate e = est::estimate_cell(req, est::Cell{"dgx", "h100", 96, 8, 2}, c);
  BOOST_REQUIRE_MESSAGE(e.feasible, e.why);
  BOOST_TEST(e.plan.zero == 1);
  BOOST_TEST(e.memory_gib <= e.gpu_memory_gib);
  est::SearchOptions brute;
  brute.brute_force = true;
  est::Estimate b = est::estimate_cell(req, est::Cell{"dgx", "h100", 96, 8, 2}, c, brute);
  BOOST_REQUIRE(b.feasible);
  BOOST_TEST(b.iter_time_s == e.iter_time_s, tt::tolerance(1e-9));
}

// Sharded gradients (ZeRO-2) and parameters (ZeRO-3) as Megatron-FSDP runs them: each stage
// needs less memory than the one before, and pays for it with communication in every
// micro-batch, which a network too slow to hide it shows: twice the micro-batches, about twice
// the exposed time (ZeRO-1 reduces once per step whatever the micro-batches).
BOOST_AUTO_TEST_CASE(zero_2_and_3_trade_memory_for_communication_in_every_micro_batch) {
  est::Cluster c = cluster("h100-dgx.toml");
  for (auto& p : c.partitions) p.inter_node_bw_gbs /= 20;
  est::Request req;
  req.model = *c.models.resolve("mlm-gpt-1.7b");
  req.global_batch = 256;
  req.runtime = est::Runtime::megatron_core;
  req.framework = *est::parse_framework("megatron:0.13");
  req.pins.tp = 1, req.pins.recompute = est::Recompute::full;
  const est::Cell cell{"dgx", "h100", 4, 8, 1};
  double mem[4], dp[4][2];
  for (int z = 0; z < 4; ++z) {
    for (int i = 0; i < 2; ++i) {
      req.pins.zero = z, req.pins.micro_batch_size = i == 0 ? 2 : 1;
      est::Estimate e = est::estimate_cell(req, cell, c);
      BOOST_REQUIRE_MESSAGE(e.feasible, "ZeRO-" << z << ": " << e.why);
      BOOST_TEST(e.plan.zero == z);
      BOOST_TEST(e.plan.micro_batches == (i == 0 ? 4 : 8));
      dp[z][i] = e.breakdown.dp_comm;
      if (i == 0) mem[z] = e.memory_gib;
    }
    BOOST_TEST_MESSAGE("ZeRO-" << z << ": " << mem[z] << " GiB, DP exposed " << dp[z][0] << " s (4 micro-batches), "
                                << dp[z][1] << " s (8)");
  }
  for (int z = 1; z < 4; ++z) BOOST_TEST(mem[z] < mem[z - 1]);
  // ZeRO-1 too exposes more with smaller micro-batches (its last one hides less); ZeRO-2 and 3
  // grow faster, by what each micro-batch adds.
  for (int z = 2; z < 4; ++z) {
    BOOST_TEST(dp[z][0] > dp[z - 1][0]);
    BOOST_TEST(dp[z][1] / dp[z][0] > 1.2 * dp[1][1] / dp[1][0]);
  }
}

// A model whose whole weights and gradients do not fit a GPU runs fully sharded where the
// framework has it (Megatron-Core 0.12 on: Megatron-FSDP), and nowhere else.
BOOST_AUTO_TEST_CASE(the_search_shards_parameters_only_where_nothing_less_fits) {
  est::Cluster c = cluster("h100-dgx.toml");
  est::Request req;
  req.model = *c.models.resolve("llama2-70b");
  req.global_batch = 512;
  req.runtime = est::Runtime::megatron_core;
  req.pins.tp = 1;
  const est::Cell cell{"dgx", "h100", 8, 8, 1};
  for (const char* f : {"megatron:0.13", "megatron:0.19", "megatron:0.11", "crius-train"}) {
    req.framework = *est::parse_framework(f);
    est::Estimate e = est::estimate_cell(req, cell, c);
    BOOST_TEST_CONTEXT(f) {
      if (req.framework.kind == est::Framework::Kind::megatron && req.framework.version >= est::kMegatronFsdp) {
        BOOST_REQUIRE_MESSAGE(e.feasible, e.why);
        BOOST_TEST(e.plan.zero == 3);
        BOOST_TEST(e.memory_gib <= e.gpu_memory_gib);
        BOOST_TEST(e.memory.params < 3.0);  // 70B x 2 bytes / 64 ranks
        // A job's record carries the plan as text and costs it again the same.
        auto back = est::plan_from_json_text(est::plan_text(e.plan), "plan");
        BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error()));
        BOOST_TEST(est::validate(*back, "plan").ok());
        est::Estimate again = est::estimate_plan(req, cell, *back, c);
        BOOST_REQUIRE_MESSAGE(again.feasible, again.why);
        BOOST_TEST(again.iter_time_s == e.iter_time_s, tt::tolerance(1e-9));
      } else {
        BOOST_TEST(!e.feasible);
      }
    }
  }
  // With tensor parallelism ZeRO-1 fits too; where the search shards more, it is for less
  // recomputation or larger micro-batches, and faster for it.
  req.framework = *est::parse_framework("megatron:0.13");
  req.pins.tp = 8;
  est::Estimate e = est::estimate_cell(req, cell, c);
  req.pins.zero = 1;
  est::Estimate z1 = est::estimate_cell(req, cell, c);
  BOOST_REQUIRE_MESSAGE(e.feasible && z1.feasible, e.why << z1.why);
  BOOST_TEST_MESSAGE("tp 8: ZeRO-" << e.plan.zero << " rc=" << est::to_string(e.plan.recompute) << " " << e.iter_time_s
                                   << " s; ZeRO-1 rc=" << est::to_string(z1.plan.recompute) << " " << z1.iter_time_s << " s");
  BOOST_TEST(e.iter_time_s <= z1.iter_time_s);
  if (e.plan.zero > 1)
    BOOST_TEST((e.plan.recompute != z1.plan.recompute || e.plan.micro_batch_size > z1.plan.micro_batch_size));
}

// The megatron-core profile against a published H100 run of its fit split (Megatron-LM README,
// Megatron-Core r0.8.0: GPT 177B on 2,304 H100, tp 8 x pp 6 x dp 48, batch 1152, 432.8 TFLOP/s per
// GPU); tests/bench/estimator-accuracy.sh reports every run, the held-out ones included.
BOOST_AUTO_TEST_CASE(published_megatron_core_gpt_177b_on_2304_h100) {
  est::Cluster c = cluster("h100-dgx.toml");
  est::Request req;
  req.model = *c.models.resolve("mlm-gpt-177b");
  req.global_batch = 1152;
  req.runtime = est::Runtime::megatron_core;
  req.pins.tp = 8;
  est::Estimate e = est::estimate_cell(req, est::Cell{"dgx", "h100", 288, 8, 6}, c);
  BOOST_REQUIRE_MESSAGE(e.feasible, e.why);
  const double h = 12288, s = 4096, l = 96, V = 131072;
  const double published = 72 * 1152 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)) / (432.8e12 * 2304);
  BOOST_TEST_MESSAGE("estimate " << e.iter_time_s << " s, published " << published << " s");
  BOOST_TEST(e.iter_time_s == published, tt::tolerance(0.10));
}


// Grouped-query attention stores K and V as wide as the KV heads: the activations of a plan
// without recompute shrink by 2 s h (1 - kv/heads) bytes of the model's type per layer and sample
// (over TP), nothing else changes.
// 8 layers of a bf16 GPT (hidden 4096, 32 heads, sequence 2048) on one H100 with the megatron
// profile (unfused attention), one sample per micro-batch, no recomputation: one micro-batch's
// activations in flight, so memory differences are per-layer bytes of one sample. The estimates
// before and after `change` to the model.
template <class Change>
static std::pair<est::Estimate, est::Estimate> one_gpu_before_after(Change change) {
  const est::Cluster c = cluster("h100-dgx.toml");
  est::Request req;
  req.model = gpt(8, 4096, 32, 2048, 32000);
  req.model.dtype = est::Dtype::bf16;
  req.global_batch = 8;
  req.pins.tp = 1, req.pins.micro_batch_size = 1, req.pins.recompute = est::Recompute::none;
  const est::Cell cell{"dgx", "h100", 1, 1, 1};
  est::Estimate before = est::estimate_cell(req, cell, c);
  change(req.model);
  est::Estimate after = est::estimate_cell(req, cell, c);
  BOOST_REQUIRE(before.feasible && after.feasible);
  return {before, after};
}

BOOST_AUTO_TEST_CASE(grouped_query_attention_stores_narrower_k_and_v) {
  const auto [full, gqa] = one_gpu_before_after([](est::Model& m) { m.kv_heads = 8; });
  const double saved = 8 * 2.0 * 2048 * 4096 * (1 - 8.0 / 32) * 2 / (1024.0 * 1024 * 1024);  // 8 layers
  BOOST_TEST(full.memory.activations - gqa.memory.activations == saved, tt::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(no_dropout_keeps_no_masks) {
  // Without dropout each layer keeps neither its two one-byte masks of s x h nor the attention
  // dropout's mask and output (3 of its 5 bytes per score in 16-bit types).
  const auto [with, without] = one_gpu_before_after([](est::Model& m) { m.dropout = 0; });
  const double s = 2048, h = 4096, a = 32;
  const double saved = 8 * (2 * s * h + 3 * a * s * s) / (1024.0 * 1024 * 1024);
  BOOST_TEST(with.memory.activations - without.memory.activations == saved, tt::tolerance(1e-6));
  BOOST_TEST(without.iter_time_s < with.iter_time_s);  // no mask written
  BOOST_TEST(without.flops_per_iter == with.flops_per_iter);
}

BOOST_AUTO_TEST_CASE(rotary_position_embedding_has_no_table) {
  est::Model m = gpt(8, 4096, 32, 2048, 32000);
  const double learned = m.parameters();
  m.rope = true;
  BOOST_TEST(learned - m.parameters() == 2048.0 * 4096);
}

BOOST_AUTO_TEST_CASE(alpa_pure_data_parallel_moe_memory_keeps_every_expert) {
  // The artifact's forced data parallelism keeps every expert of a MoE model on each rank: MoE
  // 1.3B at batch 512 on 2 and 8 GPUs measured 18.86 and 10.40 GiB. With the experts on every
  // rank and the states sharded (ZeRO-1, as for BERT) the estimate agrees; with the experts
  // sharded over the ranks (expert parallelism, the search's default) it is far under.
  est::Cluster c = cluster("arena-hw.toml");
  auto m = c.models.resolve("moe__1.3B");
  BOOST_REQUIRE(m.ok());
  const est::Cell cell8{"v100", "v100", 1, 8, 1};
  est::Estimate kept;
  for (auto [gpus, measured] : {std::pair{2, 18.86}, std::pair{8, 10.40}}) {
    est::Estimate e[2];
    for (int ep = 0; ep < 2; ++ep) {
      est::Request req;
      req.model = *m;
      req.global_batch = 512;
      req.runtime = est::Runtime::alpa;
      req.pins.tp = 1, req.pins.dp = gpus, req.pins.zero = 1, req.pins.expert_parallel = ep == 1;
      e[ep] = est::estimate_cell(req, est::Cell{"v100", "v100", 1, gpus, 1}, c);
      BOOST_REQUIRE_MESSAGE(e[ep].feasible, e[ep].why);
      BOOST_TEST(e[ep].plan.expert_parallel == (ep == 1));
    }
    BOOST_TEST_MESSAGE(gpus << " GPUs: measured " << measured << " GiB, experts kept " << e[0].memory_gib
                            << ", sharded " << e[1].memory_gib);
    BOOST_TEST(e[0].memory_gib == measured, tt::tolerance(0.12));
    BOOST_TEST(e[1].memory_gib < e[0].memory_gib);
    if (gpus == 8) {
      BOOST_TEST(e[1].memory_gib < 0.7 * measured);
      kept = e[0];
    }
  }
  // The plan says so, and costs the same given back as a fixed plan (a job's record).
  const std::string text = est::plan_text(kept.plan);
  BOOST_TEST(text.find("\"expert_parallel\":false") != std::string::npos, text);
  auto back = est::plan_from_json_text(text, "plan");
  BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error()));
  BOOST_TEST(!back->expert_parallel);
  est::Request req;
  req.model = *m;
  req.global_batch = 512;
  req.runtime = est::Runtime::alpa;
  est::Estimate again = est::estimate_plan(req, cell8, *back, c);
  BOOST_REQUIRE_MESSAGE(again.feasible, again.why);
  BOOST_TEST(again.memory_gib == kept.memory_gib, tt::tolerance(1e-9));
  BOOST_TEST(again.iter_time_s == kept.iter_time_s, tt::tolerance(1e-9));
  // Written only when off: a plan without the key (every plan before it) has them sharded.
  est::Estimate sharded = est::estimate_cell(req, cell8, c);
  BOOST_REQUIRE(sharded.feasible);
  BOOST_TEST(sharded.plan.expert_parallel);
  BOOST_TEST(est::plan_text(sharded.plan).find("expert_parallel") == std::string::npos);
  // Only a MoE model has experts to keep.
  auto bert = c.models.resolve("bert__760M");
  BOOST_REQUIRE(bert.ok());
  req.model = *bert;
  req.pins.expert_parallel = false;
  auto v = est::validate_request(req);
  BOOST_REQUIRE(!v.ok());
  BOOST_TEST(v.error() == "--expert-parallel off: model 'bert__760M' has no experts");
}

BOOST_AUTO_TEST_CASE(alpa_pure_data_parallel_memory_against_the_artifact) {
  // The Crius artifact's measured peak memory per GPU of pure data parallelism
  // (tests/data/estimator/dp-memory.csv, GiB): BERT 760M at batch 128 on 1, 2 and 8 GPUs,
  // 24.129, 13.519 and 6.902. Alpa's data parallelism shards the Adam states over the ranks:
  // with them sharded (ZeRO-1) the estimate agrees; the alpa search, which keeps them on every
  // rank, over-states it more the more ranks there are. tests/bench/estimator-accuracy.sh
  // reports all 90 rows; docs/results.md says why the search keeps them replicated.
  est::Cluster c = cluster("arena-hw.toml");
  auto m = c.models.resolve("bert__760M");
  BOOST_REQUIRE(m.ok());
  for (auto [gpus, measured] : {std::pair{1, 24.129}, std::pair{2, 13.519}, std::pair{8, 6.902}}) {
    double mem[2] = {0, 0};
    for (int z = 0; z < 2; ++z) {
      est::Request req;
      req.model = *m;
      req.global_batch = 128;
      req.runtime = est::Runtime::alpa;
      req.pins.tp = 1, req.pins.dp = gpus, req.pins.zero = gpus > 1 ? z : 0;
      est::Estimate e = est::estimate_cell(req, est::Cell{"v100", "v100", 1, gpus, 1}, c);
      BOOST_REQUIRE_MESSAGE(e.feasible, e.why);
      mem[z] = e.memory_gib;
    }
    BOOST_TEST_MESSAGE(gpus << " GPUs: measured " << measured << " GiB, replicated " << mem[0] << ", sharded " << mem[1]);
    BOOST_TEST(mem[1] == measured, tt::tolerance(0.08));
    if (gpus > 1) BOOST_TEST(mem[0] > 1.3 * measured);
  }
  // Without a pin the alpa search keeps every state on each rank.
  est::Request free;
  free.model = *m;
  free.global_batch = 128;
  free.runtime = est::Runtime::alpa;
  est::Estimate e = est::estimate_cell(free, est::Cell{"v100", "v100", 1, 8, 1}, c);
  BOOST_REQUIRE(e.feasible);
  BOOST_TEST(e.plan.zero == 0);
}

// Context parallelism gives each rank half of every sequence (cp 2): half the activations, the
// same tokens per rank per step; its ring's transfers show only where they outlast the attention
// beside them, and the plan reads back from its text.
BOOST_AUTO_TEST_CASE(context_parallelism_shares_each_sequence) {
  est::Cluster c = cluster("h100-dgx.toml");
  est::Request req;
  req.model = *c.models.resolve("llama3-8b");
  req.model.seq_len = 4096;  // ZeRO-1 fits on one rank's whole sequence
  req.global_batch = 64;
  req.runtime = est::Runtime::megatron_core;
  req.framework = *est::parse_framework("megatron:0.13");
  req.pins.tp = 1, req.pins.micro_batch_size = 1, req.pins.recompute = est::Recompute::none, req.pins.zero = 1;
  const est::Cell node{"dgx", "h100", 1, 8, 1};
  req.pins.cp = 1;
  est::Estimate whole = est::estimate_cell(req, node, c);
  req.pins.cp = 2;
  est::Estimate halves = est::estimate_cell(req, node, c);
  BOOST_REQUIRE_MESSAGE(whole.feasible && halves.feasible, whole.why << halves.why);
  BOOST_TEST(whole.plan.stages[0].cp == 1);
  BOOST_TEST(halves.plan.stages[0].cp == 2);
  BOOST_TEST(halves.plan.stages[0].dp == 4);
  BOOST_TEST(halves.plan.micro_batches == 2 * whole.plan.micro_batches);
  BOOST_TEST(halves.memory.activations == whole.memory.activations / 2, tt::tolerance(1e-9));
  BOOST_TEST(halves.memory.optimizer == whole.memory.optimizer, tt::tolerance(1e-9));  // sharded over dp x cp = 8
  // Smaller GEMMs are no faster: the compute is the same tokens at no better efficiency.
  BOOST_TEST(halves.breakdown.compute >= whole.breakdown.compute * (1 - 1e-9));
  BOOST_TEST(halves.breakdown.compute <= whole.breakdown.compute * 1.1);

  // A ring across nodes over a slow network shows; within NVLink it hides.
  const est::Cell two{"dgx", "h100", 2, 8, 1};
  req.pins.tp = 8;
  est::Estimate fast = est::estimate_cell(req, two, c);
  for (auto& p : c.partitions) p.inter_node_bw_gbs /= 100;
  est::Estimate slow = est::estimate_cell(req, two, c);
  BOOST_REQUIRE_MESSAGE(fast.feasible && slow.feasible, fast.why << slow.why);
  BOOST_TEST_MESSAGE("cp 2 across two nodes: ring exposed " << fast.breakdown.cp_comm << " s, at 1/100 the bandwidth "
                                                             << slow.breakdown.cp_comm << " s");
  BOOST_TEST(slow.breakdown.cp_comm > fast.breakdown.cp_comm);
  BOOST_TEST(slow.breakdown.cp_comm > 0.1 * slow.iter_time_s);
  BOOST_TEST(halves.breakdown.cp_comm < 0.01 * halves.iter_time_s);

  const std::string text = est::plan_text(halves.plan);
  BOOST_TEST(text.find("\"cp\":2") != std::string::npos);
  BOOST_TEST(est::plan_text(whole.plan).find("\"cp\"") == std::string::npos);
  auto back = est::plan_from_json_text(text, "plan");
  BOOST_REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error()));
  BOOST_TEST(back->world_size() == 8);
  est::Estimate again = est::estimate_plan(req, node, *back, c);
  BOOST_REQUIRE_MESSAGE(again.feasible, again.why);
  BOOST_TEST(again.iter_time_s == halves.iter_time_s, tt::tolerance(1e-9));
  BOOST_TEST(!est::plan_from_json_text(R"({"version":1,"stages":[{"dp":4,"tp":1,"cp":0}]})", "plan").ok());

  // What cannot run it is told so.
  req.framework = est::Framework{};
  auto v = est::validate_request(req);
  BOOST_TEST_MESSAGE((v.ok() ? "" : v.error()));
  BOOST_TEST(!v.ok());
  BOOST_TEST((v.ok() ? "" : v.error()).find("--cp 2: crius-train runs every sequence whole") != std::string::npos);
}

// Long sequences: the fast search, which tries every context-parallel size beside every TP
// degree, finds what the brute force finds.
BOOST_AUTO_TEST_CASE(brute_force_equals_fast_search_with_context_parallelism) {
  est::Cluster c = cluster("h100-dgx.toml");
  for (auto& p : c.partitions) p.inter_node_bw_gbs /= 8;
  int cases = 0, with_cp = 0;
  for (auto [layers, hidden, seq, batch] : {std::tuple{4, 4096, 32768, 8}, std::tuple{6, 2048, 16384, 16}}) {
    est::Request req;
    req.model = gpt(layers, hidden, 32, seq, 32000);
    req.model.kv_heads = 8;
    req.model.dtype = est::Dtype::bf16;
    req.global_batch = batch;
    req.runtime = est::Runtime::megatron_core;
    req.framework = *est::parse_framework("megatron:0.13");
    for (auto [nodes, gpn] : {std::tuple{1, 8}, std::tuple{2, 8}, std::tuple{1, 4}}) {
      for (int stages : {1, 2}) {
        est::Cell cell{"dgx", "h100", nodes, gpn, stages};
        est::Estimate fast = est::estimate_cell(req, cell, c);
        est::SearchOptions bo;
        bo.brute_force = true;
        est::Estimate brute = est::estimate_cell(req, cell, c, bo);
        BOOST_TEST_CONTEXT(nodes << "x" << gpn << " S=" << stages << " L=" << layers << " seq=" << seq) {
          BOOST_TEST(fast.feasible == brute.feasible);
          if (!fast.feasible || !brute.feasible) continue;
          ++cases;
          with_cp += fast.plan.stages[0].cp > 1;
          BOOST_TEST(fast.iter_time_s >= brute.iter_time_s * (1 - 1e-9));
          BOOST_TEST(fast.iter_time_s <= brute.iter_time_s * 1.05);
        }
      }
    }
  }
  BOOST_TEST_MESSAGE(cases << " Cells, " << with_cp << " best with context parallelism");
  BOOST_TEST(cases >= 8);
  BOOST_TEST(with_cp >= 2);
}
