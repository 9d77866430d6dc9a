// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Reading a topology with the hwloc 2.x C API.
#include "estimator/discover/topology.h"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>

namespace crius::estimator::discover {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

std::string info(hwloc_obj_t obj, const char* name) {
  const char* v = obj ? hwloc_obj_get_info_by_name(obj, name) : nullptr;
  return v ? v : "";
}

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return std::tolower(c); });
  return r;
}

std::string busid(hwloc_obj_t pci) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
                pci->attr->pcidev.dev, pci->attr->pcidev.func);
  return buf;
}

hwloc_obj_t pci_ancestor(hwloc_obj_t obj) {
  for (hwloc_obj_t p = obj; p; p = p->parent)
    if (p->type == HWLOC_OBJ_PCI_DEVICE) return p;
  return nullptr;
}

std::string cpulist(hwloc_const_bitmap_t set) {
  if (!set) return "";
  char* s = nullptr;
  if (hwloc_bitmap_list_asprintf(&s, set) < 0 || !s) return "";
  std::string r = s;
  std::free(s);
  return r;
}

// Locality of an I/O object: NUMA node and Package of its non-I/O ancestor.
struct Locality {
  int numa = -1, package = -1;
  std::string cpus, cores;
};

Locality locality(hwloc_topology_t t, hwloc_obj_t io) {
  Locality l;
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, io);
  if (!anc) return l;
  if (anc->nodeset && hwloc_bitmap_weight(anc->nodeset) == 1) l.numa = hwloc_bitmap_first(anc->nodeset);
  hwloc_obj_t pkg = anc->type == HWLOC_OBJ_PACKAGE ? anc : hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, anc);
  if (pkg && pkg->os_index != HWLOC_UNKNOWN_INDEX) l.package = static_cast<int>(pkg->os_index);
  l.cpus = cpulist(anc->cpuset);
  // Slurm numbers cores by socket then core: hwloc's logical Core index.
  std::vector<int> cores;
  for (hwloc_obj_t c = hwloc_get_next_obj_inside_cpuset_by_type(t, anc->cpuset, HWLOC_OBJ_CORE, nullptr); c;
       c = hwloc_get_next_obj_inside_cpuset_by_type(t, anc->cpuset, HWLOC_OBJ_CORE, c))
    cores.push_back(static_cast<int>(c->logical_index));
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  for (int c : cores) hwloc_bitmap_set(set, static_cast<unsigned>(c));
  l.cores = cpulist(set);
  hwloc_bitmap_free(set);
  return l;
}

bool is_gpu_osdev(hwloc_obj_t o) {
  return o->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU || o->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC;
}

// Backend of a GPU OS device: the subtype, else the Backend info (NVML devices
// in some exports are CoProc without subtype), else a guess from the name.
std::string backend_of(hwloc_obj_t o) {
  if (o->subtype && *o->subtype) return o->subtype;
  std::string b = info(o, "Backend");
  if (!b.empty()) return b;
  std::string n = o->name ? o->name : "";
  if (n.rfind("card", 0) == 0 || n.rfind("renderD", 0) == 0) return "DRM";
  return "unknown";
}

bool is_nvidia(hwloc_obj_t pci, const std::string& gpu_vendor) {
  if (pci && pci->attr->pcidev.vendor_id == 0x10de) return true;
  return lower(gpu_vendor).find("nvidia") != std::string::npos;
}

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// Union-find over the nodes of the NVLink graph.
struct Dsu {
  std::vector<int> p;
  explicit Dsu(size_t n) : p(n) { std::iota(p.begin(), p.end(), 0); }
  int find(int x) { return p[x] == x ? x : p[x] = find(p[x]); }
  void unite(int a, int b) { p[find(a)] = find(b); }
};

// Per-GPU scratch while collecting OS devices of one PCI device.
struct GpuBuild {
  Gpu gpu;
  hwloc_obj_t key = nullptr;                // PCI device, or the OS device itself
  std::vector<hwloc_obj_t> objs;            // its OS devices
  int model_rank = 99, memory_rank = 99;    // lower wins
};

int model_rank(const std::string& backend) {
  if (backend == "NVML") return 0;
  if (backend == "CUDA") return 1;
  if (backend == "OpenCL") return 2;
  return 3;
}

