// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Catalogue, model file, cluster file and calibration loaders: values and errors.
#define BOOST_TEST_MODULE estimator_loaders
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "estimator/estimator.h"

namespace est = crius::estimator;
namespace fs = std::filesystem;

static std::string top() {
  const char* t = std::getenv("TOP");
  return t ? t : ".";
}
static std::string data(const std::string& f) { return top() + "/tests/data/estimator/" + f; }
// The one GPU catalogue: tests read the shipped file (issue 54), never a copy of it.
static std::string shipped_gpus() { return top() + "/etc/crius/gpus.toml"; }

static bool contains(const std::string& hay, const std::string& needle) {
  if (hay.find(needle) != std::string::npos) return true;
  BOOST_TEST_MESSAGE("'" << hay << "' lacks '" << needle << "'");
  return false;
}

static const char* kGpt = R"(family = "transformer"
layers = 24
hidden = 2048
heads = 16
ffn_hidden = 8192
seq_len = 2048
vocab = 51200
dtype = "fp16"
)";

BOOST_AUTO_TEST_CASE(gpu_catalogue_loads_and_matches_names) {
  auto cat = est::GpuCatalog::load(shipped_gpus());
  BOOST_REQUIRE_MESSAGE(cat.ok(), (cat.ok() ? std::string() : cat.error()));
  for (const char* id : {"a100", "a100-80gb", "h100", "h200", "v100", "a40", "a10", "l20", "l40s", "p100"})
    BOOST_TEST(cat->find(id) != nullptr, id);
  BOOST_TEST(cat->find("a100")->memory_gib == 40.0);
  BOOST_TEST(cat->find("a100")->peak_tflops(est::Dtype::fp16) == 312.0);
  BOOST_TEST(cat->match_name("Tesla V100-SXM3-32GB-H").value_or("") == "v100");
  BOOST_TEST(cat->match_name("Tesla V100-SXM2-32GB").value_or("") == "v100");
  BOOST_TEST(cat->match_name("Tesla P100-SXM2-16GB").value_or("") == "p100");
  BOOST_TEST(cat->match_name("NVIDIA A100-SXM4-40GB").value_or("") == "a100");
  BOOST_TEST(cat->match_name("NVIDIA A100-SXM4-80GB").value_or("") == "a100-80gb");
  BOOST_TEST(!cat->match_name("Tesla K40m").has_value());
  auto cm = cat->close_matches("a1000");
  BOOST_TEST(bool(std::find(cm.begin(), cm.end(), "a100") != cm.end()));
}

BOOST_AUTO_TEST_CASE(gpu_catalogue_errors) {
  auto bad_key = est::GpuCatalog::parse("[gpu.x]\nname = \"X\"\nmemory_gib = 40\nmemory_bw_gbs = 1\nmemroy = 3\n"
                                        "tflops = { fp16 = 1.0, fp32 = 1.0 }\n", "g.toml");
  BOOST_REQUIRE(!bad_key.ok());
  BOOST_TEST(contains(bad_key.error(), "g.toml:5:1: unknown key 'memroy' in [gpu.x]"));
  BOOST_TEST(contains(bad_key.error(), "close matches: memory_gib"));
  auto neg = est::GpuCatalog::parse("[gpu.x]\nname = \"X\"\nmemory_gib = -4\nmemory_bw_gbs = 1\n"
                                    "tflops = { fp16 = 1.0, fp32 = 1.0 }\n", "g.toml");
  BOOST_REQUIRE(!neg.ok());
  BOOST_TEST(contains(neg.error(), "g.toml:3:14: key 'memory_gib' in [gpu.x] = -4 is out of range"));
  auto missing = est::GpuCatalog::parse("[gpu.x]\nname = \"X\"\nmemory_gib = 4\nmemory_bw_gbs = 1\n", "g.toml");
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(contains(missing.error(), "missing required key 'tflops' in [gpu.x]"));
  auto syntax = est::GpuCatalog::parse("[gpu.x]\nname = \"X\n", "g.toml");
  BOOST_REQUIRE(!syntax.ok());
  BOOST_TEST(contains(syntax.error(), "g.toml:2:"));
}

