// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Cluster file and collective calibration tables.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "common/util.h"
#include "estimator/estimator.h"
#include "estimator/toml_util.h"

#ifndef CRIUS_SYSCONFDIR
#define CRIUS_SYSCONFDIR "/usr/local/etc"
#endif

namespace crius::estimator {

namespace fs = std::filesystem;
using detail::TableReader;

const std::vector<std::string>& cluster_file_keys() {
  static const std::vector<std::string> keys = {"gpus", "models", "framework", "partition", "job_submit", "criusd", "discover", "launch"};
  return keys;
}

const std::vector<std::string>& partition_keys() {
  static const std::vector<std::string> keys = {"name", "gpu", "nodes", "gpus_per_node", "intra_node_bw_gbs",
                                                "inter_node_bw_gbs", "inter_node_latency_us", "nvlink_domain",
                                                "numa_nodes", "calibration"};
  return keys;
}

const std::vector<std::string>& launch_keys() {
  static const std::vector<std::string> keys = {"progress_interval_s"};
  return keys;
}

std::string default_config_dir() { return std::string(CRIUS_SYSCONFDIR) + "/crius"; }

std::string find_crius_conf(const std::string& slurm_sysconfdir) {
  if (const char* c = std::getenv("CRIUS_CONF"); c && *c) return c;
  if (const char* s = std::getenv("SLURM_CONF"); s && *s) {
    std::string p = s;
    auto slash = p.rfind('/');
    return (slash == std::string::npos ? std::string(".") : p.substr(0, slash)) + "/crius.toml";
  }
  return slurm_sysconfdir + "/crius.toml";
}

std::string default_cluster_file(const std::string& slurm_sysconfdir) {
  const std::string site = find_crius_conf(slurm_sysconfdir);
  std::error_code ec;
  if (std::getenv("CRIUS_CONF") || fs::exists(site, ec)) return site;
  return default_config_dir() + "/crius.toml";
}

// ---- calibration CSV ----------------------------------------------------------

static std::optional<CommOp> parse_op(const std::string& s) {
  std::string t = detail::lower(s);
  std::replace(t.begin(), t.end(), '_', '-');
  if (t == "all-reduce" || t == "allreduce") return CommOp::all_reduce;
  if (t == "all-gather" || t == "allgather") return CommOp::all_gather;
  if (t == "reduce-scatter" || t == "reducescatter") return CommOp::reduce_scatter;
  if (t == "all-to-all" || t == "alltoall") return CommOp::all_to_all;
  if (t == "send" || t == "send-grouped" || t == "p2p") return CommOp::send;
  return std::nullopt;
}

Result<CommTable> CommTable::parse(std::string_view text, std::string source) {
  CommTable t;
  std::istringstream in{std::string(text)};
  std::string line;
  int lineno = 0;
  std::map<std::string, int> col;
  std::map<std::tuple<int, int, int, int, int>, size_t> index;
  // The allocation shape columns (nodes, gpus_per_node) are informative; the
  // nodes one group spans is nodes_per_group.
  const std::vector<std::string> required = {"op", "group_size", "nodes_per_group", "bytes", "time_s"};
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#' || line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto f = util::split_csv(line);
    if (col.empty()) {
      for (size_t i = 0; i < f.size(); ++i) col[f[i]] = static_cast<int>(i);
      for (const auto& r : required)
        if (!col.count(r))
          return make_error(source + ":" + std::to_string(lineno) + ":1: calibration header lacks column '" + r +
                            "' (needs op,group_size,nodes_per_group,bytes,time_s)");
      continue;
    }
    auto field = [&](const std::string& name) -> const std::string& {
      static const std::string empty;
      int i = col[name];
      return i < static_cast<int>(f.size()) ? f[i] : empty;
    };
    auto err = [&](const std::string& name, const std::string& what) {
      return make_error(source + ":" + std::to_string(lineno) + ":" + std::to_string(col[name] + 1) + ": column '" +
                        name + "' " + what);
    };
    auto op = parse_op(field("op"));
    if (!op) return err("op", "= '" + field("op") + "' is not all-reduce, all-gather, reduce-scatter, all-to-all or send");
    double gs, nodes, bytes, time;
    if (!util::parse_number(field("group_size"), gs) || gs < 1 || gs > 1e7 || gs != std::floor(gs))
      return err("group_size", "must be an integer >= 1");
    if (!util::parse_number(field("nodes_per_group"), nodes) || nodes < 1 || nodes > gs || nodes != std::floor(nodes))
      return err("nodes_per_group", "must be an integer in [1, group_size]");
    if (!util::parse_number(field("bytes"), bytes) || bytes <= 0 || bytes > 1e15)
      return err("bytes", "must be a number in (0, 1e15]");
    if (!util::parse_number(field("time_s"), time) || time <= 0 || time > 3600) return err("time_s", "must be in (0, 3600]");
    double an = 0, ag = 0;
    if (col.count("nodes") && !field("nodes").empty() &&
        (!util::parse_number(field("nodes"), an) || an < 1 || an > kMaxCellNodes || an != std::floor(an)))
      return err("nodes", "must be an integer from 1 to " + std::to_string(kMaxCellNodes));
    if (col.count("gpus_per_node") && !field("gpus_per_node").empty() &&
        (!util::parse_number(field("gpus_per_node"), ag) || ag < 1 || ag > kMaxGpusPerNode || ag != std::floor(ag)))
      return err("gpus_per_node", "must be an integer from 1 to " + std::to_string(kMaxGpusPerNode));
    auto key = std::make_tuple(static_cast<int>(*op), static_cast<int>(gs), static_cast<int>(nodes),
                               static_cast<int>(an), static_cast<int>(ag));
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, t.m_curves.size()).first;
      t.m_curves.push_back(Curve{*op, static_cast<int>(gs), static_cast<int>(nodes), static_cast<int>(an),
                                 static_cast<int>(ag), {}});
    }
    t.m_curves[it->second].points.emplace_back(bytes, time);
  }
  if (col.empty()) return make_error(source + ": empty calibration table (no header)");
  for (auto& c : t.m_curves) {
    std::sort(c.points.begin(), c.points.end());
    // Several measurements of one size (e.g. different node shapes): keep the median.
    std::vector<std::pair<double, double>> merged;
    for (size_t i = 0; i < c.points.size();) {
      size_t j = i;
      std::vector<double> ts;
      while (j < c.points.size() && c.points[j].first == c.points[i].first) ts.push_back(c.points[j++].second);
      std::nth_element(ts.begin(), ts.begin() + ts.size() / 2, ts.end());
      merged.emplace_back(c.points[i].first, ts[ts.size() / 2]);
      i = j;
    }
    c.points = std::move(merged);
  }
  return t;
}