void read_nvlink(hwloc_topology_t t, Topology& topo, const std::vector<GpuBuild>& builds) {
  unsigned nr = 1;
  hwloc_distances_s* d = nullptr;
  if (hwloc_distances_get_by_name(t, "NVLinkBandwidth", &nr, &d, 0) != 0 || nr == 0 || !d) return;

  // Graph nodes: GPUs 0..G-1, then NVSwitches; CPU packages are kept apart.
  const int g = static_cast<int>(topo.gpus.size());
  std::map<hwloc_obj_t, int> node_of;
  for (const auto& b : builds) {
    for (hwloc_obj_t o : b.objs) node_of[o] = b.gpu.index;
    if (b.key) node_of[b.key] = b.gpu.index;
  }
  int nodes = g;
  std::vector<int> role(d->nbobjs, -1);  // graph node, or -2 - package os_index for CPUs
  for (unsigned i = 0; i < d->nbobjs; ++i) {
    hwloc_obj_t o = d->objs[i];
    if (!o) continue;
    auto it = node_of.find(o);
    if (it != node_of.end()) {
      role[i] = it->second;
    } else if (o->type == HWLOC_OBJ_PCI_DEVICE || o->type == HWLOC_OBJ_OS_DEVICE) {
      // Any other device in the NVLink matrix is a switch (NVSwitch PCI devices).
      node_of[o] = nodes;
      role[i] = nodes++;
    } else {
      hwloc_obj_t pkg = o->type == HWLOC_OBJ_PACKAGE ? o : hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, o);
      role[i] = -2 - static_cast<int>(pkg && pkg->os_index != HWLOC_UNKNOWN_INDEX ? pkg->os_index : 0);
    }
  }
  // Aggregate the matrix per graph node (an object pair may repeat a GPU).
  std::map<std::pair<int, int>, double> bw;  // MB/s
  for (unsigned i = 0; i < d->nbobjs; ++i)
    for (unsigned j = 0; j < d->nbobjs; ++j) {
      if (i == j || role[i] == -1 || role[j] == -1 || role[i] == role[j]) continue;
      double v = static_cast<double>(d->values[i * d->nbobjs + j]);
      if (v <= 0) continue;
      auto& slot = bw[{role[i], role[j]}];
      slot = std::max(slot, v);
    }
  hwloc_distances_release(t, d);

  Dsu dsu(nodes);
  std::vector<std::set<int>> cpu_links(g);
  for (const auto& [pair, v] : bw) {
    auto [a, b] = pair;
    if (a >= 0 && a < g) {
      if (b >= 0) topo.gpus[a].nvlink_gbs += v / 1000.0;
      else {
        topo.gpus[a].cpu_nvlink_gbs += v / 1000.0;
        cpu_links[a].insert(-2 - b);
      }
    }
    if (a >= 0 && b >= 0) dsu.unite(a, b);
  }
  // hwloc lists only GPU-side NVLinks (from NVML), not the trunk links between
  // NVSwitches: on a DGX-2/HGX-2 each baseboard's 6 switches show up as their
  // own island.  All NVSwitches of a node form one fabric, so join them.
  std::set<int> switch_groups;
  for (int s = g; s < nodes; ++s) switch_groups.insert(dsu.find(s));
  for (int s = g + 1; s < nodes; ++s) dsu.unite(s, g);
  for (auto& gpu : topo.gpus) {
    gpu.nvlink_gbs = round3(gpu.nvlink_gbs);
    gpu.cpu_nvlink_gbs = round3(gpu.cpu_nvlink_gbs);
  }
  std::map<int, std::vector<int>> comp_gpus;
  for (int i = 0; i < g; ++i)
    if (topo.gpus[i].nvlink_gbs > 0) comp_gpus[dsu.find(i)].push_back(i);
  for (auto& [root, members] : comp_gpus) {
    if (members.size() < 2) continue;
    NvlinkDomain dom;
    dom.id = static_cast<int>(topo.domains.size());
    dom.gpus = members;
    for (int s = g; s < nodes; ++s)
      if (dsu.find(s) == root) ++dom.nvswitches;
    if (dom.nvswitches > 0) dom.nvswitch_groups = static_cast<int>(switch_groups.size());
    dom.bandwidth_gbs = topo.gpus[members[0]].nvlink_gbs;
    std::set<int> pkgs;
    for (int m : members) {
      topo.gpus[m].nvlink_domain = dom.id;
      dom.bandwidth_gbs = std::min(dom.bandwidth_gbs, topo.gpus[m].nvlink_gbs);
      pkgs.insert(cpu_links[m].begin(), cpu_links[m].end());
    }
    dom.cpu_packages.assign(pkgs.begin(), pkgs.end());
    topo.domains.push_back(std::move(dom));
  }
  // Domains in order of their first GPU.
  std::sort(topo.domains.begin(), topo.domains.end(),
            [](const NvlinkDomain& a, const NvlinkDomain& b) { return a.gpus.front() < b.gpus.front(); });
  for (size_t i = 0; i < topo.domains.size(); ++i) {
    topo.domains[i].id = static_cast<int>(i);
    for (int m : topo.domains[i].gpus) topo.gpus[m].nvlink_domain = static_cast<int>(i);
  }
}

