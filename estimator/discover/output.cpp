// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-discover's outputs: JSON node description, TOML [[partition]] with a
// commented details block, slurm.conf/gres.conf lines, and `merge`.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "common/util.h"
#include "estimator/discover/topology.h"

namespace crius::estimator::discover {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::uint64_t mib(std::uint64_t bytes) { return bytes / (1024u * 1024u); }

std::string join(const std::vector<std::string>& v, const char* sep = ",") {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "" : sep) + s;
  return r;
}

// "0-3,8" style list of integers.
std::string ranges(const std::vector<int>& v) {
  std::string r;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    r += (r.empty() ? "" : ",") + std::to_string(v[i]);
    if (j > i) r += "-" + std::to_string(v[j]);
    i = j + 1;
  }
  return r;
}

std::string nvlink_phrase(const NvlinkDomain& d) {
  std::string s = "NVLink domain " + std::to_string(d.id) + ": GPUs " + ranges(d.gpus) + ", ";
  if (d.nvswitches > 0) {
    s += "through " + std::to_string(d.nvswitches) + " NVSwitch(es)";
    if (d.nvswitch_groups > 1) s += " on " + std::to_string(d.nvswitch_groups) + " baseboards";
    s += ", ";
  } else {
    s += "direct links, ";
  }
  s += toml_number(d.bandwidth_gbs) + " GB/s per GPU";
  if (!d.cpu_packages.empty()) {
    std::vector<std::string> p;
    for (int x : d.cpu_packages) p.push_back(std::to_string(x));
    s += ", NVLink to CPU package " + join(p);
  }
  return s;
}

std::string partition_name(const std::optional<NodeSummary>& s, const std::string& partition) {
  if (!partition.empty()) return partition;
  if (s && !s->gpu.empty() && s->gpu != "unknown") return s->gpu;
  return "gpu";
}

}  // namespace

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
          c == '-'))
      return false;
  return true;
}

std::string toml_string(std::string_view s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      case '\r': r += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          r += buf;
        } else {
          r += static_cast<char>(c);
        }
    }
  }
  return r + "\"";
}

std::string toml_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  std::string s = buf;
  while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}

nlohmann::ordered_json to_json(const Topology& topo, const std::optional<NodeSummary>& summary, const std::string& name,
                       const std::string& partition) {
  using json = nlohmann::ordered_json;
  json j;
  j["crius_discover"] = kFormatVersion;
  j["source"] = topo.source;
  json node;
  node["name"] = name;
  node["hostname"] = topo.hostname;
  node["machine"] = topo.machine;
  node["architecture"] = topo.architecture;
  node["cpu_model"] = topo.cpu_model;
  node["sockets"] = topo.packages;
  node["cores"] = topo.cores;
  node["cpus"] = topo.pus;
  node["threads_per_core"] = topo.cores > 0 ? topo.pus / topo.cores : 1;
  node["memory_mib"] = mib(topo.memory_bytes);
  json numa = json::array();
  for (const auto& n : topo.numa)
    numa.push_back({{"os_index", n.os_index}, {"memory_mib", mib(n.memory_bytes)}, {"cpus", n.cpus}});
  node["numa"] = numa;
  j["node"] = node;

  json gpus = json::array();
  for (const Gpu& g : topo.gpus) {
    json x;
    x["index"] = g.index;
    x["gpu"] = g.gpu;
    x["model"] = g.model;
    x["name_source"] = g.name_source;
    x["memory_gib"] = g.memory_gib > 0 ? json(g.memory_gib) : json(nullptr);
    x["memory_source"] = g.memory_source;
    x["pci_busid"] = g.pci_busid;
    x["pcie_gbs"] = g.pcie_gbs > 0 ? json(g.pcie_gbs) : json(nullptr);
    x["os_devices"] = g.os_devices;
    x["backends"] = g.backends;
    x["uuid"] = g.uuid;
    x["numa_node"] = g.numa_node >= 0 ? json(g.numa_node) : json(nullptr);
    x["package"] = g.package >= 0 ? json(g.package) : json(nullptr);
    x["cpus"] = g.cpus;
    x["cores"] = g.cores;
    x["nvlink_gbs"] = g.nvlink_gbs;
    x["cpu_nvlink_gbs"] = g.cpu_nvlink_gbs;
    x["nvlink_domain"] = g.nvlink_domain >= 0 ? json(g.nvlink_domain) : json(nullptr);
    gpus.push_back(x);
  }
  j["gpus"] = gpus;

  json doms = json::array();
  for (const auto& d : topo.domains)
    doms.push_back({{"id", d.id},
                    {"gpus", d.gpus},
                    {"size", d.gpus.size()},
                    {"nvswitches", d.nvswitches},
                    {"nvswitch_groups", d.nvswitch_groups},
                    {"bandwidth_gbs", d.bandwidth_gbs},
                    {"cpu_packages", d.cpu_packages}});
  j["nvlink_domains"] = doms;

  json nics = json::array();
  for (const auto& n : topo.nics)
    nics.push_back({{"os_devices", n.os_devices},
                    {"kind", n.kind},
                    {"pci_busid", n.pci_busid},
                    {"model", n.model},
                    {"numa_node", n.numa_node >= 0 ? json(n.numa_node) : json(nullptr)},
                    {"package", n.package >= 0 ? json(n.package) : json(nullptr)}});
  j["nics"] = nics;

  json ign = json::array();
  for (const auto& d : topo.ignored)
    ign.push_back({{"os_device", d.os_device}, {"pci_busid", d.pci_busid}, {"model", d.model}, {"why", d.why}});
  j["ignored_devices"] = ign;

  if (summary && summary->gpus_per_node > 0) {
    json p;
    p["name"] = partition_name(summary, partition);
    p["gpu"] = summary->gpu;
    p["gpu_model"] = summary->model;
    p["memory_gib"] = summary->memory_gib > 0 ? json(summary->memory_gib) : json(nullptr);
    p["gpus_per_node"] = summary->gpus_per_node;
    p["intra_node_bw_gbs"] = summary->intra_node_bw_gbs ? json(*summary->intra_node_bw_gbs) : json(nullptr);
    p["intra_node_link"] = summary->intra_node_link;
    p["nvlink_domain"] = summary->nvlink_domain;
    p["numa_nodes"] = summary->numa_nodes;
    j["partition"] = p;
  } else {
    j["partition"] = nullptr;
  }
  j["warnings"] = topo.warnings;
  return j;
}