std::vector<std::pair<int, int>> CommTable::allocations() const {
  std::vector<std::pair<int, int>> out;
  for (const auto& c : m_curves)
    if (c.alloc_nodes > 0 && c.alloc_gpn > 0 &&
        std::find(out.begin(), out.end(), std::make_pair(c.alloc_nodes, c.alloc_gpn)) == out.end())
      out.emplace_back(c.alloc_nodes, c.alloc_gpn);
  return out;
}

Result<CommTable> CommTable::load(const std::string& path) {
  auto text = detail::read_file(path);
  if (!text) return make_error(text.error());
  return parse(*text, path);
}

std::optional<double> CommTable::time_s(CommOp op, int group_size, int nodes, double bytes, int alloc_nodes,
                                        int alloc_gpn) const {
  const Curve* c = nullptr;
  for (const auto& cv : m_curves) {
    if (cv.op != op || cv.group_size != group_size || cv.nodes != nodes) continue;
    if (cv.alloc_nodes == alloc_nodes && cv.alloc_gpn == alloc_gpn) {
      c = &cv;
      break;
    }
    if (!c || cv.alloc_nodes * cv.alloc_gpn > c->alloc_nodes * c->alloc_gpn) c = &cv;
  }
  if (!c || c->points.empty()) return std::nullopt;
  const auto& p = c->points;
  if (bytes <= p.front().first) return p.front().second;
  if (bytes >= p.back().first) {
    // Beyond the largest message: extrapolate at the last measured bandwidth.
    return p.back().second * bytes / p.back().first;
  }
  auto hi = std::lower_bound(p.begin(), p.end(), std::make_pair(bytes, 0.0));
  auto lo = hi - 1;
  double x0 = std::log(lo->first), x1 = std::log(hi->first);
  double y0 = std::log(lo->second), y1 = std::log(hi->second);
  double w = (std::log(bytes) - x0) / (x1 - x0);
  return std::exp(y0 + w * (y1 - y0));
}

