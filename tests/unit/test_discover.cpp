// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-discover's library: hwloc reading on the real topology exports in
// tests/data/hwloc, naming, summaries, outputs and merge.
#define BOOST_TEST_MODULE discover
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <toml++/toml.h>

#include "estimator/discover/topology.h"
#include "estimator/estimator.h"

namespace fs = std::filesystem;
namespace est = crius::estimator;
using namespace crius::estimator::discover;

namespace {

std::string top() {
  const char* t = std::getenv("TOP");
  return t ? t : ".";
}
std::string data(const std::string& f) { return top() + "/tests/data/hwloc/" + f; }

const est::GpuCatalog& catalog() {
  static est::GpuCatalog cat = [] {
    auto c = est::GpuCatalog::load(top() + "/etc/crius/gpus.toml");
    if (!c) throw std::runtime_error(c.error());
    return std::move(*c);
  }();
  return cat;
}

Topology load(const std::string& file, const std::map<std::string, std::string>& overrides = {}) {
  auto t = read_topology(data(file));
  BOOST_TEST_REQUIRE(t.ok(), (t.ok() ? "" : t.error()));
  assign_names(
      *t, [](std::string_view raw) { return catalog().match_name(raw); }, overrides,
      [](std::string_view id) -> std::optional<double> {
        const est::GpuType* g = catalog().find(id);
        return g ? std::optional<double>(g->memory_gib) : std::nullopt;
      });
  return std::move(*t);
}

std::string scratch(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("crius-test-discover-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

}  // namespace

BOOST_AUTO_TEST_CASE(dgx2_sixteen_v100_in_one_nvswitch_domain) {
  Topology t = load("nvidiaDGX2.xml");
  BOOST_TEST(t.gpus.size() == 16u);
  std::set<std::string> busids;
  for (const Gpu& g : t.gpus) {
    BOOST_TEST(g.gpu == "v100");
    BOOST_TEST(g.model == "Tesla V100-SXM3-32GB-H");
    BOOST_TEST(g.backends == std::vector<std::string>{"NVML"});  // CoProc without subtype, Backend=NVML
    BOOST_TEST(g.memory_gib == 32.0);
    BOOST_TEST(g.memory_source == "catalogue");
    BOOST_TEST(g.nvlink_gbs == 150.0);  // 6 links x 25 GB/s
    BOOST_TEST(g.nvlink_domain == 0);
    BOOST_TEST(g.numa_node == (g.index < 8 ? 0 : 1));
    BOOST_TEST(g.package == (g.index < 8 ? 0 : 1));
    busids.insert(g.pci_busid);
  }
  BOOST_TEST(busids.size() == 16u);
  BOOST_TEST(t.gpus[0].pci_busid == "0000:34:00.0");
  BOOST_TEST(t.gpus[15].pci_busid == "0000:e7:00.0");
  BOOST_TEST_REQUIRE(t.domains.size() == 1u);
  BOOST_TEST(t.domains[0].gpus.size() == 16u);
  BOOST_TEST(t.domains[0].nvswitches == 12);
  BOOST_TEST(t.domains[0].nvswitch_groups == 2);  // two baseboards, joined
  BOOST_TEST(t.domains[0].bandwidth_gbs == 150.0);
  BOOST_TEST(t.numa.size() == 2u);
  BOOST_TEST(t.warnings.empty());

  auto s = summarize(t);
  BOOST_TEST_REQUIRE(s.ok());
  BOOST_TEST(s->gpu == "v100");
  BOOST_TEST(s->gpus_per_node == 16);
  BOOST_TEST(s->nvlink_domain == 16);
  BOOST_TEST(s->intra_node_bw_gbs.value_or(0) == 150.0);
  BOOST_TEST(s->intra_node_link == "nvswitch");
  BOOST_TEST(s->numa_nodes == 2);
}

BOOST_AUTO_TEST_CASE(power8_four_p100_in_nvlink_pairs_with_the_cpu) {
  Topology t = load("power8gpudistances.xml");
  BOOST_TEST_REQUIRE(t.gpus.size() == 4u);  // 12 OS devices (cuda, opencl, nvml) on 4 PCI devices
  for (const Gpu& g : t.gpus) {
    BOOST_TEST(g.gpu == "p100");
    BOOST_TEST(g.os_devices.size() == 3u);
    BOOST_TEST((g.backends == std::vector<std::string>{"CUDA", "NVML", "OpenCL"}));
    BOOST_TEST(g.memory_source == "cuda");
    BOOST_TEST(g.memory_gib == 15.899, boost::test_tools::tolerance(1e-9));
    BOOST_TEST(g.nvlink_gbs == 40.0);
    BOOST_TEST(g.cpu_nvlink_gbs == 40.0);
    BOOST_TEST(g.numa_node == (g.index < 2 ? 0 : 1));
  }
  BOOST_TEST_REQUIRE(t.domains.size() == 2u);
  BOOST_TEST((t.domains[0].gpus == std::vector<int>{0, 1}));
  BOOST_TEST((t.domains[1].gpus == std::vector<int>{2, 3}));
  BOOST_TEST((t.domains[0].cpu_packages == std::vector<int>{0}));
  BOOST_TEST((t.domains[1].cpu_packages == std::vector<int>{1}));
  BOOST_TEST(t.domains[0].nvswitches == 0);
  auto s = summarize(t);
  BOOST_TEST_REQUIRE(s.ok());
  BOOST_TEST(s->nvlink_domain == 2);
  BOOST_TEST(s->intra_node_bw_gbs.value_or(0) == 40.0);
  BOOST_TEST(s->intra_node_link == "nvlink");
  BOOST_TEST(node_name(t, "") == "drac-12");
  BOOST_TEST(node_name(t, "gpu7") == "gpu7");
}

BOOST_AUTO_TEST_CASE(k40m_is_unknown_and_others_ignored) {
  Topology t = load("32em64t-2n8c2t-pci-wholeio.xml");
  BOOST_TEST_REQUIRE(t.gpus.size() == 1u);
  const Gpu& g = t.gpus[0];
  BOOST_TEST(g.gpu == "unknown");
  BOOST_TEST(g.model == "Tesla K40m");
  BOOST_TEST((g.os_devices == std::vector<std::string>{"cuda0", "card0"}));
  BOOST_TEST(g.memory_gib == 11.25);
  BOOST_TEST(g.numa_node == 1);
  BOOST_TEST(t.domains.empty());
  // the AMD OpenCL device and two M2075 PCI devices without OS device
  BOOST_TEST(t.ignored.size() == 3u);
  BOOST_TEST(t.warnings.size() == 2u);
  bool warned = false;
  for (const auto& w : t.warnings) warned = warned || w.find("'Tesla K40m' is not in the GPU catalogue") != std::string::npos;
  BOOST_TEST(warned);
  // NICs: ConnectX-4 with ib0 + mlx5_0 as one InfiniBand adapter, two Ethernet ports
  BOOST_TEST_REQUIRE(t.nics.size() == 3u);
  BOOST_TEST((t.nics[0].os_devices == std::vector<std::string>{"ib0", "mlx5_0"}));
  BOOST_TEST(t.nics[0].kind == "infiniband");
  BOOST_TEST(t.nics[1].kind == "ethernet");
  auto s = summarize(t);
  BOOST_TEST_REQUIRE(s.ok());
  BOOST_TEST(!s->intra_node_bw_gbs.has_value());  // PCIe link speed 0 in this export
  BOOST_TEST(s->intra_node_link == "pcie");

  // the override table names it
  Topology o = load("32em64t-2n8c2t-pci-wholeio.xml", {{"tesla k40M", "a10"}});
  BOOST_TEST(o.gpus[0].gpu == "a10");
  BOOST_TEST(o.gpus[0].name_source == "override");
}

BOOST_AUTO_TEST_CASE(no_nvidia_gpu) {
  Topology t = load("96em64t-4n4d3ca2co-pci.xml");
  BOOST_TEST(t.gpus.empty());
  BOOST_TEST_REQUIRE(t.ignored.size() == 1u);
  BOOST_TEST(t.ignored[0].os_device == "card0");
  BOOST_TEST(t.numa.size() == 4u);
  auto s = summarize(t);
  BOOST_TEST_REQUIRE(s.ok());
  BOOST_TEST(s->gpus_per_node == 0);
}

BOOST_AUTO_TEST_CASE(synthetic_hgx_nodes) {
  Topology a = load("hgx-a100-8gpu.xml");
  BOOST_TEST_REQUIRE(a.gpus.size() == 8u);
  BOOST_TEST(a.gpus[0].gpu == "a100");
  BOOST_TEST(a.gpus[0].memory_source == "cuda");
  BOOST_TEST(a.gpus[0].numa_node == 3);
  BOOST_TEST(a.gpus[2].numa_node == 1);
  BOOST_TEST(a.domains.size() == 1u);
  BOOST_TEST(a.domains[0].nvswitches == 6);
  BOOST_TEST(a.nics.size() == 9u);
  Topology h = load("hgx-h100-8gpu.xml");
  BOOST_TEST_REQUIRE(h.gpus.size() == 8u);
  BOOST_TEST(h.gpus[7].gpu == "h100");
  BOOST_TEST(h.gpus[7].memory_source == "catalogue");
  BOOST_TEST(h.gpus[7].nvlink_gbs == 450.0);
  auto s = summarize(h);
  BOOST_TEST_REQUIRE(s.ok());
  BOOST_TEST(s->nvlink_domain == 8);
  BOOST_TEST(s->numa_nodes == 2);
}

BOOST_AUTO_TEST_CASE(mixed_models_are_refused) {
  Topology t;
  t.gpus.resize(3);
  t.gpus[0].gpu = t.gpus[1].gpu = "a100";
  t.gpus[2].gpu = "unknown";
  t.gpus[2].model = "Tesla K40m";
  auto s = summarize(t);
  BOOST_TEST_REQUIRE(!s.ok());
  BOOST_TEST(s.error().find("2 models (2 x a100, 1 x unknown 'Tesla K40m')") != std::string::npos, s.error());
}

BOOST_AUTO_TEST_CASE(bad_xml_inputs) {
  auto missing = check_xml_file("/nonexistent/x.xml");
  BOOST_TEST_REQUIRE(!missing.ok());
  BOOST_TEST(missing.error().find("/nonexistent/x.xml: cannot open") == 0);
  auto text = check_xml_file(scratch("a.txt", "hello\n"));
  BOOST_TEST(text.error().find("not an XML file") != std::string::npos);
  auto other = check_xml_file(scratch("b.xml", "<?xml version=\"1.0\"?>\n<html/>\n"));
  BOOST_TEST(other.error().find("without a <topology> root") != std::string::npos);
  auto v3_head = check_xml_file(scratch("c.xml", "<?xml version=\"1.0\"?>\n<!DOCTYPE topology>\n<topology version=\"3.0\">\n"));
  BOOST_TEST_REQUIRE(v3_head.ok());
  BOOST_TEST(v3_head->major == 3);
  BOOST_TEST(v3_head->line == 3u);
  // Unreadable for every hwloc; the message names the format either way.
  auto v3 = read_topology(scratch("c.xml", "<?xml version=\"1.0\"?>\n<!DOCTYPE topology>\n<topology version=\"3.0\">\n"));
  BOOST_TEST_REQUIRE(!v3.ok());
  BOOST_TEST(v3.error().find("c.xml:3: hwloc XML format 3.0") != std::string::npos, v3.error());
  BOOST_TEST(v3.error().find("--export-xml-flags v2") != std::string::npos);
  BOOST_TEST(check_xml_file(data("nvidiaDGX2.xml")).ok());
  auto truncated = read_topology(scratch("d.xml", "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type="));
  BOOST_TEST_REQUIRE(!truncated.ok());
  BOOST_TEST(truncated.error().find("cannot import this XML") != std::string::npos, truncated.error());
}

BOOST_AUTO_TEST_CASE(toml_helpers) {
  BOOST_TEST(toml_number(150.0) == "150.0");
  BOOST_TEST(toml_number(15.753846) == "15.754");
  BOOST_TEST(toml_number(0.5) == "0.5");
  BOOST_TEST(toml_string("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"");
}

BOOST_AUTO_TEST_CASE(toml_partition_loads_as_a_cluster_file) {
  Topology t = load("nvidiaDGX2.xml");
  auto s = summarize(t);
  BOOST_TEST_REQUIRE(s.ok());
  std::string text = "gpus = " + toml_string(top() + "/etc/crius/gpus.toml") + "\nmodels = " +
                     toml_string(top() + "/etc/crius/models.toml") + "\n" + to_toml(t, *s, "dgx2", "big") +
                     "inter_node_bw_gbs = 100.0\ninter_node_latency_us = 5.0\n";
  std::string path = scratch("crius.toml", text);
  auto c = est::load_cluster(path);
  BOOST_TEST_REQUIRE(c.ok(), (c.ok() ? "" : c.error()));
  const est::Partition* p = c->find_partition("big");
  BOOST_TEST_REQUIRE(p != nullptr);
  BOOST_TEST(p->gpu == "v100");
  BOOST_TEST(p->nodes == 1);
  BOOST_TEST(p->gpus_per_node == 16);
  BOOST_TEST(p->intra_node_bw_gbs == 150.0);
  BOOST_TEST(p->nvlink_domain == 16);
  BOOST_TEST(p->numa_nodes == 2);
}

BOOST_AUTO_TEST_CASE(slurm_lines) {
  Topology t = load("nvidiaDGX2.xml");
  auto s = summarize(t);
  BOOST_TEST_REQUIRE(s.ok());
  std::string out = to_slurm(t, *s, "dgx-1", false);
  BOOST_TEST(out.find("NodeName=dgx-1 CPUs=4 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=1 "
                      "RealMemory=1546833 Gres=gpu:v100:16 Feature=v100\n") != std::string::npos, out);
  BOOST_TEST(out.find("NodeName=dgx-1 Name=gpu Type=v100 File=/dev/nvidia[0-15]\n") != std::string::npos, out);
  std::string cores = to_slurm(t, *s, "dgx-1", true);
  BOOST_TEST(cores.find("File=/dev/nvidia[0-7] Cores=0-1\n") != std::string::npos, cores);
  BOOST_TEST(cores.find("File=/dev/nvidia[8-15] Cores=2-3\n") != std::string::npos, cores);
  Topology k = load("32em64t-2n8c2t-pci-wholeio.xml");
  auto ks = summarize(k);
  std::string untyped = to_slurm(k, *ks, "conan", false);
  BOOST_TEST(untyped.find("Gres=gpu:1\n") != std::string::npos, untyped);
  BOOST_TEST(untyped.find("NodeName=conan Name=gpu File=/dev/nvidia0\n") != std::string::npos, untyped);
}

BOOST_AUTO_TEST_CASE(merge_agreeing_and_disagreeing_nodes) {
  Topology d = load("nvidiaDGX2.xml"), p = load("power8gpudistances.xml");
  auto ds = summarize(d), ps = summarize(p);
  std::vector<MergeInput> same = {{"a.json", nlohmann::json::parse(to_json(d, *ds, "dgx-a", "").dump())},
                                  {"b.json", nlohmann::json::parse(to_json(d, *ds, "dgx-b", "").dump())}};
  auto ok = merge_partition(same, {"v100", 100.0, 5.0});
  BOOST_TEST_REQUIRE(ok.ok(), (ok.ok() ? "" : ok.error()));
  auto parsed = toml::parse(*ok);
  BOOST_TEST(parsed["partition"][0]["nodes"].value_or(0) == 2);
  BOOST_TEST(parsed["partition"][0]["gpus_per_node"].value_or(0) == 16);
  BOOST_TEST(parsed["partition"][0]["inter_node_bw_gbs"].value_or(0.0) == 100.0);
  BOOST_TEST(ok->find("PartitionName=v100 Nodes=dgx-a,dgx-b") != std::string::npos);
  auto c = est::load_cluster(scratch("merged.toml", "gpus = " + toml_string(top() + "/etc/crius/gpus.toml") +
                                                        "\nmodels = " + toml_string(top() + "/etc/crius/models.toml") +
                                                        "\n" + *ok));
  BOOST_TEST_REQUIRE(c.ok(), (c.ok() ? "" : c.error()));
  BOOST_TEST(c->find_partition("v100")->nodes == 2);
  BOOST_TEST(c->find_partition("v100")->inter_node_latency_us == 5.0);

  std::vector<MergeInput> mixed = same;
  mixed.push_back({"c.json", nlohmann::json::parse(to_json(p, *ps, "power8", "").dump())});
  auto bad = merge_partition(mixed, {"v100", {}, {}});
  BOOST_TEST_REQUIRE(!bad.ok());
  const std::string& e = bad.error();
  BOOST_TEST(e.find("gpu: p100 on power8 (c.json); v100 on dgx-a (a.json), dgx-b (b.json)") != std::string::npos, e);
  BOOST_TEST(e.find("gpus_per_node: 16 on dgx-a (a.json), dgx-b (b.json); 4 on power8 (c.json)") != std::string::npos, e);
  BOOST_TEST(e.find("nvlink_domain:") != std::string::npos);
  BOOST_TEST(e.find("numa_nodes:") == std::string::npos);  // both have 2

  std::vector<MergeInput> dup = {same[0], same[0]};
  BOOST_TEST(merge_partition(dup, {"v100", {}, {}}).error().find("appears twice") != std::string::npos);
  std::vector<MergeInput> junk = {{"x.json", nlohmann::json::parse("{\"a\": 1}")}};
  BOOST_TEST(merge_partition(junk, {"v100", {}, {}}).error().find("not a crius-discover node description") !=
             std::string::npos);
}