BOOST_AUTO_TEST_CASE(model_file_values_and_errors) {
  auto m = est::parse_model(kGpt, "m.toml");
  BOOST_REQUIRE_MESSAGE(m.ok(), (m.ok() ? std::string() : m.error()));
  BOOST_TEST(m->layers == 24);
  BOOST_TEST(m->kv_heads == 16);
  BOOST_TEST(est::to_string(m->optimizer) == "adam");
  auto zero = est::parse_model(std::string(kGpt).replace(std::string(kGpt).find("layers = 24"), 11, "layers = 0"), "m.toml");
  BOOST_REQUIRE(!zero.ok());
  BOOST_TEST(contains(zero.error(), "m.toml:2:10: key 'layers' in model file = 0 is out of range [1, 1024]"));
  auto unknown = est::parse_model(std::string(kGpt) + "hiden = 3\n", "m.toml");
  BOOST_REQUIRE(!unknown.ok());
  BOOST_TEST(contains(unknown.error(), "m.toml:9:1: unknown key 'hiden'"));
  BOOST_TEST(contains(unknown.error(), "close matches: hidden"));
  auto heads = est::parse_model(std::string(kGpt).replace(std::string(kGpt).find("heads = 16"), 10, "heads = 15"), "m.toml");
  BOOST_REQUIRE(!heads.ok());
  BOOST_TEST(contains(heads.error(), "does not divide hidden"));
  auto fam = est::parse_model("family = \"transformr\"\n", "m.toml");
  BOOST_REQUIRE(!fam.ok());
  BOOST_TEST(contains(fam.error(), "m.toml:1:10: key 'family'"));
  BOOST_TEST(contains(fam.error(), "close matches: transformer"));
  auto str_layers = est::parse_model(std::string(kGpt).replace(std::string(kGpt).find("layers = 24"), 11, "layers = \"24\""), "m.toml");
  BOOST_REQUIRE(!str_layers.ok());
  BOOST_TEST(contains(str_layers.error(), "must be an integer"));
  auto moe_missing = est::parse_model(std::string(kGpt).replace(0, 22, "family = \"moe\""), "m.toml");
  BOOST_REQUIRE(!moe_missing.ok());
  BOOST_TEST(contains(moe_missing.error(), "missing required key 'experts'"));
  auto rn = est::parse_model("family = \"wide_resnet\"\ndepth = 50\nwidth_factor = 2\nchannels = 224\nimage_size = 224\n"
                             "classes = 1024\ndtype = \"fp32\"\n", "r.toml");
  BOOST_REQUIRE_MESSAGE(rn.ok(), (rn.ok() ? std::string() : rn.error()));
  BOOST_TEST(rn->layers == 16);
  BOOST_TEST(est::to_string(rn->optimizer) == "sgd");
  auto rn_bad = est::parse_model("family = \"wide_resnet\"\ndepth = 51\nwidth_factor = 2\nchannels = 224\nimage_size = 224\n"
                                 "classes = 1024\ndtype = \"fp32\"\n", "r.toml");
  BOOST_REQUIRE(!rn_bad.ok());
  BOOST_TEST(contains(rn_bad.error(), "r.toml:2:9: key 'depth'"));
  // Dropout and the position embedding: defaults, values, errors naming the key, and both kept
  // through the model spec the SPANK plugin sends to job_submit.
  BOOST_TEST(m->dropout == 0.1);
  BOOST_TEST(!m->rope);
  auto llama = est::parse_model(std::string(kGpt) + "dropout = 0\nposition_embedding = \"rope\"\n", "m.toml");
  BOOST_REQUIRE_MESSAGE(llama.ok(), (llama.ok() ? std::string() : llama.error()));
  BOOST_TEST(llama->dropout == 0.0);
  BOOST_TEST(llama->rope);
  auto again = est::parse_model_spec(est::to_spec(*llama), "spec");
  BOOST_REQUIRE_MESSAGE(again.ok(), (again.ok() ? std::string() : again.error()));
  BOOST_TEST(again->dropout == 0.0);
  BOOST_TEST(again->rope);
  BOOST_TEST(est::to_spec(*again) == est::to_spec(*llama));
  // At their defaults the two keys stay out of the spec: the previous release's job_submit reads it.
  BOOST_TEST(!contains(est::to_spec(*m), "dropout"));
  BOOST_TEST(!contains(est::to_spec(*m), "position_embedding"));
  auto drop1 = est::parse_model(std::string(kGpt) + "dropout = 1\n", "m.toml");
  BOOST_REQUIRE(!drop1.ok());
  BOOST_TEST(contains(drop1.error(), "key 'dropout'"), drop1.error());
  auto dropneg = est::parse_model(std::string(kGpt) + "dropout = -0.1\n", "m.toml");
  BOOST_REQUIRE(!dropneg.ok());
  BOOST_TEST(contains(dropneg.error(), "key 'dropout'"), dropneg.error());
  auto alibi = est::parse_model(std::string(kGpt) + "position_embedding = \"alibi\"\n", "m.toml");
  BOOST_REQUIRE(!alibi.ok());
  BOOST_TEST(contains(alibi.error(), "key 'position_embedding'"), alibi.error());
  BOOST_TEST(contains(alibi.error(), "expected learned or rope"), alibi.error());
}