// ---- cluster file -------------------------------------------------------------

const Partition* Cluster::find_partition(std::string_view name) const {
  for (const auto& p : partitions)
    if (p.name == name) return &p;
  return nullptr;
}

static std::string resolve_path(const fs::path& base, const std::string& p) {
  fs::path q(p);
  if (q.is_absolute()) return q.string();
  return (base / q).lexically_normal().string();
}

static Result<std::string> find_catalog(const TableReader& r, const std::string& key, const fs::path& base,
                                        const std::string& fallback_dir, const std::string& file) {
  auto v = r.str(key);
  if (!v) return make_error(v.error());
  if (*v) {
    std::string p = resolve_path(base, **v);
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return r.bad(key, "= \"" + **v + "\": no such file " + p);
    return p;
  }
  for (const fs::path& dir : {base, fs::path(fallback_dir.empty() ? default_config_dir() : fallback_dir)}) {
    std::error_code ec;
    fs::path p = dir / file;
    if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
  }
  return make_error(r.at() + ": no '" + key + "' key and no " + file + " beside the cluster file or in " +
                    (fallback_dir.empty() ? default_config_dir() : fallback_dir));
}

Result<Cluster> load_cluster(const std::string& path, const std::string& fallback_dir) {
  auto text = detail::read_file(path);
  if (!text) return make_error(text.error());
  auto doc = detail::parse_toml(*text, path);
  if (!doc) return make_error(doc.error());
  Cluster c;
  c.path = path;
  c.table = std::move(*doc);
  TableReader r(c.table, path, "the cluster file");
  if (auto e = r.unknown_keys(cluster_file_keys())) return *e;
  for (const char* owned : {"job_submit", "criusd", "discover", "launch"}) {
    const toml::node* n = c.table.get(owned);
    if (n && !n->is_table()) return r.bad(owned, "must be a table");
  }
  if (const toml::table* launch = c.table["launch"].as_table()) {
    TableReader lr(*launch, path, "[launch]");
    if (auto e = lr.unknown_keys(launch_keys())) return *e;
    CRIUS_TRY_ASSIGN(c.progress_interval_s, lr.number("progress_interval_s", 1, 86400, false));
  }
  fs::path base = fs::path(path).parent_path();
  if (base.empty()) base = ".";
  {
    auto fw = r.str("framework");
    if (!fw) return make_error(fw.error());
    if (*fw) {
      auto f = parse_framework(**fw);
      if (!f) return r.bad("framework", f.error());
      c.framework = *f;
    }
  }

  // gpus = "file" or ["file", "calibration", ...]: each later file adds its types, replacing
  // those of the same id.
  const toml::node* gn = c.table.get("gpus");
  if (gn && gn->is_array()) {
    auto files = r.str_array("gpus");
    if (!files) return make_error(files.error());
    if (!*files || (*files)->empty()) return r.bad("gpus", "must name at least one file");
    bool first = true;
    for (const std::string& f : **files) {
      const std::string p = resolve_path(base, f);
      std::error_code ec;
      if (!fs::is_regular_file(p, ec)) return r.bad("gpus", "names \"" + f + "\": no such file " + p);
      auto one = GpuCatalog::load(p);
      if (!one) return make_error(one.error());
      if (first) c.gpus = std::move(*one);
      else c.gpus.merge(*one);
      first = false;
    }
  } else {
    auto gpath = find_catalog(r, "gpus", base, fallback_dir, "gpus.toml");
    if (!gpath) return make_error(gpath.error());
    auto gpus = GpuCatalog::load(*gpath);
    if (!gpus) return make_error(gpus.error());
    c.gpus = std::move(*gpus);
  }
  auto mpath = find_catalog(r, "models", base, fallback_dir, "models.toml");
  if (!mpath) return make_error(mpath.error());
  auto models = ModelCatalog::load(*mpath);
  if (!models) return make_error(models.error());
  c.models = std::move(*models);

  const toml::node* pn = c.table.get("partition");
  if (!pn) return make_error(path + ": no [[partition]] tables");
  const toml::array* pa = pn->as_array();
  if (!pa || !pa->is_array_of_tables()) return r.bad("partition", "must be an array of tables [[partition]]");
  std::map<std::string, std::shared_ptr<const CommTable>> tables;
  long long total_gpus = 0;
  int idx = 0;
  for (const auto& node : *pa) {
    ++idx;
    const toml::table& pt = *node.as_table();
    TableReader pr(pt, path, "[[partition]] #" + std::to_string(idx));
    if (auto e = pr.unknown_keys(partition_keys())) return *e;
    Partition p;
    CRIUS_TRY_REQUIRED(p.name, pr, "name", pr.str("name"));
    if (p.name.empty() || p.name.find_first_of(" \t,") != std::string::npos)
      return pr.bad("name", "must be a non-empty Slurm partition name without spaces or commas");
    TableReader prn(pt, path, "[[partition]] '" + p.name + "'");
    if (c.find_partition(p.name)) return prn.bad("name", "repeats partition '" + p.name + "'");
    CRIUS_TRY_REQUIRED(p.gpu, prn, "gpu", prn.str("gpu"));
    if (!c.gpus.find(p.gpu))
      return prn.bad("gpu", "= \"" + p.gpu + "\" is not in the GPU catalogue " + c.gpus.source() +
                                detail::format_matches(c.gpus.close_matches(p.gpu)));
    long long nodes = 0, gpn = 0, nvd = 0, numa = 0;
    CRIUS_TRY_REQUIRED(nodes, prn, "nodes", prn.integer("nodes", 1, kMaxCellNodes));
    CRIUS_TRY_REQUIRED(gpn, prn, "gpus_per_node", prn.integer("gpus_per_node", 1, 64));
    CRIUS_TRY_REQUIRED(p.intra_node_bw_gbs, prn, "intra_node_bw_gbs", prn.number("intra_node_bw_gbs", 0.01, 100000, false));
    CRIUS_TRY_REQUIRED(p.inter_node_bw_gbs, prn, "inter_node_bw_gbs", prn.number("inter_node_bw_gbs", 0.001, 100000, false));
    CRIUS_TRY_REQUIRED(p.inter_node_latency_us, prn, "inter_node_latency_us",
                       prn.number("inter_node_latency_us", 0, 1e6, false));
    CRIUS_TRY_ASSIGN(nvd, prn.integer("nvlink_domain", 1, 64));
    CRIUS_TRY_ASSIGN(numa, prn.integer("numa_nodes", 1, 64));
    if (nvd && gpn % nvd != 0)
      return prn.bad("nvlink_domain", "= " + std::to_string(nvd) + " does not divide gpus_per_node = " + std::to_string(gpn));
    p.nodes = static_cast<int>(nodes);
    p.gpus_per_node = static_cast<int>(gpn);
    p.nvlink_domain = static_cast<int>(nvd);
    p.numa_nodes = static_cast<int>(numa);
    total_gpus += nodes * gpn;
    if (total_gpus > 10000000)
      return prn.bad("nodes", "brings the cluster to " + std::to_string(total_gpus) + " GPUs (more than 10^7 is absurd)");
    std::string cal;
    CRIUS_TRY_ASSIGN(cal, prn.str("calibration"));
    if (!cal.empty()) {
      p.calibration = resolve_path(base, cal);
      auto it = tables.find(p.calibration);
      if (it == tables.end()) {
        std::error_code ec;
        if (!fs::is_regular_file(p.calibration, ec))
          return prn.bad("calibration", "= \"" + cal + "\": no such file " + p.calibration);
        auto t = CommTable::load(p.calibration);
        if (!t) return make_error(t.error());
        it = tables.emplace(p.calibration, std::make_shared<const CommTable>(std::move(*t))).first;
      }
      p.comm = it->second;
    }
    c.partitions.push_back(std::move(p));
  }
  if (c.partitions.empty()) return make_error(path + ": no [[partition]] tables");
  return c;
}

}  // namespace crius::estimator
