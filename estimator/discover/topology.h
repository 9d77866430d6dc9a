// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-discover's library part: read a machine's topology with hwloc (live or
// from an `lstopo --of xml` export), find its GPUs, NVLink/NVSwitch domains,
// NUMA locality and network adapters, name the GPUs with the GPU catalogue and
// turn the result into a cluster-file partition, JSON, or slurm.conf lines.
// See crius-discover(1).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "estimator/result.h"

namespace crius::estimator::discover {

// Version of the JSON node description (key "crius_discover"); `merge` reads it.
constexpr int kFormatVersion = 1;

struct Gpu {
  int index = 0;                        // 0..N-1 in PCI bus order (= /dev/nvidiaN order)
  std::vector<std::string> os_devices;  // hwloc OS devices of this PCI device, e.g. nvml0, cuda0
  std::vector<std::string> backends;    // NVML, CUDA, OpenCL, ... (sorted, unique)
  std::string pci_busid;                // "0000:34:00.0", "" when not on PCI
  std::string vendor;                   // "NVIDIA Corporation"
  std::string model;                    // raw name: GPUModel info, else the PCI device name
  std::string uuid;                     // NVIDIAUUID, "" when unknown
  double memory_gib = 0;                // 0 = unknown
  std::string memory_source;            // "cuda", "opencl", "catalogue" or "unknown"
  int numa_node = -1;                   // os_index of the local NUMA node, -1 = several/none
  int package = -1;                     // os_index of the local Package, -1 = several/none
  std::string cpus;                     // local PUs (OS indexes, list format "0-7,16-23")
  std::string cores;                    // local cores (logical indexes = Slurm's core numbers)
  double pcie_gbs = 0;                  // PCIe link speed in GB/s, 0 = unknown
  std::string gpu;                      // catalogue id, "unknown" when not in the catalogue
  std::string name_source;              // "catalogue", "override" or "none"
  double nvlink_gbs = 0;                // sum of NVLink bandwidth to GPUs and NVSwitches
  double cpu_nvlink_gbs = 0;            // NVLink bandwidth to CPUs (POWER), 0 = none
  int nvlink_domain = -1;               // index into Topology::domains, -1 = none
};

struct NvlinkDomain {
  int id = 0;
  std::vector<int> gpus;              // GPU indexes
  int nvswitches = 0;                 // NVSwitch PCI devices that connect them
  int nvswitch_groups = 0;            // islands of switches hwloc shows (baseboards), joined into one
  double bandwidth_gbs = 0;           // per GPU: the smallest Gpu::nvlink_gbs in the domain
  std::vector<int> cpu_packages;      // packages linked to these GPUs by NVLink (POWER)
};

struct Nic {
  std::vector<std::string> os_devices;  // ib0, mlx5_0, eth0 ...
  std::string kind;                     // "infiniband" or "ethernet"
  std::string pci_busid;
  std::string model;                    // PCI device name, "" when unknown
  int numa_node = -1;
  int package = -1;
};

struct NumaNode {
  unsigned os_index = 0;
  std::uint64_t memory_bytes = 0;
  std::string cpus;
};

// A GPU-like OS device that is not counted (not NVIDIA, or no OS device).
struct IgnoredDevice {
  std::string os_device;  // "" for a PCI device without OS device
  std::string pci_busid;
  std::string model;
  std::string why;
};

struct Topology {
  std::string source;     // the XML file, or "live"
  std::string hostname;   // HostName info, "" when absent
  std::string machine;    // DMIProductName / PlatformModel, "" when absent
  std::string architecture;
  std::string cpu_model;
  int packages = 0, cores = 0, pus = 0;
  std::vector<NumaNode> numa;
  std::uint64_t memory_bytes = 0;
  std::vector<Gpu> gpus;
  std::vector<NvlinkDomain> domains;
  std::vector<Nic> nics;
  std::vector<IgnoredDevice> ignored;
  std::vector<std::string> warnings;
};

// Checks an XML export before hwloc reads it: the file exists and is XML with a
// <topology> root. Gives its format version (0.0 when it names none, hwloc 1.x) and the
// line of the root element; whether hwloc reads the format is hwloc's to say.
// Errors start with the file name.
struct XmlFormat {
  int major = 0, minor = 0;
  std::size_t line = 0;
};
Result<XmlFormat> check_xml_file(const std::string& path);

// Reads the topology: `xml_path` empty = the live machine.  `pci_gpus` also
// counts NVIDIA PCI display/3D controllers that have no GPU OS device (hwloc
// without CUDA/NVML backends); they get backend "PCI" and no NVLink data.
Result<Topology> read_topology(const std::string& xml_path, bool pci_gpus = false);

// Raw model name -> catalogue id, nullopt when unknown (GpuCatalog::match_name).
using NameMatcher = std::function<std::optional<std::string>(std::string_view)>;
// Raw model name -> catalogue memory in GiB (nullopt when unknown).
using MemoryLookup = std::function<std::optional<double>(std::string_view id)>;

// Names every GPU: first `overrides` (exact raw name, case-insensitive), then
// `match`; unknown models get gpu = "unknown" and a warning.  Fills memory from
// the catalogue where hwloc gave none.
void assign_names(Topology& topo, const NameMatcher& match,
                  const std::map<std::string, std::string>& overrides, const MemoryLookup& memory);

// What the node contributes to a cluster-file [[partition]].
struct NodeSummary {
  std::string gpu;                         // catalogue id or "unknown"
  std::string model;                       // raw model name
  int gpus_per_node = 0;
  std::optional<double> intra_node_bw_gbs;  // NVLink per GPU, else PCIe; nullopt = unknown
  std::string intra_node_link;             // "nvlink", "nvswitch" or "pcie"
  int nvlink_domain = 0;                   // GPUs per NVLink domain, 0 = no NVLink
  int numa_nodes = 0;
  double memory_gib = 0;
};

// Error when the GPUs are of more than one model (a partition holds one type).
Result<NodeSummary> summarize(const Topology& topo);

// Slurm node name: --node-name, else the short host name, else "node".
std::string node_name(const Topology& topo, const std::string& override_name);

nlohmann::ordered_json to_json(const Topology& topo, const std::optional<NodeSummary>& summary,
                       const std::string& name, const std::string& partition);
std::string to_toml(const Topology& topo, const std::optional<NodeSummary>& summary,
                    const std::string& name, const std::string& partition);
// slurm.conf NodeName= line and gres.conf lines; `gres_cores` adds Cores= per NUMA node.
std::string to_slurm(const Topology& topo, const std::optional<NodeSummary>& summary,
                     const std::string& name, bool gres_cores);

// `crius-discover merge`: node descriptions (JSON, as written by --format json)
// -> one [[partition]].  All nodes must agree on gpu, gpus_per_node,
// nvlink_domain, intra_node_bw_gbs and numa_nodes; a mismatch is an error that
// names the field and the nodes on each side.
struct MergeInput {
  std::string file;
  nlohmann::json doc;
};
struct MergeOptions {
  std::string partition;
  std::optional<double> inter_node_bw_gbs, inter_node_latency_us;
};
Result<std::string> merge_partition(const std::vector<MergeInput>& nodes, const MergeOptions& opts);

// A Slurm node or partition name crius-discover writes: letters, digits, '.', '_', '-', at
// most 64 (a newline would inject lines into the TOML or slurm.conf it prints).
bool valid_name(std::string_view name);

// TOML helpers, exposed for tests.
std::string toml_string(std::string_view s);  // quoted basic string
std::string toml_number(double v);            // "150.0", "15.754"

}  // namespace crius::estimator::discover