BOOST_AUTO_TEST_CASE(model_catalogue_and_resolve) {
  auto cat = est::ModelCatalog::load(data("models.toml"));
  BOOST_REQUIRE_MESSAGE(cat.ok(), (cat.ok() ? std::string() : cat.error()));
  for (const char* id : {"bert__1.3B", "moe__10B", "wide_resnet__2B", "gpt3-175b", "gpt3-125m"})
    BOOST_TEST(cat->find(id) != nullptr, id);
  auto unknown = cat->resolve("bert__1.3b");
  BOOST_REQUIRE(!unknown.ok());
  BOOST_TEST(contains(unknown.error(), "unknown model 'bert__1.3b'"));
  BOOST_TEST(contains(unknown.error(), "bert__1.3B"));
  auto p = cat->find("gpt3-175b")->parameters();
  BOOST_TEST(p > 174e9);
  BOOST_TEST(p < 176e9);
  auto w = cat->find("wide_resnet__2B")->parameters();
  BOOST_TEST(w > 1.5e9);
  BOOST_TEST(w < 2.5e9);
  auto missing_file = cat->resolve("/nonexistent/model.toml");
  BOOST_REQUIRE(!missing_file.ok());
  BOOST_TEST(contains(missing_file.error(), "/nonexistent/model.toml: cannot open file"));
}