std::string to_toml(const Topology& topo, const std::optional<NodeSummary>& summary, const std::string& name,
                    const std::string& partition) {
  std::ostringstream o;
  o << "# crius-discover: node '" << name << "' from " << topo.source << "\n";
  if (summary && summary->gpus_per_node > 0) {
    const NodeSummary& s = *summary;
    o << "# Paste the [[partition]] into crius.toml, set `nodes` to the partition's node count\n"
         "# (or build it with `crius-discover merge`) and fill in the inter-node keys.\n";
    o << "[[partition]]\n";
    o << "name = " << toml_string(partition_name(summary, partition)) << "\n";
    o << "gpu = " << toml_string(s.gpu) << "  # " << (s.gpu == "unknown" ? "NOT in the GPU catalogue: " : "")
      << s.model;
    if (s.memory_gib > 0) o << ", " << toml_number(s.memory_gib) << " GiB";
    o << "\n";
    o << "nodes = 1\n";
    o << "gpus_per_node = " << s.gpus_per_node << "\n";
    if (s.intra_node_bw_gbs) {
      o << "intra_node_bw_gbs = " << toml_number(*s.intra_node_bw_gbs) << "  # per GPU, "
        << (s.intra_node_link == "pcie" ? "PCIe link" : s.intra_node_link == "nvswitch" ? "NVLink through NVSwitch"
                                                                                        : "direct NVLink")
        << "\n";
    } else {
      o << "# intra_node_bw_gbs = ?  # hwloc reported no NVLink and no PCIe link speed: fill in\n";
    }
    if (s.nvlink_domain > 0) o << "nvlink_domain = " << s.nvlink_domain << "\n";
    else o << "# nvlink_domain: none (no NVLink between these GPUs)\n";
    o << "numa_nodes = " << s.numa_nodes << "\n";
    o << "# inter_node_bw_gbs = ?      # not visible to hwloc: measure (e.g. nccl-tests) and set\n";
    o << "# inter_node_latency_us = ?  # likewise\n";
  } else {
    o << "# no GPUs found: no [[partition]]\n";
  }

  o << "\n# ---- node details (comments only, so the text above pastes into crius.toml as is) ----\n";
  o << "# node " << name << ": " << (topo.machine.empty() ? "" : topo.machine + ", ")
    << (topo.architecture.empty() ? "" : topo.architecture + ", ") << topo.packages << " socket(s), " << topo.cores
    << " cores, " << topo.pus << " CPUs, " << mib(topo.memory_bytes) << " MiB in " << topo.numa.size()
    << " NUMA node(s)\n";
  for (const auto& n : topo.numa)
    o << "#   numa " << n.os_index << ": " << toml_number(static_cast<double>(n.memory_bytes) / kMiB / 1024.0)
      << " GiB, cpus " << n.cpus << "\n";
  for (const Gpu& g : topo.gpus) {
    o << "# gpu " << g.index << ": " << g.gpu << " '" << g.model << "'";
    if (g.memory_gib > 0) o << ", " << toml_number(g.memory_gib) << " GiB (" << g.memory_source << ")";
    o << ", pci " << (g.pci_busid.empty() ? "-" : g.pci_busid) << ", numa "
      << (g.numa_node >= 0 ? std::to_string(g.numa_node) : "-") << ", cpus " << (g.cpus.empty() ? "-" : g.cpus)
      << ", " << join(g.os_devices);
    if (g.nvlink_domain >= 0) o << ", nvlink domain " << g.nvlink_domain;
    if (g.cpu_nvlink_gbs > 0) o << ", NVLink to CPU " << toml_number(g.cpu_nvlink_gbs) << " GB/s";
    o << "\n";
  }
  for (const auto& d : topo.domains) o << "# " << nvlink_phrase(d) << "\n";
  for (const auto& n : topo.nics)
    o << "# nic " << join(n.os_devices) << " (" << n.kind << "): pci " << n.pci_busid << " '" << n.model
      << "', numa " << (n.numa_node >= 0 ? std::to_string(n.numa_node) : "-") << "\n";
  for (const auto& d : topo.ignored)
    o << "# ignored " << (d.os_device.empty() ? "PCI device" : d.os_device) << " " << d.pci_busid << " '" << d.model
      << "': " << d.why << "\n";
  for (const auto& w : topo.warnings) o << "# warning: " << w << "\n";
  return o.str();
}

