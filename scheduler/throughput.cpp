// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/throughput.h"

#include "estimator/toml_util.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <cstdio>
#include <map>
#include <tuple>

#include "common/util.h"

namespace crius::scheduler {

size_t CachedThroughput::KeyHash::operator()(const Key& k) const {
  size_t h = std::hash<std::string>()(k.model) * 31 + std::hash<std::string>()(k.gpu);
  h = h * 1000003 + static_cast<size_t>(k.batch);
  h = h * 131 + static_cast<size_t>(k.nodes);
  h = h * 131 + static_cast<size_t>(k.gpn);
  h = h * 7 + static_cast<size_t>(k.stack);
  return h * 2 + (k.dp ? 1 : 0);
}

Perf CachedThroughput::lookup(const Key& k, const std::string& model, int batch, const Cell& shape,
                              RuntimeChoice rt) {
  auto it = m_cache.find(k);
  if (it != m_cache.end()) return it->second;
  ++m_misses;
  Perf p = k.dp ? m_inner.data_parallel(model, batch, shape, rt) : m_inner.best(model, batch, shape, rt);
  if (m_max_entries && m_cache.size() >= m_max_entries) m_cache.clear();  // bounded: start over
  m_cache.emplace(k, p);
  return p;
}

Perf CachedThroughput::do_best(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) {
  return lookup(Key{model, shape.gpu, batch, shape.nodes, shape.gpus_per_node, false, rt.key()},
                model, batch, shape, rt);
}

Perf CachedThroughput::do_data_parallel(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) {
  return lookup(Key{model, shape.gpu, batch, shape.nodes, shape.gpus_per_node, true, rt.key()},
                model, batch, shape, rt);
}

Result<void> CachedThroughput::save(const std::string& path) const {
  std::map<std::tuple<std::string, int, std::string, int, int>, std::pair<const Perf*, const Perf*>>
      rows;
  for (const auto& [k, p] : m_cache) {
    auto& r = rows[{k.model, k.batch, k.gpu, k.nodes, k.gpn}];
    (k.dp ? r.second : r.first) = &p;
  }
  std::ofstream out(path);
  if (!out) return make_error(path + ": cannot write");
  char buf[64];
  auto num = [&](const Perf* p) -> std::string {
    if (!p || !p->feasible) return "";
    std::snprintf(buf, sizeof buf, "%.17g", p->iter_time_s);
    return buf;
  };
  out << "model,global_batch,gpu_type,num_nodes,gpus_per_node,iter_time_s,kind,dp_iter_time_s\n";
  for (const auto& [k, r] : rows) {
    if (!r.first) continue;  // only dp asked: best unknown, leave the shape out
    const auto& [model, batch, gpu, nodes, gpn] = k;
    out << model << ',' << batch << ',' << gpu << ',' << nodes << ',' << gpn << ',' << num(r.first)
        << ',' << (r.first->feasible ? "estimate" : "oom") << ',' << num(r.second) << '\n';
  }
  if (!out) return make_error(path + ": write failed");
  return {};
}

static std::string table_key(const std::string& model, int batch, const Cell& s) {
  return model + "|" + std::to_string(batch) + "|" + s.gpu + "|" + std::to_string(s.nodes) + "|" +
         std::to_string(s.gpus_per_node);
}

Result<std::unique_ptr<TableThroughput>> TableThroughput::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(path + ": cannot open");
  auto table = std::make_unique<TableThroughput>();
  table->m_path = path;
  std::string line;
  if (!std::getline(in, line)) return make_error(path + ":1: empty file, expected a header");
  std::vector<std::string> header = util::split_csv(line);
  std::map<std::string, int> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = static_cast<int>(i);
  for (const char* need : {"model", "global_batch", "gpu_type", "num_nodes", "gpus_per_node",
                           "iter_time_s"})
    if (!col.count(need))
      return make_error(path + ":1: header lacks column '" + need +
                        "' (expected model,size,global_batch,gpu_type,num_nodes,gpus_per_node,"
                        "iter_time_s,kind)");
  int lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line == "\r" || line[0] == '#') continue;
    std::vector<std::string> f = util::split_csv(line);
    if (f.size() != header.size())
      return make_error(path + ":" + std::to_string(lineno) + ": " + std::to_string(f.size()) +
                        " fields, the header has " + std::to_string(header.size()));
    auto field = [&](const char* name) -> const std::string& { return f[col.at(name)]; };
    std::string model = field("model");
    if (col.count("size") && !field("size").empty()) model += "__" + field("size");
    int batch = 0, nodes = 0, gpn = 0;
    const char* bad = nullptr;
    if (!util::parse_number(field("global_batch"), batch) || batch <= 0) bad = "global_batch";
    else if (!util::parse_number(field("num_nodes"), nodes) || nodes <= 0) bad = "num_nodes";
    else if (!util::parse_number(field("gpus_per_node"), gpn) || gpn <= 0) bad = "gpus_per_node";
    if (bad)
      return make_error(path + ":" + std::to_string(lineno) + ": column '" + bad +
                        "' must be a positive integer");
    Perf p;
    std::string kind = col.count("kind") ? field("kind") : "";
    double t = 0;
    if (kind == "oom" || field("iter_time_s").empty()) {
      p.why = "out of memory (measured)";
    } else if (!util::parse_number(field("iter_time_s"), t) || t <= 0) {
      return make_error(path + ":" + std::to_string(lineno) +
                        ": column 'iter_time_s' must be a positive number");
    } else {
      p.feasible = true;
      p.iter_time_s = t;
      p.samples_per_s = batch / t;
    }
    const Cell cell_shape = shape(field("gpu_type"), nodes, gpn);
    table->m_rows[table_key(model, batch, cell_shape)] = p;
    if (col.count("dp_iter_time_s")) {
      Perf dp;
      const std::string& v = field("dp_iter_time_s");
      if (v.empty()) {
        dp.why = "pure data parallelism does not fit (table)";
      } else if (!util::parse_number(v, t) || t <= 0) {
        return make_error(path + ":" + std::to_string(lineno) +
                          ": column 'dp_iter_time_s' must be a positive number or empty");
      } else {
        dp.feasible = true;
        dp.iter_time_s = t;
        dp.samples_per_s = batch / t;
      }
      table->m_dp_rows[table_key(model, batch, cell_shape)] = dp;
    }
    if (std::find(table->m_models.begin(), table->m_models.end(), model) == table->m_models.end())
      table->m_models.push_back(model);
  }
  return table;
}