void read_gpus(hwloc_topology_t t, Topology& topo, bool pci_gpus) {
  std::map<hwloc_obj_t, size_t> by_key;
  std::vector<GpuBuild> builds;
  for (hwloc_obj_t o = hwloc_get_next_osdev(t, nullptr); o; o = hwloc_get_next_osdev(t, o)) {
    if (!is_gpu_osdev(o)) continue;
    hwloc_obj_t pci = pci_ancestor(o);
    std::string name = o->name ? o->name : "";
    std::string vendor = info(o, "GPUVendor");
    if (vendor.empty() && pci) vendor = info(pci, "PCIVendor");
    if (!is_nvidia(pci, vendor)) {
      std::string model = info(o, "GPUModel");
      if (model.empty() && pci) model = info(pci, "PCIDevice");
      topo.ignored.push_back({name, pci ? busid(pci) : "", model,
                              "not an NVIDIA GPU (vendor '" + (vendor.empty() ? std::string("unknown") : vendor) + "')"});
      continue;
    }
    hwloc_obj_t key = pci ? pci : o;
    auto [it, fresh] = by_key.emplace(key, builds.size());
    if (fresh) {
      GpuBuild b;
      b.key = key;
      if (pci) {
        b.gpu.pci_busid = busid(pci);
        b.gpu.pcie_gbs = round3(pci->attr->pcidev.linkspeed);
        b.gpu.model = info(pci, "PCIDevice");
        b.gpu.vendor = info(pci, "PCIVendor");
        b.model_rank = 10;
      }
      Locality l = locality(t, o);
      b.gpu.numa_node = l.numa;
      b.gpu.package = l.package;
      b.gpu.cpus = l.cpus;
      b.gpu.cores = l.cores;
      builds.push_back(std::move(b));
    }
    GpuBuild& b = builds[it->second];
    b.objs.push_back(o);
    b.gpu.os_devices.push_back(name);
    std::string backend = backend_of(o);
    if (std::find(b.gpu.backends.begin(), b.gpu.backends.end(), backend) == b.gpu.backends.end())
      b.gpu.backends.push_back(backend);
    std::string model = info(o, "GPUModel");
    int rank = model_rank(backend);
    if (!model.empty() && rank < b.model_rank) {
      b.gpu.model = model;
      b.model_rank = rank;
    }
    if (!info(o, "GPUVendor").empty() && b.gpu.vendor.empty()) b.gpu.vendor = info(o, "GPUVendor");
    if (b.gpu.uuid.empty()) b.gpu.uuid = info(o, "NVIDIAUUID");
    // CUDAGlobalMemorySize / OpenCLGlobalMemorySize are in KiB.
    std::string cuda_mem = info(o, "CUDAGlobalMemorySize"), cl_mem = info(o, "OpenCLGlobalMemorySize");
    if (!cuda_mem.empty() && b.memory_rank > 0) {
      b.gpu.memory_gib = round3(std::strtod(cuda_mem.c_str(), nullptr) / (1024.0 * 1024.0));
      b.gpu.memory_source = "cuda";
      b.memory_rank = 0;
    } else if (!cl_mem.empty() && b.memory_rank > 1) {
      b.gpu.memory_gib = round3(std::strtod(cl_mem.c_str(), nullptr) / (1024.0 * 1024.0));
      b.gpu.memory_source = "opencl";
      b.memory_rank = 1;
    }
  }
  // NVIDIA display/3D controllers without any GPU OS device: hwloc was built
  // without the CUDA/NVML backends (Debian's hwloc), or the driver is missing.
  // Counted only with --pci-gpus, named by their PCI device name or id.
  size_t pci_only = 0;
  for (hwloc_obj_t p = hwloc_get_next_pcidev(t, nullptr); p; p = hwloc_get_next_pcidev(t, p)) {
    unsigned cls = p->attr->pcidev.class_id;
    if (p->attr->pcidev.vendor_id != 0x10de || (cls >> 8) != 0x03 || by_key.count(p)) continue;
    std::string model = info(p, "PCIDevice");
    if (!pci_gpus) {
      topo.ignored.push_back({"", busid(p), model, "NVIDIA PCI display/3D controller without a GPU OS device"});
      ++pci_only;
      continue;
    }
    if (model.empty()) {
      char id[48];
      std::snprintf(id, sizeof id, "NVIDIA PCI device 10de:%04x", p->attr->pcidev.device_id);
      model = id;
    }
    GpuBuild b;
    b.key = p;
    b.gpu.pci_busid = busid(p);
    b.gpu.pcie_gbs = round3(p->attr->pcidev.linkspeed);
    b.gpu.model = model;
    b.gpu.vendor = info(p, "PCIVendor");
    b.gpu.backends = {"PCI"};
    Locality l = locality(t, p);
    b.gpu.numa_node = l.numa;
    b.gpu.package = l.package;
    b.gpu.cpus = l.cpus;
    b.gpu.cores = l.cores;
    by_key.emplace(p, builds.size());
    builds.push_back(std::move(b));
  }
  if (pci_only > 0)
    topo.warnings.push_back(std::to_string(pci_only) +
                            " NVIDIA PCI device(s) have no GPU OS device and are not counted; export on the node "
                            "with an hwloc that has the CUDA or NVML backend, or use --pci-gpus");

  std::stable_sort(builds.begin(), builds.end(), [](const GpuBuild& a, const GpuBuild& b) {
    if (a.gpu.pci_busid.empty() != b.gpu.pci_busid.empty()) return b.gpu.pci_busid.empty();
    return a.gpu.pci_busid < b.gpu.pci_busid;
  });
  for (size_t i = 0; i < builds.size(); ++i) {
    Gpu& gpu = builds[i].gpu;
    gpu.index = static_cast<int>(i);
    std::sort(gpu.backends.begin(), gpu.backends.end());
    if (gpu.memory_source.empty()) gpu.memory_source = "unknown";
    topo.gpus.push_back(gpu);
  }

  read_nvlink(t, topo, builds);
}