static std::string write(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("crius-est-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(shipped_gpus(), dir / "gpus.toml", fs::copy_options::overwrite_existing);
  fs::copy_file(data("models.toml"), dir / "models.toml", fs::copy_options::overwrite_existing);
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

static const char* kPart = "[[partition]]\nname = \"p\"\ngpu = \"a100\"\nnodes = 2\ngpus_per_node = 4\n"
                           "intra_node_bw_gbs = 300\ninter_node_bw_gbs = 25\ninter_node_latency_us = 5\n";

BOOST_AUTO_TEST_CASE(cluster_file) {
  auto ok = est::load_cluster(write("c.toml", std::string(kPart) + "[job_submit]\nobjective = \"efficiency\"\n[criusd]\nx = 1\n"));
  BOOST_REQUIRE_MESSAGE(ok.ok(), (ok.ok() ? std::string() : ok.error()));
  BOOST_TEST(ok->partitions.size() == 1u);
  BOOST_TEST(ok->find_partition("p")->gpus_per_node == 4);
  BOOST_TEST(ok->table["job_submit"]["objective"].value_or(std::string()) == "efficiency");
  BOOST_TEST(ok->models.find("gpt3-175b") != nullptr);  // catalogues found beside the file

  // Tables no component reads are errors ([scheduler] and [spank] were documented once).
  for (const char* unread : {"[scheduler]\n", "[spank]\n"}) {
    auto u = est::load_cluster(write("c.toml", std::string(kPart) + unread));
    BOOST_TEST(!u.ok(), unread);
  }
  // [launch]: crius-launch's progress interval, bounded and named in errors.
  BOOST_TEST(ok->progress_interval_s == 1200);
  auto launch = est::load_cluster(write("c.toml", std::string(kPart) + "[launch]\nprogress_interval_s = 60\n"));
  BOOST_REQUIRE_MESSAGE(launch.ok(), (launch.ok() ? std::string() : launch.error()));
  BOOST_TEST(launch->progress_interval_s == 60);
  for (const char* bad_launch : {"[launch]\nprogress_interval_s = 0\n", "[launch]\nprogress_interval_s = \"60\"\n",
                                 "[launch]\nprogress_interval = 60\n", "launch = 60\n"}) {
    auto b = est::load_cluster(write("c.toml", std::string(kPart) + bad_launch));
    BOOST_TEST(!b.ok(), bad_launch);
    if (!b.ok()) BOOST_TEST((contains(b.error(), "progress_interval") || contains(b.error(), "'launch'")), b.error());
  }
  auto path = write("c.toml", std::string(kPart) + "[bogus]\n");
  auto bad = est::load_cluster(path);
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(contains(bad.error(), path + ":9:2: unknown key 'bogus' in the cluster file"));

  std::string huge(kPart);
  huge.replace(huge.find("nodes = 2"), 9, "nodes = 1000000000000");
  auto absurd = est::load_cluster(write("c.toml", huge));
  BOOST_REQUIRE(!absurd.ok());
  BOOST_TEST(contains(absurd.error(), ":4:9: key 'nodes' in [[partition]] 'p' = 1000000000000 is out of range"));

  std::string gpu(kPart);
  gpu.replace(gpu.find("\"a100\""), 6, "\"a1000\"");
  auto unknown = est::load_cluster(write("c.toml", gpu));
  BOOST_REQUIRE(!unknown.ok());
  BOOST_TEST(contains(unknown.error(), ":3:7: key 'gpu' in [[partition]] 'p' = \"a1000\" is not in the GPU catalogue"));
  BOOST_TEST(contains(unknown.error(), "(close matches: "));
  BOOST_TEST(contains(unknown.error(), "(close matches: a100, "));

  std::string typo(kPart);
  typo.replace(typo.find("gpus_per_node"), 13, "gpu_per_node");
  auto t = est::load_cluster(write("c.toml", typo));
  BOOST_REQUIRE(!t.ok());
  BOOST_TEST(contains(t.error(), ":5:1: unknown key 'gpu_per_node' in [[partition]] #1 (close matches: gpus_per_node"));

  auto none = est::load_cluster(write("c.toml", "gpus = \"nope.toml\"\n"));
  BOOST_REQUIRE(!none.ok());
  BOOST_TEST(contains(none.error(), ":1:8: key 'gpus' in the cluster file = \"nope.toml\": no such file"));

  auto missing = est::load_cluster("/nonexistent/crius.toml");
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(contains(missing.error(), "/nonexistent/crius.toml: cannot open file"));
}

BOOST_AUTO_TEST_CASE(calibration_table) {
  auto t = est::CommTable::parse("op,nodes,gpus_per_node,group_size,nodes_per_group,bytes,time_s\n"
                                 "all-reduce,1,2,2,1,1000,1e-3\nall-reduce,1,2,2,1,100000,1e-1\n", "c.csv");
  BOOST_REQUIRE_MESSAGE(t.ok(), (t.ok() ? std::string() : t.error()));
  // log-log interpolation: halfway in log(bytes) -> geometric mean of times
  BOOST_TEST(t->time_s(est::CommOp::all_reduce, 2, 1, 10000).value_or(0) == 1e-2, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(t->time_s(est::CommOp::all_reduce, 2, 1, 200000).value_or(0) == 2e-1, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(!t->time_s(est::CommOp::all_gather, 2, 1, 10000).has_value());
  BOOST_TEST((t->allocations() == std::vector<std::pair<int, int>>{{1, 2}}));
  auto shapeless = est::CommTable::parse("op,group_size,nodes_per_group,bytes,time_s\nsend,2,1,8,1e-6\n", "c.csv");
  BOOST_REQUIRE(shapeless.ok());
  BOOST_TEST(shapeless->allocations().empty());
  auto bad = est::CommTable::parse("op,group_size,nodes_per_group,bytes,time_s\nall-reduce,2,1,-5,1\n", "c.csv");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(contains(bad.error(), "c.csv:2:4: column 'bytes' must be a number in (0, 1e15]"));
  auto hdr = est::CommTable::parse("op,bytes,time_s\n", "c.csv");
  BOOST_REQUIRE(!hdr.ok());
  BOOST_TEST(contains(hdr.error(), "c.csv:1:1: calibration header lacks column 'group_size'"));
  auto real = est::CommTable::load(top() + "/etc/crius/calibration/nccl-a100.csv");
  if (fs::exists(top() + "/etc/crius/calibration/nccl-a100.csv")) {
    BOOST_REQUIRE_MESSAGE(real.ok(), (real.ok() ? std::string() : real.error()));
    BOOST_TEST(real->time_s(est::CommOp::all_reduce, 4, 1, 1e8).has_value());
  }
}

BOOST_AUTO_TEST_CASE(uncalibrated_gpu_types_follow_the_datasheet_rule) {
  // x and y are calibrated; x has a plain fp32 peak (a tenth of fp16), y a dual-issue one
  // (a quarter). z and w are not: their GEMM efficiency is the mean of x's and y's, their
  // fp32 efficiency that of the calibrated type of their own fp32 class.
  auto cat = est::GpuCatalog::parse(R"(
[gpu.x]
name = "X"
memory_gib = 80
memory_bw_gbs = 2000
tflops = { fp16 = 100.0, fp32 = 10.0 }
gemm_efficiency = 0.8
fp32_efficiency = 0.5
[gpu.y]
name = "Y"
memory_gib = 48
memory_bw_gbs = 700
tflops = { fp16 = 100.0, fp32 = 25.0 }
gemm_efficiency = 0.6
fp32_efficiency = 0.2
memory_efficiency = 0.9
[gpu.z]
name = "Z"
memory_gib = 80
memory_bw_gbs = 3000
tflops = { fp16 = 400.0, fp32 = 30.0 }
[gpu.w]
name = "W"
memory_gib = 48
memory_bw_gbs = 800
tflops = { fp16 = 300.0, fp32 = 90.0 }
)",
                                    "test");
  BOOST_TEST_REQUIRE(cat.ok(), (cat.ok() ? "" : cat.error()));
  const est::ConstantSources x = est::constant_sources(*cat, *cat->find("x"));
  BOOST_TEST(x.gemm.calibrated);
  BOOST_TEST(x.gemm.value == 0.8);
  BOOST_TEST(!x.memory.calibrated);
  BOOST_TEST(x.memory.value == 0.9);  // y's, the only calibrated memory efficiency
  const est::ConstantSources z = est::constant_sources(*cat, *cat->find("z"));
  BOOST_TEST(!z.gemm.calibrated);
  BOOST_TEST(z.gemm.value == 0.7, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(z.fp32.value == 0.5);
  BOOST_TEST((z.fp32.from == std::vector<std::string>{"x"}));
  const est::ConstantSources w = est::constant_sources(*cat, *cat->find("w"));
  BOOST_TEST(w.fp32.value == 0.2);
  BOOST_TEST((w.fp32.from == std::vector<std::string>{"y"}));
  BOOST_TEST(est::describe(w.fp32) == "0.2 (uncalibrated: datasheet rule, the mean of y)");
  BOOST_TEST(est::describe(x.gemm) == "0.8 (calibrated)");
  // The estimator uses them.
  const est::CostConstants c = est::cost_constants(*cat, *cat->find("w"), est::Runtime::megatron);
  BOOST_TEST(c.gemm_efficiency == 0.7, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(c.fp32_efficiency == 0.2);

  // No calibrated type at all: the generic defaults, said so.
  auto alone = est::GpuCatalog::parse("[gpu.q]\nname = \"Q\"\nmemory_gib = 16\nmemory_bw_gbs = 900\n"
                                      "tflops = { fp16 = 100.0, fp32 = 10.0 }\n",
                                      "test");
  BOOST_TEST_REQUIRE(alone.ok());
  const est::ConstantSources q = est::constant_sources(*alone, *alone->find("q"));
  BOOST_TEST(q.gemm.value == est::CostConstants{}.gemm_efficiency);
  BOOST_TEST(est::describe(q.gemm).find("the generic default") != std::string::npos);
}

// With generations and memory technologies named, the rule takes the nearest calibrated types:
// the same memory technology where one has the value, then the nearest compute capability major.
BOOST_AUTO_TEST_CASE(the_datasheet_rule_takes_the_nearest_generation_and_memory) {
  auto gpu = [](const char* id, const char* cc, const char* mem, const char* more) {
    std::string t = std::string("[gpu.") + id + "]\nname = \"" + id + "\"\nmemory_gib = 80\nmemory_bw_gbs = 2000\n" +
                    "tflops = { fp16 = 300.0, fp32 = 20.0 }\n";
    if (*cc) t += std::string("compute_capability = ") + cc + "\n";
    if (*mem) t += std::string("memory_type = \"") + mem + "\"\n";
    return t + more;
  };
  auto cat = est::GpuCatalog::parse(gpu("ampere", "8.0", "HBM2e", "gemm_efficiency = 0.7\nmemory_efficiency = 0.6\n") +
                                        gpu("hopper", "9.0", "HBM3", "gemm_efficiency = 0.8\nmemory_efficiency = 0.9\n") +
                                        gpu("ga102", "8.6", "GDDR6", "gemm_efficiency = 0.5\n") +
                                        gpu("ada", "8.9", "gddr6", "") + gpu("h200ish", "9.0", "HBM3e", "") +
                                        gpu("pascal", "6.0", "HBM2", "") + gpu("nameless", "", "", ""),
                                    "test");
  BOOST_TEST_REQUIRE(cat.ok(), (cat.ok() ? "" : cat.error()));
  auto sources = [&](const char* id) { return est::constant_sources(*cat, *cat->find(id)); };
  const est::ConstantSources ada = sources("ada");
  BOOST_TEST(ada.gemm.value == 0.5);  // GDDR6 beside it, not the mean of all three
  BOOST_TEST((ada.gemm.from == std::vector<std::string>{"ga102"}));
  BOOST_TEST(ada.memory.value == 0.6);  // no GDDR type has one: the nearest generation of any
  BOOST_TEST((ada.memory.from == std::vector<std::string>{"ampere"}));
  BOOST_TEST(sources("h200ish").gemm.value == 0.8);
  BOOST_TEST(sources("h200ish").memory.value == 0.9);
  BOOST_TEST((sources("pascal").gemm.from == std::vector<std::string>{"ampere"}));  // HBM, 2 generations off
  BOOST_TEST(sources("nameless").gemm.value == (0.7 + 0.8 + 0.5) / 3, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(est::describe(ada.gemm) == "0.5 (uncalibrated: datasheet rule, the mean of ga102)");

  auto bad = est::GpuCatalog::parse(gpu("x", "8.0", "LPDDR5", ""), "g.toml");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(contains(bad.error(), "memory_type"), bad.error());
  BOOST_TEST(contains(bad.error(), "HBM or GDDR"), bad.error());
  auto bad_cc = est::GpuCatalog::parse(gpu("x", "0.5", "HBM3", ""), "g.toml");
  BOOST_TEST(!bad_cc.ok());
  // The overlap's counts: each out of range is refused, naming its key.
  for (const auto& [text, key] : {std::pair{gpu("x", "9.0", "HBM3", "sm_count = 0\n"), "sm_count"},
                                  std::pair{gpu("x", "9.0", "HBM3", "") + "[runtime.megatron-core]\ntp_comm_splits = 0\n",
                                            "tp_comm_splits"},
                                  std::pair{gpu("x", "9.0", "HBM3", "") + "[runtime.megatron-core]\ntp_comm_sms = -1\n",
                                            "tp_comm_sms"}}) {
    auto r = est::GpuCatalog::parse(text, "g.toml");
    BOOST_TEST_REQUIRE(!r.ok(), key);
    BOOST_TEST(contains(r.error(), key), r.error());
  }

  // The shipped catalogue: the Ada boards take the GA102 boards' GEMM constant, the P100 the V100's,
  // and every fitted type its own memory efficiency.
  auto shipped = est::GpuCatalog::load(shipped_gpus());
  BOOST_TEST_REQUIRE(shipped.ok(), (shipped.ok() ? "" : shipped.error()));
  const est::ConstantSources l40s = est::constant_sources(*shipped, *shipped->find("l40s"));
  BOOST_TEST((l40s.gemm.from == std::vector<std::string>{"a10", "a40"}));
  BOOST_TEST((est::constant_sources(*shipped, *shipped->find("p100")).gemm.from == std::vector<std::string>{"v100"}));
  for (const char* id : {"a100", "a100-80gb", "v100", "a40", "a10", "h100", "h200"})
    BOOST_TEST(est::constant_sources(*shipped, *shipped->find(id)).memory.calibrated, id);
}

BOOST_AUTO_TEST_CASE(a_calibration_file_over_the_catalogue) {
  // gpus = [catalogue, calibration]: the calibration's a100 replaces the catalogue's, its new
  // type is added, the others stay.
  write("cal.toml",
        "[gpu.a100]\nname = \"A100 as measured\"\nmemory_gib = 40\nmemory_bw_gbs = 1400\n"
        "tflops = { fp16 = 312.0, fp32 = 19.5 }\ngemm_efficiency = 0.61\n"
        "[gpu.box]\nname = \"Box\"\nmemory_gib = 8\nmemory_bw_gbs = 100\ntflops = { fp16 = 10.0, fp32 = 5.0 }\n");
  auto c = est::load_cluster(write("c.toml", "gpus = [\"gpus.toml\", \"cal.toml\"]\n" + std::string(kPart)));
  BOOST_REQUIRE_MESSAGE(c.ok(), (c.ok() ? std::string() : c.error()));
  BOOST_TEST(c->gpus.find("a100")->gemm_efficiency == 0.61);
  BOOST_TEST(c->gpus.find("a100")->memory_bw_gbs == 1400);
  BOOST_TEST(c->gpus.find("box") != nullptr);
  BOOST_TEST(c->gpus.find("v100") != nullptr);
  BOOST_TEST(contains(c->gpus.source(), "cal.toml"));
  auto missing = est::load_cluster(write("c.toml", "gpus = [\"gpus.toml\", \"nothere.toml\"]\n" + std::string(kPart)));
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(contains(missing.error(), "nothere.toml\": no such file"), missing.error());
  auto empty = est::load_cluster(write("c.toml", "gpus = []\n" + std::string(kPart)));
  BOOST_REQUIRE(!empty.ok());
  BOOST_TEST(contains(empty.error(), "must name at least one file"), empty.error());
}

BOOST_AUTO_TEST_CASE(moe_gshard_dispatch_costs_its_einsums) {
  const std::string moe = std::string(kGpt).replace(0, 22, "family = \"moe\"") +
                          "experts = 16\nexpert_every = 2\ncapacity_factor = 1.0\ntop_k = 2\n";
  auto gather = est::parse_model(moe, "m.toml");
  auto gshard = est::parse_model(moe + "expert_group_size = 2048\n", "m.toml");
  BOOST_REQUIRE_MESSAGE(gather.ok(), (gather.ok() ? std::string() : gather.error()));
  BOOST_REQUIRE_MESSAGE(gshard.ok(), (gshard.ok() ? std::string() : gshard.error()));
  BOOST_TEST(gather->expert_group_size == 0);
  BOOST_TEST(gshard->expert_group_size == 2048);
  // Dispatch and combine, 2 k cf S h FLOPs per token each, on every expert layer; forward and
  // backward (x3), no recompute.
  const double s = gshard->seq_len, h = gshard->hidden, expert_layers = gshard->layers / 2, batch = 8;
  const double extra = 3 * expert_layers * 2 * (2 * s * 2 * 1.0 * 2048 * h) * batch;
  const double d = est::iteration_flops(*gshard, 8, est::Recompute::none) -
                   est::iteration_flops(*gather, 8, est::Recompute::none);
  BOOST_TEST(d == extra, boost::test_tools::tolerance(1e-9));
  auto bad = est::parse_model(moe + "expert_group_size = -1\n", "m.toml");
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(contains(bad.error(), "key 'expert_group_size'"), bad.error());
}
