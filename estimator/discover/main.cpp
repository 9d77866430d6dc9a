// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-discover: describe a GPU node for crius.toml and slurm.conf from its
// hwloc topology.  See crius-discover(1).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <hwloc.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "common/util.h"
#include "estimator/discover/topology.h"
#include "estimator/estimator.h"
#include "estimator/toml_util.h"

namespace fs = std::filesystem;
namespace est = crius::estimator;
namespace disc = crius::estimator::discover;

namespace {

constexpr const char* kProg = "crius-discover";

int fail(int code, const std::string& msg) {
  std::cerr << kProg << ": " << msg << "\n";
  return code;
}

struct Naming {
  est::GpuCatalog catalog;
  std::map<std::string, std::string> overrides;
};

// The catalogue: --gpus, else the config file's `gpus` key (relative to it),
// else gpus.toml beside the config file, else <sysconfdir>/crius/gpus.toml.
// Then the [discover.gpu_names] table of --config.
crius::Result<Naming> load_naming(const std::string& gpus_opt, const std::string& config) {
  std::optional<toml::table> cfg;
  if (!config.empty()) {
    auto text = est::detail::read_file(config);
    if (!text) return crius::make_error(text.error());
    auto t = est::detail::parse_toml(*text, config);
    if (!t) return crius::make_error(t.error());
    cfg = std::move(*t);
  }
  std::string path = gpus_opt;
  if (path.empty() && cfg) {
    fs::path dir = fs::path(config).parent_path();
    if (auto g = (*cfg)["gpus"]) {
      if (!g.is_string())
        return crius::make_error(est::detail::where(config, g.node()->source()) + ": key 'gpus' must be a string");
      path = (dir / g.value<std::string>().value()).lexically_normal().string();
    } else if (fs::exists(dir / "gpus.toml")) {
      path = (dir / "gpus.toml").string();
    }
  }
  if (path.empty()) path = est::default_config_dir() + "/gpus.toml";
  auto cat = est::GpuCatalog::load(path);
  if (!cat) return crius::make_error(cat.error() + " (the GPU catalogue; choose one with --gpus FILE)");
  Naming n{std::move(*cat), {}};
  if (!cfg) return n;

  auto disc_node = (*cfg)["discover"];
  if (!disc_node) return n;
  const toml::table* dt = disc_node.as_table();
  if (!dt) return crius::make_error(est::detail::where(config, disc_node.node()->source()) + ": 'discover' must be a table");
  for (const auto& [k, v] : *dt) {
    if (k.str() != "gpu_names") {
      auto close = est::detail::close_matches(k.str(), {"gpu_names"});
      return crius::make_error(est::detail::where(config, k.source()) + ": unknown key 'discover." +
                               std::string(k.str()) + "'" + est::detail::format_matches(close));
    }
    const toml::table* names = v.as_table();
    if (!names)
      return crius::make_error(est::detail::where(config, v.source()) + ": 'discover.gpu_names' must be a table of "
                                                                      "\"raw model name\" = \"catalogue id\"");
    for (const auto& [raw, id] : *names) {
      auto s = id.value<std::string>();
      if (!s)
        return crius::make_error(est::detail::where(config, id.source()) + ": discover.gpu_names.\"" +
                                 std::string(raw.str()) + "\" must be a string (a GPU catalogue id)");
      if (!n.catalog.find(*s))
        return crius::make_error(est::detail::where(config, id.source()) + ": unknown GPU type '" + *s + "' in " +
                                 path + est::detail::format_matches(n.catalog.close_matches(*s)));
      n.overrides[std::string(raw.str())] = *s;
    }
  }
  return n;
}

int run_merge(const std::vector<std::string>& files, const disc::MergeOptions& opts) {
  std::vector<disc::MergeInput> inputs;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) return fail(2, f + ": cannot open: " + std::strerror(errno));
    disc::MergeInput mi{f, {}};
    try {
      mi.doc = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
      return fail(2, f + ": not JSON (" + std::string(e.what()) + "); merge reads `--format json` node descriptions");
    }
    inputs.push_back(std::move(mi));
  }
  if (!disc::valid_name(opts.partition))
    return fail(2, "merge --partition " + crius::util::shown(opts.partition) +
                       " is not a Slurm partition name (letters, digits, '.', '_', '-'; at most 64)");
  auto out = disc::merge_partition(inputs, opts);
  if (!out) return fail(2, out.error());
  std::cout << *out;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Describe a GPU node for crius.toml and slurm.conf from its hwloc topology.", kProg};
  app.set_version_flag("--version", std::string("crius-discover (hwloc ") + HWLOC_VERSION + ")");
  std::string xml, format = "toml", node_name, partition, gpus, config;
  bool slurm = false, gres_cores = false, allow_no_gpus = false, pci_gpus = false;
  app.add_option("--xml", xml, "Read an `lstopo --of xml` export instead of this machine")->type_name("FILE");
  app.add_option("--format", format, "Output format")->check(CLI::IsMember({"toml", "json"}))->type_name("FORMAT");
  app.add_flag("--slurm", slurm, "Print slurm.conf NodeName= and gres.conf lines instead");
  app.add_flag("--gres-cores", gres_cores, "With --slurm: add Cores= (GPU-local cores) to gres.conf lines");
  app.add_option("--node-name", node_name, "Node name for --slurm and the description (default: host name)")
      ->type_name("NAME");
  app.add_option("--partition", partition, "Partition name written in the [[partition]] (default: the GPU id)")
      ->type_name("NAME");
  app.add_option("--gpus", gpus, "GPU catalogue (default: see crius-discover(1))")->type_name("FILE");
  app.add_option("--config", config, "crius.toml: its gpus key and [discover.gpu_names] table")->type_name("FILE");
  app.add_flag("--allow-no-gpus", allow_no_gpus, "Describe a node without GPUs instead of failing");
  app.add_flag("--pci-gpus", pci_gpus,
               "Also count NVIDIA PCI GPUs that have no GPU OS device (hwloc without CUDA/NVML)");

  CLI::App* merge = app.add_subcommand("merge", "Build one [[partition]] from several JSON node descriptions");
  std::string m_partition;
  std::optional<double> m_bw, m_lat;
  std::vector<std::string> m_files;
  merge->add_option("--partition", m_partition, "Partition name (= Slurm partition)")->required()->type_name("NAME");
  merge->add_option("--inter-node-bw-gbs", m_bw, "Inter-node bandwidth per node, GB/s")
      ->check(CLI::PositiveNumber)->type_name("GBS");
  merge->add_option("--inter-node-latency-us", m_lat, "Inter-node latency, microseconds")
      ->check(CLI::NonNegativeNumber)->type_name("US");
  merge->add_option("files", m_files, "Node descriptions written by --format json")->required()->type_name("FILE");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    return fail(2, std::string(e.what()) + " (run with --help for usage)");
  }

  if (merge->parsed()) {
    disc::MergeOptions opts;
    opts.partition = m_partition;
    opts.inter_node_bw_gbs = m_bw;
    opts.inter_node_latency_us = m_lat;
    return run_merge(m_files, opts);
  }
  if (gres_cores && !slurm) return fail(2, "--gres-cores needs --slurm");

  auto topo_r = disc::read_topology(xml, pci_gpus);
  if (!topo_r) return fail(xml.empty() ? 1 : 2, topo_r.error());
  disc::Topology& topo = *topo_r;

  if (topo.gpus.empty()) {
    if (!allow_no_gpus) {
      std::string msg = "no GPUs found in " + (xml.empty() ? std::string("this machine's topology") : xml);
      for (const auto& d : topo.ignored)
        msg += "\n  ignored " + (d.os_device.empty() ? std::string("PCI device") : d.os_device) + " " + d.pci_busid +
               " '" + d.model + "': " + d.why;
      if (topo.ignored.empty() && xml.empty())
        msg += " (hwloc sees GPUs through its CUDA, NVML or OpenCL backends; Debian's libhwloc-plugins has only OpenCL)";
      msg += "\n  (use --allow-no-gpus to describe the node anyway)";
      return fail(1, msg);
    }
  } else {
    auto naming = load_naming(gpus, config);
    if (!naming) return fail(2, naming.error());
    const est::GpuCatalog& cat = naming->catalog;
    disc::assign_names(
        topo, [&cat](std::string_view raw) { return cat.match_name(raw); }, naming->overrides,
        [&cat](std::string_view id) -> std::optional<double> {
          const est::GpuType* t = cat.find(id);
          if (!t || t->memory_gib <= 0) return std::nullopt;
          return t->memory_gib;
        });
  }

  std::optional<disc::NodeSummary> summary;
  auto s = disc::summarize(topo);
  if (!s) return fail(1, (xml.empty() ? std::string("this machine") : xml) + ": " + s.error());
  summary = *s;
  for (const auto& w : topo.warnings) std::cerr << kProg << ": warning: " << w << "\n";

  std::string name = disc::node_name(topo, node_name);
  if (!disc::valid_name(name))
    return fail(2, "node name " + crius::util::shown(name) +
                       " is not a Slurm node name (letters, digits, '.', '_', '-'; at most 64); give --node-name");
  if (!partition.empty() && !disc::valid_name(partition))
    return fail(2, "--partition " + crius::util::shown(partition) +
                       " is not a Slurm partition name (letters, digits, '.', '_', '-'; at most 64)");
  if (slurm) std::cout << disc::to_slurm(topo, summary, name, gres_cores);
  else if (format == "json") std::cout << disc::to_json(topo, summary, name, partition).dump(2) << "\n";
  else std::cout << disc::to_toml(topo, summary, name, partition);
  return 0;
}