Perf TableThroughput::do_best(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) {
  auto it = m_rows.find(table_key(model, batch, shape));
  if (it != m_rows.end()) return it->second;
  if (m_fallback) return m_fallback->best(model, batch, shape, rt);
  Perf p;
  p.why = "no measurement in " + m_path;
  return p;
}

// A measured table holds the best plan only; pure data parallelism comes from the
// fallback (the estimator) when there is one, else the table value stands in.
Perf TableThroughput::do_data_parallel(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) {
  auto it = m_dp_rows.find(table_key(model, batch, shape));
  if (it != m_dp_rows.end()) return it->second;
  if (m_fallback) {
    Perf dp = m_fallback->data_parallel(model, batch, shape, rt);
    if (dp.feasible || m_rows.find(table_key(model, batch, shape)) == m_rows.end()) return dp;
  }
  return do_best(model, batch, shape, rt);
}

Result<void> TableThroughput::check_model(const std::string& model) {
  if (std::find(m_models.begin(), m_models.end(), model) != m_models.end()) return {};
  if (m_fallback) return m_fallback->check_model(model);
  std::vector<std::string> near = util::close_matches(model, m_models, 3);
  return make_error("unknown model '" + model + "' (not in " + m_path + ")" +
                    (near.empty() ? "" : "; did you mean " + util::join(near, ", ") + "?"));
}

std::string TableThroughput::describe() const {
  return "table " + m_path + (m_fallback ? " + " + m_fallback->describe() : "");
}

std::string NoisyThroughput::describe() const {
  return m_inner.describe() + ", iteration times x exp(N(0, " + util::fmt(m_sigma) + ")) per shape, seed " +
         std::to_string(m_seed);
}

double NoisyThroughput::factor(const std::string& model, int batch, const Cell& shape) const {
  // Two uniforms from the shape's digest, then Box-Muller: the same shape, the same error.
  const std::string key = std::to_string(m_seed) + "|" + model + "|" + std::to_string(batch) + "|" + shape.gpu +
                          "|" + std::to_string(shape.nodes) + "|" + std::to_string(shape.gpus_per_node);
  auto mix = [](std::uint64_t x) {  // splitmix64's finaliser: every bit of the digest counts
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  const std::uint64_t h = mix(util::fnv1a64(key)), g = mix(util::fnv1a64(key + "|2"));
  const double u1 = (static_cast<double>(h >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
  const double u2 = static_cast<double>(g >> 11) / 9007199254740992.0;
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  return std::exp(m_sigma * z);
}

Perf NoisyThroughput::noisy(Perf p, const std::string& model, int batch, const Cell& shape) const {
  if (!p.feasible) return p;
  const double f = factor(model, batch, shape);
  p.iter_time_s *= f;
  p.samples_per_s /= f;
  return p;
}

Perf NoisyThroughput::do_best(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) {
  return noisy(m_inner.best(model, batch, shape, rt), model, batch, shape);
}

Perf NoisyThroughput::do_data_parallel(const std::string& model, int batch, const Cell& shape, RuntimeChoice rt) {
  return noisy(m_inner.data_parallel(model, batch, shape, rt), model, batch, shape);
}

}  // namespace crius::scheduler
