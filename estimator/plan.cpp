// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "estimator/plan.h"

#include "common/json_reader.h"
#include "common/util.h"

namespace crius::estimator {

std::string_view to_string(Runtime r) {
  switch (r) {
    case Runtime::megatron: return "megatron";
    case Runtime::alpa: return "alpa";
    case Runtime::megatron_core: return "megatron-core";
  }
  return "?";
}

std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

Result<Runtime> parse_runtime(std::string_view t) {
  if (t == "megatron") return Runtime::megatron;
  if (t == "alpa") return Runtime::alpa;
  if (t == "megatron-core") return Runtime::megatron_core;
  return make_error("unknown runtime '" + std::string(t.substr(0, 64)) + "' (expected megatron, megatron-core or alpa)");
}

Result<Recompute> parse_recompute(std::string_view t) {
  if (t == "none") return Recompute::none;
  if (t == "selective") return Recompute::selective;
  if (t == "full") return Recompute::full;
  return make_error("unknown recompute '" + std::string(t.substr(0, 64)) + "' (expected none, selective or full)");
}

std::string to_string(const Schedule& s) {
  switch (s.kind) {
    case Schedule::Kind::gpipe: return "gpipe";
    case Schedule::Kind::one_f_one_b: return "1f1b";
    case Schedule::Kind::interleaved: return "interleaved:" + std::to_string(s.virtual_stages);
  }
  return "?";
}

Result<Schedule> parse_schedule(std::string_view t) {
  if (t == "gpipe") return Schedule{Schedule::Kind::gpipe, 1};
  if (t == "1f1b") return Schedule{Schedule::Kind::one_f_one_b, 1};
  constexpr std::string_view pre = "interleaved:";
  if (t.substr(0, pre.size()) == pre) {
    auto v = util::to_int(t.substr(pre.size()));
    if (v && *v >= 2 && *v <= 1024) return Schedule{Schedule::Kind::interleaved, static_cast<int>(*v)};
    return make_error("bad schedule '" + std::string(t.substr(0, 64)) +
                      "': V in interleaved:V must be an integer from 2 to 1024");
  }
  return make_error("unknown schedule '" + std::string(t.substr(0, 64)) + "' (expected gpipe, 1f1b or interleaved:V)");
}

// ---- Cell -------------------------------------------------------------------

std::string to_string(const Cell& c) {
  if (c.gpu.empty()) return "auto";
  std::string s = c.gpu;
  if (c.nodes > 0) s += ":" + std::to_string(c.nodes) + "x" + std::to_string(c.gpus_per_node);
  if (c.nodes > 0 && c.stages > 0) s += ":" + std::to_string(c.stages);
  return s;
}

std::string describe(const Cell& c) {
  return to_string(c) + (c.partition.empty() ? "" : " in " + c.partition);
}

namespace {

bool valid_type(std::string_view t) {
  if (t.empty() || t.size() > 32 || (t[0] >= '0' && t[0] <= '9') || t[0] == '-') return false;
  for (char ch : t)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_')) return false;
  return true;
}

// A positive decimal without sign or blanks; nullopt when not a number, 0 when too large.
std::optional<long long> count(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  for (char ch : s)
    if (ch < '0' || ch > '9') return std::nullopt;
  return util::to_int(s);
}

}  // namespace

Result<Cell> parse_cell(std::string_view text) {
  const std::string quoted = util::shown(text);
  const Error bad = make_error(quoted + " is not auto or TYPE[:NODESxGPUS[:STAGES]] (e.g. v100, a100:2x8, a100:2x8:4)");
  Cell c;
  if (text == "auto") return c;
  if (text.empty() || text.size() > 64) return bad;
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    std::size_t pos = text.find(':', start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? text.npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  if (parts.size() > 3 || !valid_type(parts[0])) return bad;
  c.gpu = std::string(parts[0]);
  if (parts.size() >= 2) {
    auto x = parts[1].find('x');
    if (x == std::string_view::npos) return bad;
    auto n = count(parts[1].substr(0, x)), g = count(parts[1].substr(x + 1));
    if (!n || !g) return bad;
    if (*n < 1 || *g < 1) return make_error(quoted + ": nodes and GPUs per node must be >= 1");
    if (*n > kMaxCellNodes) return make_error(quoted + ": nodes must be 1.." + std::to_string(kMaxCellNodes));
    if (*g > kMaxGpusPerNode)
      return make_error(quoted + ": GPUs per node must be 1.." + std::to_string(kMaxGpusPerNode));
    c.nodes = static_cast<int>(*n);
    c.gpus_per_node = static_cast<int>(*g);
  }
  if (parts.size() == 3) {
    auto st = count(parts[2]);
    if (!st) return bad;
    if (*st < 1 || *st > kMaxStages) return make_error(quoted + ": stages must be 1.." + std::to_string(kMaxStages));
    c.stages = static_cast<int>(*st);
  }
  return c;
}

nlohmann::json to_json(const Cell& c) {
  return {{"partition", c.partition}, {"gpu", c.gpu}, {"nodes", c.nodes},
          {"gpus_per_node", c.gpus_per_node}, {"stages", c.stages}};
}

Result<Cell> cell_from_json(const nlohmann::json& j, const std::string& what) {
  util::JsonObject r(j, what);
  if (auto ok = r.only({"partition", "gpu", "nodes", "gpus_per_node", "stages"}); !ok) return make_error(ok.error());
  Cell c;
  CRIUS_JSON_GET(c.partition, r.string("partition", std::string()));
  CRIUS_JSON_GET(c.gpu, r.string("gpu"));
  CRIUS_JSON_GET(c.nodes, r.integer("nodes", 0, kMaxCellNodes, 0));
  CRIUS_JSON_GET(c.gpus_per_node, r.integer("gpus_per_node", 0, kMaxGpusPerNode, 0));
  CRIUS_JSON_GET(c.stages, r.integer("stages", 0, kMaxStages, 0));
  for (const std::string* name : {&c.gpu, &c.partition})
    if (name->size() > 64 || util::shown(*name) != "'" + *name + "'")
      return make_error(what + ": a GPU type or partition name longer than 64 characters or not printable");
  return c;
}

// ---- Plan -------------------------------------------------------------------

int Plan::world_size() const {
  int n = 0;
  for (const auto& s : stages) n += s.gpus();
  return n;
}

bool Plan::has_layers() const { return !stages.empty() && stages.back().layer_end > 0; }

int Plan::num_layers() const { return has_layers() ? stages.back().layer_end : 0; }

bool Plan::uniform() const {
  for (const auto& s : stages)
    if (s.tp != stages[0].tp || s.dp != stages[0].dp || s.cp != stages[0].cp) return false;
  return true;
}

Result<void> validate(const Plan& plan, const std::string& what) {
  if (plan.stages.empty()) return make_error(what + ": the plan has no pipeline stages");
  if (plan.pp() > kMaxStages)
    return make_error(what + ": " + std::to_string(plan.pp()) + " pipeline stages (at most " +
                      std::to_string(kMaxStages) + ")");
  long long world = 0;
  const bool layers = plan.has_layers();
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& s = plan.stages[i];
    const std::string where = what + ": stage " + std::to_string(i);
    if (s.tp < 1) return make_error(where + ": tp must be >= 1 (got " + std::to_string(s.tp) + ")");
    if (s.dp < 1) return make_error(where + ": dp must be >= 1 (got " + std::to_string(s.dp) + ")");
    if (s.cp < 1) return make_error(where + ": cp must be >= 1 (got " + std::to_string(s.cp) + ")");
    world += static_cast<long long>(s.tp) * s.dp * s.cp;
    if (world > 1000000) return make_error(what + ": more than 1000000 ranks");
    if (!layers) {
      if (s.layer_begin != 0 || s.layer_end != 0)
        return make_error(where + ": either every stage or no stage has a layer range");
      continue;
    }
    const int expect = i == 0 ? 0 : plan.stages[i - 1].layer_end;
    if (s.layer_begin != expect)
      return make_error(where + ": layers [" + std::to_string(s.layer_begin) + ", " + std::to_string(s.layer_end) +
                        ") must start at layer " + std::to_string(expect) + " (ranges are contiguous from 0)");
    if (s.layer_end <= s.layer_begin)
      return make_error(where + ": layer range [" + std::to_string(s.layer_begin) + ", " +
                        std::to_string(s.layer_end) + ") is empty");
  }
  if (plan.micro_batches < 1 || plan.micro_batches > 100000000)
    return make_error(what + ": micro_batches must be 1..100000000");
  if (plan.micro_batch_size < 1 || plan.micro_batch_size > 100000000)
    return make_error(what + ": micro_batch_size must be 1..100000000");
  if (plan.zero < 0 || plan.zero > 3) return make_error(what + ": zero must be 0, 1, 2 or 3");
  return {};
}

nlohmann::json to_json(const Plan& plan) {
  nlohmann::json stages = nlohmann::json::array();
  const bool layers = plan.has_layers();
  for (const auto& s : plan.stages) {
    nlohmann::json st;
    if (layers) st["layers"] = {s.layer_begin, s.layer_end};
    st["dp"] = s.dp;
    st["tp"] = s.tp;
    if (s.cp > 1) st["cp"] = s.cp;
    stages.push_back(std::move(st));
  }
  nlohmann::json j = {{"version", kPlanVersion},
                      {"stages", std::move(stages)},
                      {"micro_batch_size", plan.micro_batch_size},
                      {"micro_batches", plan.micro_batches},
                      {"schedule", to_string(plan.schedule)},
                      {"recompute", std::string(to_string(plan.recompute))},
                      {"sequence_parallel", plan.sequence_parallel},
                      {"zero", plan.zero},
                      {"runtime", std::string(to_string(plan.runtime))}};
  if (!plan.expert_parallel) j["expert_parallel"] = false;
  if (plan.framework.kind != Framework::Kind::crius_train) j["framework"] = to_string(plan.framework);
  return j;
}

Result<Plan> plan_from_json(const nlohmann::json& j, const std::string& what) {
  util::JsonObject r(j, what);
  if (auto ok = r.only({"version", "stages", "micro_batch_size", "micro_batches", "schedule", "recompute",
                        "sequence_parallel", "zero", "runtime", "expert_parallel", "framework"});
      !ok)
    return make_error(ok.error());
  if (!j.contains("version"))
    return make_error(what + ": key 'version' is missing (this crius reads plan version " +
                      std::to_string(kPlanVersion) + ")");
  int version = 0;
  CRIUS_JSON_GET(version, r.integer("version", 0, 1000000));
  if (version != kPlanVersion)
    return make_error(what + ": plan version " + std::to_string(version) + " (this crius reads version " +
                      std::to_string(kPlanVersion) + ")");
  if (!j.contains("stages") || !j["stages"].is_array()) return make_error(what + ": key 'stages' must be an array");
  if (j["stages"].size() > static_cast<std::size_t>(kMaxStages))
    return make_error(what + ": more than " + std::to_string(kMaxStages) + " stages");
  Plan plan;
  int idx = 0;
  for (const auto& st : j["stages"]) {
    const std::string w = what + ": stages[" + std::to_string(idx++) + "]";
    util::JsonObject s(st, w);
    if (auto ok = s.only({"layers", "dp", "tp", "cp"}); !ok) return make_error(ok.error());
    StagePlan sp;
    CRIUS_JSON_GET(sp.tp, s.integer("tp", 1, 1000000));
    CRIUS_JSON_GET(sp.dp, s.integer("dp", 1, 1000000));
    CRIUS_JSON_GET(sp.cp, s.integer("cp", 1, 1000000, 1));
    if (s.has("layers")) {
      const auto& l = st["layers"];
      if (!l.is_array() || l.size() != 2 || !l[0].is_number_integer() || !l[1].is_number_integer() ||
          l[0].get<long long>() < 0 || l[0].get<long long>() > 10000000 || l[1].get<long long>() < 0 ||
          l[1].get<long long>() > 10000000)
        return make_error(w + ": key 'layers' must be [BEGIN, END], layer END excluded");
      sp.layer_begin = l[0].get<int>();
      sp.layer_end = l[1].get<int>();
    }
    plan.stages.push_back(sp);
  }
  CRIUS_JSON_GET(plan.micro_batch_size, r.integer("micro_batch_size", 1, 100000000, 1));
  CRIUS_JSON_GET(plan.micro_batches, r.integer("micro_batches", 1, 100000000, 1));
  CRIUS_JSON_GET(plan.zero, r.integer("zero", 0, 3, 0));
  CRIUS_JSON_GET(plan.sequence_parallel, r.boolean("sequence_parallel", false));
  CRIUS_JSON_GET(plan.expert_parallel, r.boolean("expert_parallel", true));
  std::string text;
  CRIUS_JSON_GET(text, r.string("schedule", std::string("1f1b")));
  auto sched = parse_schedule(text);
  if (!sched) return make_error(what + ": key 'schedule': " + sched.error());
  plan.schedule = *sched;
  CRIUS_JSON_GET(text, r.string("recompute", std::string("none")));
  auto rc = parse_recompute(text);
  if (!rc) return make_error(what + ": key 'recompute': " + rc.error());
  plan.recompute = *rc;
  CRIUS_JSON_GET(text, r.string("runtime", std::string("megatron")));
  auto rt = parse_runtime(text);
  if (!rt) return make_error(what + ": key 'runtime': " + rt.error());
  plan.runtime = *rt;
  CRIUS_JSON_GET(text, r.string("framework", std::string("crius-train")));
  auto fw = parse_framework(text);
  if (!fw) return make_error(what + ": key 'framework': " + fw.error());
  plan.framework = *fw;
  // A stage whose range is [0, 0) in a plan with layers is caught here.
  bool any_layers = false, all_layers = true;
  for (const auto& st : j["stages"]) {
    any_layers = any_layers || st.contains("layers");
    all_layers = all_layers && st.contains("layers");
  }
  if (any_layers && !all_layers) return make_error(what + ": either every stage or no stage has 'layers'");
  if (auto ok = validate(plan, what); !ok) return make_error(ok.error());
  return plan;
}

Result<Plan> plan_from_json_text(std::string_view text, const std::string& what) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return make_error(what + ": not valid JSON");
  return plan_from_json(j, what);
}

std::string plan_text(const Plan& plan) { return to_json(plan).dump(); }

std::uint64_t plan_hash(const Plan& plan) { return util::fnv1a64(plan_text(plan)); }

}  // namespace crius::estimator