void read_nics(hwloc_topology_t t, Topology& topo) {
  std::map<hwloc_obj_t, size_t> by_pci;
  for (hwloc_obj_t o = hwloc_get_next_osdev(t, nullptr); o; o = hwloc_get_next_osdev(t, o)) {
    auto type = o->attr->osdev.type;
    if (type != HWLOC_OBJ_OSDEV_NETWORK && type != HWLOC_OBJ_OSDEV_OPENFABRICS) continue;
    hwloc_obj_t pci = pci_ancestor(o);
    if (!pci) continue;  // virtual interfaces
    auto [it, fresh] = by_pci.emplace(pci, topo.nics.size());
    if (fresh) {
      Nic n;
      n.pci_busid = busid(pci);
      n.model = info(pci, "PCIDevice");
      Locality l = locality(t, o);
      n.numa_node = l.numa;
      n.package = l.package;
      n.kind = "ethernet";
      topo.nics.push_back(n);
    }
    Nic& n = topo.nics[it->second];
    std::string name = o->name ? o->name : "";
    n.os_devices.push_back(name);
    if (type == HWLOC_OBJ_OSDEV_NETWORK && name.rfind("ib", 0) == 0) n.kind = "infiniband";
    else if (type == HWLOC_OBJ_OSDEV_OPENFABRICS && n.kind == "ethernet") n.kind = "rdma";
  }
  std::sort(topo.nics.begin(), topo.nics.end(),
            [](const Nic& a, const Nic& b) { return a.pci_busid < b.pci_busid; });
}

}  // namespace