std::string to_slurm(const Topology& topo, const std::optional<NodeSummary>& summary, const std::string& name,
                     bool gres_cores) {
  std::ostringstream o;
  int sockets = std::max(1, topo.packages);
  int cores = std::max(1, topo.cores);
  int cpus = std::max(1, topo.pus);
  int tpc = std::max(1, cpus / cores);
  int cps = std::max(1, cores / sockets);
  o << "# slurm.conf (crius-discover, from " << topo.source << ")\n";
  if (cores % sockets != 0)
    o << "# note: " << cores << " cores do not divide evenly over " << sockets << " sockets\n";
  o << "NodeName=" << name << " CPUs=" << cpus << " Boards=1 SocketsPerBoard=" << sockets
    << " CoresPerSocket=" << cps << " ThreadsPerCore=" << tpc << " RealMemory=" << mib(topo.memory_bytes);
  bool gpus = summary && summary->gpus_per_node > 0;
  bool typed = gpus && summary->gpu != "unknown";
  if (gpus) {
    o << " Gres=gpu:" << (typed ? summary->gpu + ":" : "") << summary->gpus_per_node;
    if (typed) o << " Feature=" << summary->gpu;
  }
  o << "\n";
  if (!gpus) return o.str();
  o << "# gres.conf\n";
  if (!typed)
    o << "# GPU model '" << summary->model << "' is not in the GPU catalogue: untyped gpu GRES\n";
  auto files = [](int first, int last) {
    return first == last ? "/dev/nvidia" + std::to_string(first)
                         : "/dev/nvidia[" + std::to_string(first) + "-" + std::to_string(last) + "]";
  };
  std::string head = "NodeName=" + name + " Name=gpu" + (typed ? " Type=" + summary->gpu : "");
  if (!gres_cores) {
    o << head << " File=" << files(0, static_cast<int>(topo.gpus.size()) - 1) << "\n";
    return o.str();
  }
  // Runs of consecutive GPUs that share the same local cores.
  for (size_t i = 0; i < topo.gpus.size();) {
    size_t j = i;
    while (j + 1 < topo.gpus.size() && topo.gpus[j + 1].cores == topo.gpus[i].cores) ++j;
    o << head << " File=" << files(static_cast<int>(i), static_cast<int>(j));
    if (!topo.gpus[i].cores.empty()) o << " Cores=" << topo.gpus[i].cores;
    o << "\n";
    i = j + 1;
  }
  return o.str();
}

