// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// GPU and model catalogues, model files, enum names.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/util.h"
#include "estimator/estimator.h"
#include "estimator/toml_util.h"

namespace crius::estimator {

using detail::TableReader;

std::string_view to_string(Dtype d) {
  switch (d) {
    case Dtype::fp16: return "fp16";
    case Dtype::bf16: return "bf16";
    case Dtype::fp32: return "fp32";
    case Dtype::fp64: return "fp64";
  }
  return "?";
}
std::string_view to_string(Family f) {
  switch (f) {
    case Family::transformer: return "transformer";
    case Family::moe: return "moe";
    case Family::wide_resnet: return "wide_resnet";
  }
  return "?";
}
std::string_view to_string(Optimizer o) {
  switch (o) {
    case Optimizer::adam: return "adam";
    case Optimizer::adafactor: return "adafactor";
    case Optimizer::sgd: return "sgd";
  }
  return "?";
}
std::string_view to_string(CommOp op) {
  switch (op) {
    case CommOp::all_reduce: return "all-reduce";
    case CommOp::all_gather: return "all-gather";
    case CommOp::reduce_scatter: return "reduce-scatter";
    case CommOp::all_to_all: return "all-to-all";
    case CommOp::send: return "send";
  }
  return "?";
}

// ---- GPUs -------------------------------------------------------------------

std::string GpuType::memory_technology() const {
  const std::string m = util::lower(memory_type);
  for (std::string_view tech : {"HBM", "GDDR"})
    if (m.size() > tech.size() && m.starts_with(util::lower(tech)) &&
        std::isdigit(static_cast<unsigned char>(m[tech.size()])))
      return std::string(tech);
  return {};
}

double GpuType::peak_tflops(Dtype d) const {
  switch (d) {
    case Dtype::fp16: return tflops_fp16;
    case Dtype::bf16: return tflops_bf16 > 0 ? tflops_bf16 : tflops_fp32;
    case Dtype::fp32: return tflops_fp32;
    case Dtype::fp64: return tflops_fp64;
  }
  return tflops_fp32;
}

static Result<GpuType> parse_gpu(const std::string& id, const toml::table& t, const std::string& file) {
  TableReader r(t, file, "[gpu." + id + "]");
  if (auto e = r.unknown_keys({"name", "memory_gib", "memory_bw_gbs", "tflops", "match", "gemm_efficiency",
                               "fp32_efficiency", "memory_efficiency", "attention_efficiency", "fused_attention_efficiency",
                               "gemm_half_gflop", "compute_capability", "memory_type", "sm_count"}))
    return *e;
  GpuType g;
  g.id = id;
  CRIUS_TRY_REQUIRED(g.name, r, "name", r.str("name"));
  CRIUS_TRY_REQUIRED(g.memory_gib, r, "memory_gib", r.number("memory_gib", 0, 4096));
  CRIUS_TRY_REQUIRED(g.memory_bw_gbs, r, "memory_bw_gbs", r.number("memory_bw_gbs", 0, 100000));
  CRIUS_TRY_ASSIGN(g.match, r.str_array("match"));
  CRIUS_TRY_ASSIGN(g.gemm_efficiency, r.number("gemm_efficiency", 0, 1));
  CRIUS_TRY_ASSIGN(g.fp32_efficiency, r.number("fp32_efficiency", 0, 1));
  CRIUS_TRY_ASSIGN(g.memory_efficiency, r.number("memory_efficiency", 0, 1));
  CRIUS_TRY_ASSIGN(g.attention_efficiency, r.number("attention_efficiency", 0, 10));
  CRIUS_TRY_ASSIGN(g.fused_attention_efficiency, r.number("fused_attention_efficiency", 0, 10));
  CRIUS_TRY_ASSIGN(g.gemm_half_gflop, r.number("gemm_half_gflop", 0, 1e6, false));
  CRIUS_TRY_ASSIGN(g.compute_capability, r.number("compute_capability", 1, 99));
  CRIUS_TRY_ASSIGN(g.memory_type, r.str("memory_type"));
  CRIUS_TRY_ASSIGN(g.sm_count, r.integer("sm_count", 1, 1024));
  if (!g.memory_type.empty() && g.memory_technology().empty())
    return r.bad("memory_type", "must name HBM or GDDR memory (\"HBM2e\", \"HBM3\", \"GDDR6\")");
  const toml::node* tf = t.get("tflops");
  if (!tf) return r.missing("tflops");
  const toml::table* tt = tf->as_table();
  if (!tt) return r.bad("tflops", "must be a table { fp16 = ..., bf16 = ..., tf32 = ..., fp32 = ..., fp64 = ... }");
  TableReader rt(*tt, file, "[gpu." + id + "].tflops");
  if (auto e = rt.unknown_keys({"fp16", "bf16", "tf32", "fp32", "fp64"})) return *e;
  CRIUS_TRY_REQUIRED(g.tflops_fp16, rt, "fp16", rt.number("fp16", 0, 100000));
  CRIUS_TRY_REQUIRED(g.tflops_fp32, rt, "fp32", rt.number("fp32", 0, 100000));
  // 0 (or absent) means the GPU has no such math mode.
  CRIUS_TRY_ASSIGN(g.tflops_bf16, rt.number("bf16", 0, 100000, false));
  CRIUS_TRY_ASSIGN(g.tflops_tf32, rt.number("tf32", 0, 100000, false));
  CRIUS_TRY_ASSIGN(g.tflops_fp64, rt.number("fp64", 0, 100000, false));
  return g;
}

Result<GpuCatalog> GpuCatalog::parse(std::string_view text, std::string source) {
  auto doc = detail::parse_toml(text, source);
  if (!doc) return make_error(doc.error());
  const toml::table& root = *doc;
  TableReader r(root, source, "the GPU catalogue");
  if (auto e = r.unknown_keys({"gpu", "runtime"})) return *e;
  GpuCatalog cat;
  cat.m_source = source;
  if (const toml::node* rn = root.get("runtime")) {
    const toml::table* rt = rn->as_table();
    if (!rt) return r.bad("runtime", "must be a table of [runtime.<name>] tables (megatron, megatron-core, alpa)");
    for (auto&& [k, v] : *rt) {
      auto runtime = parse_runtime(k.str());
      if (!runtime) return make_error(detail::where(source, k.source()) + ": [runtime." + std::string(k.str()) + "]: " +
                                      runtime.error());
      const toml::table* one = v.as_table();
      if (!one) return make_error(detail::where(source, k.source()) + ": 'runtime." + std::string(k.str()) +
                                  "' must be a table");
      TableReader pr(*one, source, "[runtime." + std::string(k.str()) + "]");
      std::vector<std::string> known = {"inter_node_factor", "runtime_overhead", "tp_comm_splits", "tp_comm_sms"};
      for (const auto& [key, field] : StackSwitches::kSwitches) known.emplace_back(key);
      if (auto e = pr.unknown_keys(known)) return *e;
      RuntimeProfile prof;
      prof.runtime = *runtime;
      prof.stack = StackSwitches::of(*runtime);
      CRIUS_TRY_ASSIGN(prof.inter_node_factor, pr.number("inter_node_factor", 0, 100));
      CRIUS_TRY_ASSIGN(prof.runtime_overhead, pr.number("runtime_overhead", 0, 100));
      CRIUS_TRY_ASSIGN(prof.tp_comm_splits, pr.integer("tp_comm_splits", 1, 64));
      CRIUS_TRY_ASSIGN(prof.tp_comm_sms, pr.integer("tp_comm_sms", 0, 1024));
      for (const auto& [key, field] : StackSwitches::kSwitches) {
        auto v = pr.boolean(key);
        if (!v) return make_error(v.error());
        if (*v) prof.stack.*field = **v;
      }
      cat.m_runtimes.push_back(prof);
    }
  }
  const toml::node* g = root.get("gpu");
  if (!g) return make_error(source + ": no [gpu.<id>] tables");
  const toml::table* gt = g->as_table();
  if (!gt) return r.bad("gpu", "must be a table of [gpu.<id>] tables");
  for (auto&& [k, v] : *gt) {
    const toml::table* one = v.as_table();
    if (!one)
      return make_error(detail::where(source, k.source()) + ": 'gpu." + std::string(k.str()) +
                        "' must be a table");
    auto parsed = parse_gpu(std::string(k.str()), *one, source);
    if (!parsed) return make_error(parsed.error());
    cat.m_types.push_back(std::move(*parsed));
  }
  if (cat.m_types.empty()) return make_error(source + ": no [gpu.<id>] tables");
  return cat;
}

void GpuCatalog::merge(const GpuCatalog& over) {
  for (const GpuType& t : over.m_types) {
    auto it = std::find_if(m_types.begin(), m_types.end(), [&](const GpuType& g) { return g.id == t.id; });
    if (it != m_types.end()) *it = t;
    else m_types.push_back(t);
  }
  for (const RuntimeProfile& r : over.m_runtimes) {
    auto it = std::find_if(m_runtimes.begin(), m_runtimes.end(),
                           [&](const RuntimeProfile& p) { return p.runtime == r.runtime; });
    if (it != m_runtimes.end()) *it = r;
    else m_runtimes.push_back(r);
  }
  m_source += " + " + over.m_source;
}

Result<GpuCatalog> GpuCatalog::load(const std::string& path) {
  auto text = detail::read_file(path);
  if (!text) return make_error(text.error());
  return parse(*text, path);
}

StackSwitches StackSwitches::of(Runtime r) {
  const bool on = r == Runtime::megatron_core;
  return StackSwitches{on, on, on, on, on, false};
}

RuntimeProfile GpuCatalog::runtime(Runtime r) const {
  for (const auto& p : m_runtimes)
    if (p.runtime == r) return p;
  RuntimeProfile p;
  p.runtime = r;
  p.stack = StackSwitches::of(r);
  return p;
}

const GpuType* GpuCatalog::find(std::string_view id) const {
  for (const auto& g : m_types)
    if (g.id == id) return &g;
  return nullptr;
}

std::optional<std::string> GpuCatalog::match_name(std::string_view raw) const {
  std::string lr = detail::lower(raw);
  const GpuType* best = nullptr;
  size_t best_len = 0;
  for (const auto& g : m_types)
    for (const auto& pat : g.match) {
      std::string lp = detail::lower(pat);
      if (!lp.empty() && lr.find(lp) != std::string::npos && lp.size() > best_len) {
        best = &g;
        best_len = lp.size();
      }
    }
  if (!best) return std::nullopt;
  return best->id;
}

std::vector<std::string> GpuCatalog::close_matches(std::string_view id) const {
  std::vector<std::string> ids;
  for (const auto& g : m_types) ids.push_back(g.id);
  return detail::close_matches(id, ids);
}

// ---- models -----------------------------------------------------------------

// Bottleneck blocks per ResNet stage for the supported depths.
static const std::vector<std::pair<int, std::vector<int>>>& resnet_stage_table() {
  static const std::vector<std::pair<int, std::vector<int>>> t = {
      {50, {3, 4, 6, 3}}, {101, {3, 4, 23, 3}}, {152, {3, 8, 36, 3}}, {200, {3, 24, 36, 3}}};
  return t;
}

std::vector<int> resnet_stage_sizes(int depth) {
  for (const auto& [d, s] : resnet_stage_table())
    if (d == depth) return s;
  return {};
}

static Result<Model> parse_model_table(const toml::table& t, const std::string& file, const std::string& context,
                                       std::string id) {
  TableReader r(t, file, context);
  Model m;
  m.id = std::move(id);
  std::string family;
  CRIUS_TRY_REQUIRED(family, r, "family", r.str("family"));
  if (family == "transformer") m.family = Family::transformer;
  else if (family == "moe") m.family = Family::moe;
  else if (family == "wide_resnet") m.family = Family::wide_resnet;
  else
    return r.bad("family", "= \"" + family + "\" is unknown (expected transformer, moe or wide_resnet)" +
                               detail::format_matches(detail::close_matches(family, {"transformer", "moe", "wide_resnet"})));

  std::vector<std::string> known = {"family", "dtype", "optimizer", "description"};
  if (m.family == Family::wide_resnet) {
    known.insert(known.end(), {"depth", "width_factor", "channels", "image_size", "classes"});
  } else {
    known.insert(known.end(), {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "seq_len", "vocab", "swiglu", "dropout",
                                  "position_embedding"});
    if (m.family == Family::moe) known.insert(known.end(), {"experts", "expert_every", "capacity_factor", "top_k", "expert_group_size"});
  }
  if (auto e = r.unknown_keys(known)) return *e;
  if (auto desc = r.str("description"); !desc) return make_error(desc.error());

  std::string dtype;
  CRIUS_TRY_REQUIRED(dtype, r, "dtype", r.str("dtype"));
  if (dtype == "fp16") m.dtype = Dtype::fp16;
  else if (dtype == "bf16") m.dtype = Dtype::bf16;
  else if (dtype == "fp32") m.dtype = Dtype::fp32;
  else if (dtype == "fp64") m.dtype = Dtype::fp64;
  else return r.bad("dtype", "= \"" + dtype + "\" is unknown (expected fp16, bf16, fp32 or fp64)");

  std::string opt = m.family == Family::wide_resnet ? "sgd" : "adam";
  CRIUS_TRY_ASSIGN(opt, r.str("optimizer"));
  if (opt == "adam") m.optimizer = Optimizer::adam;
  else if (opt == "adafactor") m.optimizer = Optimizer::adafactor;
  else if (opt == "sgd") m.optimizer = Optimizer::sgd;
  else return r.bad("optimizer", "= \"" + opt + "\" is unknown (expected adam, adafactor or sgd)");

  if (m.family == Family::wide_resnet) {
    long long depth = 0, wf = 0, ch = 0, img = 0, cls = 0;
    CRIUS_TRY_REQUIRED(depth, r, "depth", r.integer("depth", 1, 1000));
    CRIUS_TRY_REQUIRED(wf, r, "width_factor", r.integer("width_factor", 1, 64));
    CRIUS_TRY_REQUIRED(ch, r, "channels", r.integer("channels", 1, 16384));
    CRIUS_TRY_REQUIRED(img, r, "image_size", r.integer("image_size", 32, 8192));
    CRIUS_TRY_REQUIRED(cls, r, "classes", r.integer("classes", 1, 10000000));
    auto stages = resnet_stage_sizes(static_cast<int>(depth));
    if (stages.empty()) return r.bad("depth", "= " + std::to_string(depth) + " is not a bottleneck ResNet depth (expected 50, 101, 152 or 200)");
    m.depth = static_cast<int>(depth);
    m.width_factor = static_cast<int>(wf);
    m.channels = static_cast<int>(ch);
    m.image_size = static_cast<int>(img);
    m.classes = static_cast<int>(cls);
    m.layers = 0;
    for (int s : stages) m.layers += s;
    return m;
  }

  long long layers = 0, hidden = 0, heads = 0, kv = 0, ffn = 0, seq = 0, vocab = 0;
  CRIUS_TRY_REQUIRED(layers, r, "layers", r.integer("layers", 1, kMaxLayers));
  CRIUS_TRY_REQUIRED(hidden, r, "hidden", r.integer("hidden", 1, 1 << 20));
  CRIUS_TRY_REQUIRED(heads, r, "heads", r.integer("heads", 1, 1 << 14));
  CRIUS_TRY_ASSIGN(kv, r.integer("kv_heads", 1, 1 << 14));
  CRIUS_TRY_REQUIRED(ffn, r, "ffn_hidden", r.integer("ffn_hidden", 1, 1 << 22));
  CRIUS_TRY_REQUIRED(seq, r, "seq_len", r.integer("seq_len", 1, 1 << 24));
  CRIUS_TRY_REQUIRED(vocab, r, "vocab", r.integer("vocab", 1, 100000000));
  CRIUS_TRY_ASSIGN(m.swiglu, r.boolean("swiglu"));
  CRIUS_TRY_ASSIGN(m.dropout, r.number("dropout", 0, 1, false));
  if (m.dropout >= 1) return r.bad("dropout", "= " + util::fmt(m.dropout, 6) + " must be below 1");
  std::string pos = "learned";
  CRIUS_TRY_ASSIGN(pos, r.str("position_embedding"));
  if (pos != "learned" && pos != "rope")
    return r.bad("position_embedding", "= \"" + pos + "\" is unknown (expected learned or rope)");
  m.rope = pos == "rope";
  if (hidden % heads != 0)
    return r.bad("heads", "= " + std::to_string(heads) + " does not divide hidden = " + std::to_string(hidden));
  if (kv && heads % kv != 0)
    return r.bad("kv_heads", "= " + std::to_string(kv) + " does not divide heads = " + std::to_string(heads));
  m.layers = static_cast<int>(layers);
  m.hidden = static_cast<int>(hidden);
  m.heads = static_cast<int>(heads);
  m.kv_heads = static_cast<int>(kv ? kv : heads);
  m.ffn_hidden = static_cast<int>(ffn);
  m.seq_len = static_cast<int>(seq);
  m.vocab = static_cast<int>(vocab);
  if (m.family == Family::moe) {
    long long experts = 0, every = 0, topk = 2, group = 0;
    double cf = 1.0;
    CRIUS_TRY_REQUIRED(experts, r, "experts", r.integer("experts", 1, 1000000));
    CRIUS_TRY_REQUIRED(every, r, "expert_every", r.integer("expert_every", 1, kMaxLayers));
    CRIUS_TRY_REQUIRED(cf, r, "capacity_factor", r.number("capacity_factor", 0, 64));
    CRIUS_TRY_ASSIGN(topk, r.integer("top_k", 1, 1000000));
    CRIUS_TRY_ASSIGN(group, r.integer("expert_group_size", 0, 1 << 24));
    if (topk > experts)
      return r.bad("top_k", "= " + std::to_string(topk) + " exceeds experts = " + std::to_string(experts));
    if (every > layers)
      return r.bad("expert_every", "= " + std::to_string(every) + " exceeds layers = " + std::to_string(layers));
    m.experts = static_cast<int>(experts);
    m.expert_every = static_cast<int>(every);
    m.top_k = static_cast<int>(topk);
    m.capacity_factor = cf;
    m.expert_group_size = static_cast<int>(group);
  }
  return m;
}

Result<Model> parse_model(std::string_view text, std::string source) {
  auto doc = detail::parse_toml(text, source);
  if (!doc) return make_error(doc.error());
  return parse_model_table(*doc, source, "model file", source);
}

std::string to_spec(const Model& m) {
  std::string s = "family=" + std::string(to_string(m.family)) + ",dtype=" + std::string(to_string(m.dtype)) +
                  ",optimizer=" + std::string(to_string(m.optimizer));
  auto add = [&](const char* k, const std::string& v) { s += std::string(",") + k + "=" + v; };
  if (m.family == Family::wide_resnet) {
    add("depth", std::to_string(m.depth));
    add("width_factor", std::to_string(m.width_factor));
    add("channels", std::to_string(m.channels));
    add("image_size", std::to_string(m.image_size));
    add("classes", std::to_string(m.classes));
    return s;
  }
  add("layers", std::to_string(m.layers));
  add("hidden", std::to_string(m.hidden));
  add("heads", std::to_string(m.heads));
  add("kv_heads", std::to_string(m.kv_heads));
  add("ffn_hidden", std::to_string(m.ffn_hidden));
  add("seq_len", std::to_string(m.seq_len));
  add("vocab", std::to_string(m.vocab));
  add("swiglu", m.swiglu ? "true" : "false");
  // Keys newer than the spec format only where they differ from their defaults, so that a
  // job_submit plugin of the previous release still reads every other model's spec.
  if (m.dropout != Model{}.dropout) {
    char shortest[32];  // the shortest text that reads back as the same double
    add("dropout", std::string(shortest, std::to_chars(shortest, shortest + sizeof shortest, m.dropout).ptr));
  }
  if (m.rope) add("position_embedding", "rope");
  if (m.family == Family::moe) {
    add("experts", std::to_string(m.experts));
    add("expert_every", std::to_string(m.expert_every));
    add("capacity_factor", util::fmt(m.capacity_factor, 17));
    add("top_k", std::to_string(m.top_k));
    if (m.expert_group_size > 0) add("expert_group_size", std::to_string(m.expert_group_size));
  }
  return s;
}

Result<Model> parse_model_spec(std::string_view spec, std::string source) {
  const std::string what = source + ": model spec";
  if (spec.size() > kMaxModelSpecBytes)
    return make_error(what + " is longer than " + std::to_string(kMaxModelSpecBytes) + " bytes");
  for (char c : spec)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '=' || c == ',' ||
          c == '-' || c == '+'))
      return make_error(what + ": character " + util::shown(std::string(1, c)) + " is not allowed");
  // A flat table of scalars, built here (no parser recursion), then checked by the same
  // reader as a model file.
  toml::table t;
  for (const auto& item : util::split(spec, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq > 32)
      return make_error(what + ": " + util::shown(item) + " is not KEY=VALUE");
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (t.contains(key)) return make_error(what + ": key '" + key + "' given twice");
    if (auto i = util::to_int(value)) t.insert(key, static_cast<int64_t>(*i));
    else if (value == "true" || value == "false") t.insert(key, value == "true");
    else if (auto d = util::to_double(value)) t.insert(key, *d);
    else t.insert(key, value);
  }
  return parse_model_table(t, source, "model spec", source);
}