Result<XmlFormat> check_xml_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path + ": cannot open: " + std::strerror(errno));
  std::string head(8192, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return make_error(path + ": empty file, expected an hwloc XML topology");
  if (head.compare(first, 3, "\xEF\xBB\xBF") == 0) first += 3;
  if (head[first] != '<') return make_error(path + ": not an XML file (expected an hwloc XML topology from `lstopo --of xml`)");
  std::smatch m;
  static const std::regex root(R"(<topology(\s[^>]*)?>)");
  if (!std::regex_search(head, m, root))
    return make_error(path + ": XML without a <topology> root element: not an hwloc topology export");
  std::string attrs = m[1].str();
  static const std::regex version(R"(version\s*=\s*["'](\d+)\.(\d+)["'])");
  XmlFormat format;
  std::smatch v;
  if (std::regex_search(attrs, v, version)) {
    format.major = std::stoi(v[1].str());
    format.minor = std::stoi(v[2].str());
  }
  format.line = 1 + static_cast<size_t>(std::count(head.begin(), head.begin() + m.position(0), '\n'));
  return format;
}

Result<Topology> read_topology(const std::string& xml_path, bool pci_gpus) {
  Topology topo;
  topo.source = xml_path.empty() ? "live" : xml_path;
  XmlFormat format;
  if (!xml_path.empty()) {
    auto ok = check_xml_file(xml_path);
    if (!ok) return make_error(ok.error());
    format = *ok;
    // hwloc's built-in parser: the same behaviour with or without libxml2 and
    // no parser chatter on stderr.
    setenv("HWLOC_LIBXML_IMPORT", "0", 1);
  }
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return make_error(std::string("hwloc_topology_init: ") + std::strerror(errno));
  TopologyPtr t(raw);
  // I/O objects (PCI devices, OS devices) are dropped by default in hwloc 2.x;
  // KEEP_ALL also keeps NVSwitches, which have no OS device.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (!xml_path.empty() && hwloc_topology_set_xml(raw, xml_path.c_str()) != 0)
    return make_error(xml_path + ": hwloc cannot use it as XML input: " + std::strerror(errno));
  if (hwloc_topology_load(raw) != 0) {
    if (xml_path.empty()) return make_error(std::string("hwloc cannot read this machine's topology: ") + std::strerror(errno));
    // hwloc 3.x writes format 3.0, which hwloc 2.9 refuses and 2.12 reads.
    if (format.major > 2)
      return make_error(xml_path + ":" + std::to_string(format.line) + ": hwloc XML format " +
                        std::to_string(format.major) + "." + std::to_string(format.minor) +
                        " (written by hwloc >= 3.0), which this crius-discover's hwloc " HWLOC_VERSION
                        " cannot import. Re-export it on the node with `lstopo --of xml --export-xml-flags v2 FILE`"
                        " (hwloc 3.x) or with any hwloc 2.x lstopo");
    return make_error(xml_path + ": hwloc " HWLOC_VERSION " cannot import this XML (" + std::strerror(errno) +
                      "); run `HWLOC_XML_VERBOSE=1 lstopo -i " + xml_path + "` for hwloc's reason");
  }

  hwloc_obj_t root = hwloc_get_root_obj(raw);
  topo.hostname = info(root, "HostName");
  topo.machine = info(root, "DMIProductName");
  if (topo.machine.empty()) topo.machine = info(root, "PlatformModel");
  topo.architecture = info(root, "Architecture");
  hwloc_obj_t pkg0 = hwloc_get_obj_by_type(raw, HWLOC_OBJ_PACKAGE, 0);
  topo.cpu_model = info(pkg0, "CPUModel");
  topo.packages = std::max(0, hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PACKAGE));
  topo.cores = std::max(0, hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_CORE));
  topo.pus = std::max(0, hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PU));
  for (hwloc_obj_t n = hwloc_get_next_obj_by_type(raw, HWLOC_OBJ_NUMANODE, nullptr); n;
       n = hwloc_get_next_obj_by_type(raw, HWLOC_OBJ_NUMANODE, n)) {
    NumaNode nn;
    nn.os_index = n->os_index;
    nn.memory_bytes = n->attr->numanode.local_memory;
    nn.cpus = cpulist(n->cpuset);
    topo.memory_bytes += nn.memory_bytes;
    topo.numa.push_back(nn);
  }
  if (topo.memory_bytes == 0) topo.memory_bytes = root->total_memory;

  read_gpus(raw, topo, pci_gpus);
  read_nics(raw, topo);
  return topo;
}