Result<std::string> merge_partition(const std::vector<MergeInput>& nodes, const MergeOptions& opts) {
  using nlohmann::json;
  if (nodes.empty()) return make_error("merge: no node descriptions given");
  struct Row {
    std::string file, node;
    std::map<std::string, std::string> fields;
    const json* part = nullptr;
  };
  static const std::vector<std::string> keys = {"gpu", "gpus_per_node", "nvlink_domain", "intra_node_bw_gbs",
                                                "numa_nodes"};
  std::vector<Row> rows;
  std::set<std::string> names;
  for (const auto& in : nodes) {
    const json& d = in.doc;
    if (!d.is_object() || !d.contains("crius_discover"))
      return make_error(in.file + ": not a crius-discover node description (no \"crius_discover\" key; write it with "
                                  "`crius-discover --format json`)");
    if (d["crius_discover"] != kFormatVersion)
      return make_error(in.file + ": node description format " + d["crius_discover"].dump() + ", expected " +
                        std::to_string(kFormatVersion));
    Row r;
    r.file = in.file;
    r.node = d.contains("node") && d["node"].contains("name") && d["node"]["name"].is_string()
                 ? d["node"]["name"].get<std::string>()
                 : in.file;
    if (!d.contains("partition") || !d["partition"].is_object())
      return make_error(in.file + ": node '" + r.node + "' has no GPUs (\"partition\" is null)");
    r.part = &d["partition"];
    if (!valid_name(r.node))
      return make_error(in.file + ": node name " + util::shown(r.node) +
                        " is not a Slurm node name (letters, digits, '.', '_', '-'; at most 64)");
    for (const auto& k : keys) {
      if (!r.part->contains(k)) return make_error(in.file + ": key \"partition." + k + "\" is missing");
      const json& v = (*r.part)[k];
      // The types and ranges crius-discover writes; anything else is not its output.
      const bool ok = k == "gpu"                 ? v.is_string() && valid_name(v.get<std::string>())
                      : k == "intra_node_bw_gbs" ? v.is_null() || (v.is_number() && v.get<double>() > 0 &&
                                                                   v.get<double>() < 1e6)
                                                 : v.is_number_integer() && v.get<long long>() >= 0 &&
                                                       v.get<long long>() <= 1024 &&
                                                       (k != "gpus_per_node" || v.get<long long>() >= 1);
      if (!ok)
        return make_error(in.file + ": key \"partition." + k + "\" = " + util::printable(v.dump(), 64) +
                          " is not what crius-discover writes (" +
                          (k == "gpu" ? "a GPU type id" : k == "intra_node_bw_gbs" ? "a bandwidth in GB/s or null"
                                                                                   : "a whole number") + ")");
      r.fields[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
    if (r.fields["gpu"] == "unknown")
      return make_error(in.file + ": node '" + r.node + "' has GPU model '" +
                        r.part->value("gpu_model", std::string("?")) +
                        "', which is not in the GPU catalogue (add it, or map it in [discover.gpu_names])");
    if (!names.insert(r.node).second)
      return make_error(in.file + ": node name '" + r.node + "' appears twice (give each node its own "
                                  "--node-name when discovering)");
    rows.push_back(std::move(r));
  }
  std::string mismatch;
  for (const auto& k : keys) {
    std::map<std::string, std::vector<std::string>> by_value;
    for (const auto& r : rows) by_value[r.fields.at(k)].push_back(r.node + " (" + r.file + ")");
    if (by_value.size() < 2) continue;
    mismatch += "\n  " + k + ":";
    for (const auto& [v, who] : by_value) mismatch += " " + v + " on " + join(who, ", ") + ";";
    mismatch.pop_back();
  }
  if (!mismatch.empty())
    return make_error("merge: the nodes of partition '" + opts.partition + "' do not agree:" + mismatch);

  const json& p = *rows.front().part;
  std::vector<std::string> node_names;
  for (const auto& r : rows) node_names.push_back(r.node);
  std::ostringstream o;
  o << "# crius-discover merge: " << rows.size() << " node(s): " << join(node_names, ", ") << "\n";
  o << "# slurm.conf: PartitionName=" << opts.partition << " Nodes=" << join(node_names) << "\n";
  o << "[[partition]]\n";
  o << "name = " << toml_string(opts.partition) << "\n";
  o << "gpu = " << toml_string(p["gpu"].get<std::string>()) << "  # " << p.value("gpu_model", std::string()) << "\n";
  o << "nodes = " << rows.size() << "\n";
  o << "gpus_per_node = " << p["gpus_per_node"].get<int>() << "\n";
  if (p["intra_node_bw_gbs"].is_number())
    o << "intra_node_bw_gbs = " << toml_number(p["intra_node_bw_gbs"].get<double>()) << "\n";
  else
    o << "# intra_node_bw_gbs = ?  # unknown to hwloc on these nodes: fill in\n";
  if (p["nvlink_domain"].get<int>() > 0) o << "nvlink_domain = " << p["nvlink_domain"].get<int>() << "\n";
  o << "numa_nodes = " << p["numa_nodes"].get<int>() << "\n";
  if (opts.inter_node_bw_gbs)
    o << "inter_node_bw_gbs = " << toml_number(*opts.inter_node_bw_gbs) << "\n";
  else
    o << "# inter_node_bw_gbs = ?      # not visible to hwloc: --inter-node-bw-gbs, or measure and set\n";
  if (opts.inter_node_latency_us)
    o << "inter_node_latency_us = " << toml_number(*opts.inter_node_latency_us) << "\n";
  else
    o << "# inter_node_latency_us = ?  # likewise (--inter-node-latency-us)\n";
  return o.str();
}

}  // namespace crius::estimator::discover