Result<Model> load_model_file(const std::string& path) {
  auto text = detail::read_file(path);
  if (!text) return make_error(text.error());
  return parse_model(*text, path);
}

Result<ModelCatalog> ModelCatalog::parse(std::string_view text, std::string source) {
  auto doc = detail::parse_toml(text, source);
  if (!doc) return make_error(doc.error());
  const toml::table& root = *doc;
  TableReader r(root, source, "the model catalogue");
  if (auto e = r.unknown_keys({"model"})) return *e;
  ModelCatalog cat;
  cat.m_source = source;
  const toml::node* mn = root.get("model");
  if (!mn) return make_error(source + ": no [model.\"<id>\"] tables");
  const toml::table* mt = mn->as_table();
  if (!mt) return r.bad("model", "must be a table of [model.\"<id>\"] tables");
  for (auto&& [k, v] : *mt) {
    const toml::table* one = v.as_table();
    std::string id(k.str());
    if (!one) return make_error(detail::where(source, k.source()) + ": 'model." + id + "' must be a table");
    auto m = parse_model_table(*one, source, "[model.\"" + id + "\"]", id);
    if (!m) return make_error(m.error());
    cat.m_models.push_back(std::move(*m));
  }
  return cat;
}

Result<ModelCatalog> ModelCatalog::load(const std::string& path) {
  auto text = detail::read_file(path);
  if (!text) return make_error(text.error());
  return parse(*text, path);
}

const Model* ModelCatalog::find(std::string_view id) const {
  for (const auto& m : m_models)
    if (m.id == id) return &m;
  return nullptr;
}

std::vector<std::string> ModelCatalog::close_matches(std::string_view id) const {
  std::vector<std::string> ids;
  for (const auto& m : m_models) ids.push_back(m.id);
  return detail::close_matches(id, ids);
}

Result<Model> ModelCatalog::resolve(std::string_view name) const {
  bool is_path = name.find('/') != std::string_view::npos ||
                 (name.size() > 5 && name.substr(name.size() - 5) == ".toml");
  if (is_path) return load_model_file(std::string(name));
  if (const Model* m = find(name)) return *m;
  return make_error("unknown model '" + std::string(name) + "' in " + m_source +
                    detail::format_matches(close_matches(name)));
}

}  // namespace crius::estimator