void assign_names(Topology& topo, const NameMatcher& match, const std::map<std::string, std::string>& overrides,
                  const MemoryLookup& memory) {
  std::set<std::string> warned;
  for (Gpu& g : topo.gpus) {
    std::optional<std::string> id;
    std::string lm = lower(g.model);
    for (const auto& [raw, oid] : overrides)
      if (lower(raw) == lm) {
        id = oid;
        g.name_source = "override";
      }
    if (!id && match && !g.model.empty()) {
      id = match(g.model);
      if (id) g.name_source = "catalogue";
    }
    if (!id) {
      g.gpu = "unknown";
      g.name_source = "none";
      if (warned.insert(g.model).second)
        topo.warnings.push_back("GPU model '" + (g.model.empty() ? std::string("(no name)") : g.model) +
                                "' is not in the GPU catalogue: add a `match` pattern to gpus.toml or map it in "
                                "crius.toml [discover.gpu_names]");
      continue;
    }
    g.gpu = *id;
    if (g.memory_gib <= 0 && memory) {
      if (auto gib = memory(g.gpu)) {
        g.memory_gib = *gib;
        g.memory_source = "catalogue";
      }
    }
  }
}

Result<NodeSummary> summarize(const Topology& topo) {
  NodeSummary s;
  s.numa_nodes = static_cast<int>(topo.numa.size());
  if (topo.gpus.empty()) return s;
  std::map<std::string, int> models;
  for (const Gpu& g : topo.gpus) ++models[g.gpu == "unknown" ? "unknown '" + g.model + "'" : g.gpu];
  if (models.size() > 1) {
    std::string list;
    for (const auto& [m, n] : models) list += (list.empty() ? "" : ", ") + std::to_string(n) + " x " + m;
    return make_error("the node has GPUs of " + std::to_string(models.size()) + " models (" + list +
                      "); a crius partition holds one GPU type");
  }
  const Gpu& g0 = topo.gpus.front();
  s.gpu = g0.gpu;
  s.model = g0.model;
  s.gpus_per_node = static_cast<int>(topo.gpus.size());
  s.memory_gib = g0.memory_gib;
  for (const Gpu& g : topo.gpus) s.memory_gib = std::min(s.memory_gib, g.memory_gib);
  if (!topo.domains.empty()) {
    // The domain size is the smallest domain; a GPU outside any domain makes
    // the node PCIe-only for the estimator's purposes.
    bool all_in = std::all_of(topo.gpus.begin(), topo.gpus.end(), [](const Gpu& g) { return g.nvlink_domain >= 0; });
    if (all_in) {
      s.nvlink_domain = static_cast<int>(topo.domains.front().gpus.size());
      double bw = topo.domains.front().bandwidth_gbs;
      bool switched = false;
      for (const auto& d : topo.domains) {
        s.nvlink_domain = std::min(s.nvlink_domain, static_cast<int>(d.gpus.size()));
        bw = std::min(bw, d.bandwidth_gbs);
        switched = switched || d.nvswitches > 0;
      }
      s.intra_node_bw_gbs = bw;
      s.intra_node_link = switched ? "nvswitch" : "nvlink";
      return s;
    }
  }
  s.intra_node_link = "pcie";
  double pcie = 0;
  bool known = true;
  for (const Gpu& g : topo.gpus) {
    if (g.pcie_gbs <= 0) known = false;
    pcie = pcie == 0 ? g.pcie_gbs : std::min(pcie, g.pcie_gbs);
  }
  if (known && pcie > 0) s.intra_node_bw_gbs = pcie;
  return s;
}

std::string node_name(const Topology& topo, const std::string& override_name) {
  if (!override_name.empty()) return override_name;
  std::string h = topo.hostname.substr(0, topo.hostname.find('.'));
  return h.empty() ? "node" : h;
}

}  // namespace crius::estimator::discover
