#include "launcher/layout.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <numeric>
#include <sstream>

namespace crius::launcher {

namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n')) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

std::optional<long long> to_int(std::string_view s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

bool valid_schedule(const std::string& s) {
  if (s == "gpipe" || s == "1f1b") return true;
  if (s.rfind("interleaved:", 0) == 0) {
    auto v = to_int(std::string_view(s).substr(12));
    return v && *v >= 1;
  }
  return false;
}

}  // namespace

int Plan::world_size() const {
  int n = 0;
  for (const auto& s : stages) n += s.size();
  return n;
}

int Plan::num_layers() const {
  if (!has_layers()) return 0;
  return stages.back().last_layer + 1;
}

bool Plan::uniform() const {
  for (const auto& s : stages)
    if (s.tp != stages[0].tp || s.dp != stages[0].dp) return false;
  return true;
}

std::string format_int_list(const std::vector<int>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

std::string format_layer_ranges(const Plan& plan) {
  std::string out;
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& s = plan.stages[i];
    out += (i ? "," : "") + std::to_string(s.first_layer) + "-" + std::to_string(s.last_layer);
  }
  return out;
}

std::string canonical(const Plan& plan) {
  std::ostringstream o;
  o << "pp=" << plan.pp() << ";stages=";
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& s = plan.stages[i];
    o << (i ? "," : "");
    if (s.first_layer >= 0) o << s.first_layer << "-" << s.last_layer << ":";
    o << "tp" << s.tp << ":dp" << s.dp;
  }
  o << ";mb=" << plan.micro_batches << ";mbs=" << plan.micro_batch_size << ";schedule=" << plan.schedule
    << ";recompute=" << plan.recompute << ";sp=" << (plan.sequence_parallel ? 1 : 0) << ";zero=" << plan.zero;
  return o.str();
}

std::uint64_t plan_hash(const Plan& plan) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : canonical(plan)) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

Result<void> validate(const Plan& plan, const std::string& what) {
  if (plan.stages.empty()) return make_error(what + ": the plan has no pipeline stages");
  if (plan.stages.size() > 4096) return make_error(what + ": " + std::to_string(plan.stages.size()) + " pipeline stages is absurd");
  long long world = 0;
  for (size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& s = plan.stages[i];
    std::string where = what + ": stage " + std::to_string(i);
    if (s.tp < 1) return make_error(where + ": tp must be >= 1 (got " + std::to_string(s.tp) + ")");
    if (s.dp < 1) return make_error(where + ": dp must be >= 1 (got " + std::to_string(s.dp) + ")");
    world += static_cast<long long>(s.tp) * s.dp;
    if (world > 1000000) return make_error(what + ": more than 1000000 ranks");
    bool with_layers = plan.stages[0].first_layer >= 0;
    if (with_layers != (s.first_layer >= 0))
      return make_error(where + ": either every stage or no stage has a layer range");
    if (with_layers) {
      int expect = i == 0 ? 0 : plan.stages[i - 1].last_layer + 1;
      if (s.first_layer != expect)
        return make_error(where + ": layers " + std::to_string(s.first_layer) + "-" + std::to_string(s.last_layer) +
                          " must start at layer " + std::to_string(expect) + " (ranges are contiguous from 0)");
      if (s.last_layer < s.first_layer)
        return make_error(where + ": layer range " + std::to_string(s.first_layer) + "-" + std::to_string(s.last_layer) +
                          " is empty");
    }
  }
  if (plan.micro_batches < 1) return make_error(what + ": micro_batches must be >= 1");
  if (plan.micro_batch_size < 1) return make_error(what + ": micro_batch_size must be >= 1");
  if (!valid_schedule(plan.schedule))
    return make_error(what + ": unknown schedule '" + plan.schedule + "' (gpipe, 1f1b, interleaved:V)");
  if (plan.recompute != "none" && plan.recompute != "selective" && plan.recompute != "full")
    return make_error(what + ": unknown recompute '" + plan.recompute + "' (none, selective, full)");
  if (plan.zero != 0 && plan.zero != 1) return make_error(what + ": zero must be 0 or 1");
  return {};
}

Result<std::vector<int>> parse_int_list(std::string_view text, const std::string& what) {
  std::vector<int> out;
  for (const auto& item : split(text, ',')) {
    auto v = to_int(item);
    if (!v || *v < 1 || *v > 1000000)
      return make_error(what + ": '" + std::string(text) + "' is not a positive integer or a comma list of them");
    out.push_back(static_cast<int>(*v));
  }
  return out;
}

Result<std::vector<std::pair<int, int>>> parse_layer_ranges(std::string_view text, const std::string& what) {
  std::vector<std::pair<int, int>> out;
  for (const auto& item : split(text, ',')) {
    auto dash = item.find('-');
    std::optional<long long> a, b;
    if (dash == std::string::npos) {
      a = b = to_int(item);
    } else {
      a = to_int(std::string_view(item).substr(0, dash));
      b = to_int(std::string_view(item).substr(dash + 1));
    }
    if (!a || !b || *a < 0 || *b < *a || *b > 10000000)
      return make_error(what + ": '" + item + "' is not a layer range FIRST-LAST (e.g. \"0-11,12-23\")");
    out.emplace_back(static_cast<int>(*a), static_cast<int>(*b));
  }
  return out;
}

namespace {

// Applies per-stage lists (one value = every stage) to a plan with `pp` stages.
Result<void> apply_lists(Plan& plan, int pp, const std::vector<int>& tp, const std::vector<int>& dp,
                         const std::string& tp_what, const std::string& dp_what) {
  if (tp.size() != 1 && static_cast<int>(tp.size()) != pp)
    return make_error(tp_what + ": " + std::to_string(tp.size()) + " values for " + std::to_string(pp) +
                      " stages (give one value or one per stage)");
  if (dp.size() != 1 && static_cast<int>(dp.size()) != pp)
    return make_error(dp_what + ": " + std::to_string(dp.size()) + " values for " + std::to_string(pp) +
                      " stages (give one value or one per stage)");
  plan.stages.resize(pp);
  for (int i = 0; i < pp; ++i) {
    plan.stages[i].tp = tp.size() == 1 ? tp[0] : tp[i];
    plan.stages[i].dp = dp.size() == 1 ? dp[0] : dp[i];
  }
  return {};
}

Result<void> apply_layers(Plan& plan, const std::string& ranges, int layers, const std::string& what) {
  int pp = plan.pp();
  if (!ranges.empty()) {
    auto r = parse_layer_ranges(ranges, what);
    if (!r) return make_error(r.error());
    if (static_cast<int>(r->size()) != pp)
      return make_error(what + ": " + std::to_string(r->size()) + " layer ranges for " + std::to_string(pp) + " stages");
    for (int i = 0; i < pp; ++i) {
      plan.stages[i].first_layer = (*r)[i].first;
      plan.stages[i].last_layer = (*r)[i].second;
    }
    if (layers > 0 && plan.num_layers() != layers)
      return make_error(what + ": the ranges cover " + std::to_string(plan.num_layers()) + " layers, not " +
                        std::to_string(layers));
  } else if (layers > 0) {
    if (layers % pp != 0)
      return make_error("--layers: " + std::to_string(layers) + " layers do not divide into " + std::to_string(pp) +
                        " equal stages; give --stage-layers");
    int per = layers / pp;
    for (int i = 0; i < pp; ++i) {
      plan.stages[i].first_layer = i * per;
      plan.stages[i].last_layer = (i + 1) * per - 1;
    }
  }
  return {};
}

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

Result<std::optional<Plan>> plan_from_env(const EnvLookup& env) {
  Plan plan;
  if (auto js = env("CRIUS_PLAN_JSON"); js && !js->empty()) {
    auto p = plan_from_json_text(*js, "CRIUS_PLAN_JSON");
    if (!p) return make_error(p.error());
    return std::optional<Plan>(std::move(*p));
  }
  auto pp_s = env("CRIUS_PP_SIZE");
  auto tp_s = env("CRIUS_STAGE_TP");
  if (!pp_s && !tp_s) return std::optional<Plan>();
  if (!pp_s) return make_error("CRIUS_STAGE_TP is set but CRIUS_PP_SIZE is not");
  auto pp = to_int(trim(*pp_s));
  if (!pp || *pp < 1 || *pp > 4096) return make_error("CRIUS_PP_SIZE: '" + *pp_s + "' is not a stage count");
  auto tp = parse_int_list(tp_s.value_or("1"), "CRIUS_STAGE_TP");
  if (!tp) return make_error(tp.error());
  auto dp = parse_int_list(env("CRIUS_STAGE_DP").value_or("1"), "CRIUS_STAGE_DP");
  if (!dp) return make_error(dp.error());
  if (auto r = apply_lists(plan, static_cast<int>(*pp), *tp, *dp, "CRIUS_STAGE_TP", "CRIUS_STAGE_DP"); !r)
    return make_error(r.error());
  if (auto r = apply_layers(plan, env("CRIUS_STAGE_LAYERS").value_or(""), 0, "CRIUS_STAGE_LAYERS"); !r)
    return make_error(r.error());
  for (auto [name, field] : {std::pair{"CRIUS_MICRO_BATCHES", &plan.micro_batches},
                             std::pair{"CRIUS_MICRO_BATCH_SIZE", &plan.micro_batch_size}}) {
    if (auto v = env(name)) {
      auto n = to_int(trim(*v));
      if (!n || *n < 1 || *n > 100000000) return make_error(std::string(name) + ": '" + *v + "' is not a positive integer");
      *field = static_cast<int>(*n);
    }
  }
  if (auto v = env("CRIUS_SCHEDULE")) plan.schedule = trim(*v);
  if (auto v = env("CRIUS_RECOMPUTE")) plan.recompute = trim(*v);
  if (auto v = env("CRIUS_SEQUENCE_PARALLEL")) plan.sequence_parallel = trim(*v) == "1" || trim(*v) == "on";
  if (auto v = env("CRIUS_ZERO")) plan.zero = trim(*v) == "1" ? 1 : 0;
  if (auto r = validate(plan, "CRIUS_* environment"); !r) return make_error(r.error());
  return std::optional<Plan>(std::move(plan));
}

namespace {

Result<int> json_int(const nlohmann::json& obj, const char* key, const std::string& what, int fallback) {
  if (!obj.contains(key)) return fallback;
  const auto& v = obj[key];
  if (!v.is_number_integer()) return make_error(what + ": key '" + key + "' must be an integer");
  return v.get<int>();
}

Result<std::pair<int, int>> json_layers(const nlohmann::json& st, const std::string& what) {
  if (st.contains("layers")) {
    const auto& l = st["layers"];
    if (l.is_string()) {
      auto r = parse_layer_ranges(l.get<std::string>(), what + ": key 'layers'");
      if (!r) return make_error(r.error());
      if (r->size() != 1) return make_error(what + ": key 'layers' must be one range");
      return (*r)[0];
    }
    // crius-estimate's form: [begin, end), end exclusive.
    if (l.is_array() && l.size() == 2 && l[0].is_number_integer() && l[1].is_number_integer())
      return std::pair{l[0].get<int>(), l[1].get<int>() - 1};
    if (l.is_object() && l.contains("first") && l.contains("last"))
      return std::pair{l["first"].get<int>(), l["last"].get<int>()};
    return make_error(what + ": key 'layers' must be \"FIRST-LAST\", [BEGIN, END) or {\"first\":..,\"last\":..}");
  }
  if (st.contains("first_layer") && st.contains("last_layer")) {
    if (!st["first_layer"].is_number_integer() || !st["last_layer"].is_number_integer())
      return make_error(what + ": keys 'first_layer'/'last_layer' must be integers");
    return std::pair{st["first_layer"].get<int>(), st["last_layer"].get<int>()};
  }
  return std::pair{-1, -1};
}

}  // namespace

Result<Plan> plan_from_json(const nlohmann::json& doc_in, const std::string& what) {
  const nlohmann::json* doc = &doc_in;
  if (doc->is_object() && doc->contains("cells")) {
    const auto& cells = (*doc)["cells"];
    if (!cells.is_array()) return make_error(what + ": key 'cells' must be an array");
    const nlohmann::json* pick = nullptr;
    for (const auto& c : cells)
      if (c.is_object() && c.value("feasible", true)) { pick = &c; break; }
    if (!pick) return make_error(what + ": no feasible cell in 'cells'");
    doc = pick;
  }
  if (doc->is_object() && doc->contains("plan")) doc = &(*doc)["plan"];
  if (!doc->is_object()) return make_error(what + ": expected a JSON object with a plan");
  if (!doc->contains("stages") || !(*doc)["stages"].is_array())
    return make_error(what + ": the plan has no 'stages' array");
  Plan plan;
  int idx = 0;
  for (const auto& st : (*doc)["stages"]) {
    std::string w = what + ": stages[" + std::to_string(idx++) + "]";
    if (!st.is_object()) return make_error(w + " must be an object");
    StagePlan sp;
    auto tp = json_int(st, "tp", w, 1);
    if (!tp) return make_error(tp.error());
    auto dp = json_int(st, "dp", w, 1);
    if (!dp) return make_error(dp.error());
    auto layers = json_layers(st, w);
    if (!layers) return make_error(layers.error());
    sp.tp = *tp;
    sp.dp = *dp;
    sp.first_layer = layers->first;
    sp.last_layer = layers->second;
    plan.stages.push_back(sp);
  }
  auto mb = json_int(*doc, "micro_batches", what, 1);
  if (!mb) return make_error(mb.error());
  auto mbs = json_int(*doc, "micro_batch_size", what, 1);
  if (!mbs) return make_error(mbs.error());
  auto zero = json_int(*doc, "zero", what, 0);
  if (!zero) return make_error(zero.error());
  plan.micro_batches = *mb;
  plan.micro_batch_size = *mbs;
  plan.zero = *zero;
  if (doc->contains("schedule")) {
    if (!(*doc)["schedule"].is_string()) return make_error(what + ": key 'schedule' must be a string");
    plan.schedule = (*doc)["schedule"].get<std::string>();
  }
  if (doc->contains("recompute")) {
    if (!(*doc)["recompute"].is_string()) return make_error(what + ": key 'recompute' must be a string");
    plan.recompute = (*doc)["recompute"].get<std::string>();
  }
  if (doc->contains("sequence_parallel")) {
    const auto& v = (*doc)["sequence_parallel"];
    plan.sequence_parallel = v.is_boolean() ? v.get<bool>() : (v.is_string() && v.get<std::string>() == "on");
  }
  if (auto r = validate(plan, what); !r) return make_error(r.error());
  return plan;
}

Result<Plan> plan_from_json_text(std::string_view text, const std::string& what) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return make_error(what + ": malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
  return plan_from_json(doc, what);
}

nlohmann::json to_json(const Plan& plan) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : plan.stages) {
    nlohmann::json st = {{"tp", s.tp}, {"dp", s.dp}};
    if (s.first_layer >= 0) st["layers"] = {s.first_layer, s.last_layer + 1};  // [begin, end)
    stages.push_back(st);
  }
  return {{"stages", stages},
          {"micro_batches", plan.micro_batches},
          {"micro_batch_size", plan.micro_batch_size},
          {"schedule", plan.schedule},
          {"recompute", plan.recompute},
          {"sequence_parallel", plan.sequence_parallel},
          {"zero", plan.zero}};
}

Result<Plan> plan_from_shape(const std::string& tp_s, int pp, const std::string& dp_s, const std::string& stage_layers,
                             int layers) {
  if (pp < 1) return make_error("--pp: must be >= 1 (got " + std::to_string(pp) + ")");
  auto tp = parse_int_list(tp_s, "--tp");
  if (!tp) return make_error(tp.error());
  auto dp = parse_int_list(dp_s, "--dp");
  if (!dp) return make_error(dp.error());
  Plan plan;
  if (auto r = apply_lists(plan, pp, *tp, *dp, "--tp", "--dp"); !r) return make_error(r.error());
  if (auto r = apply_layers(plan, stage_layers, layers, "--stage-layers"); !r) return make_error(r.error());
  if (auto r = validate(plan, "plan"); !r) return make_error(r.error());
  return plan;
}

Result<std::vector<std::string>> expand_hostlist(std::string_view list) {
  std::vector<std::string> out;
  std::string item;
  int depth = 0;
  auto flush = [&](const std::string& word) -> Result<void> {
    if (word.empty()) return {};
    auto lb = word.find('[');
    if (lb == std::string::npos) {
      out.push_back(word);
      return {};
    }
    auto rb = word.find(']', lb);
    if (rb == std::string::npos) return make_error("host list '" + std::string(list) + "': missing ']'");
    std::string prefix = word.substr(0, lb), suffix = word.substr(rb + 1);
    std::vector<std::string> tails;
    if (suffix.find('[') != std::string::npos) {
      auto rest = expand_hostlist(suffix);
      if (!rest) return make_error(rest.error());
      tails = *rest;
    } else {
      tails.push_back(suffix);
    }
    for (const auto& part : split(std::string_view(word).substr(lb + 1, rb - lb - 1), ',')) {
      auto dash = part.find('-');
      std::string a = part.substr(0, dash), b = dash == std::string::npos ? a : part.substr(dash + 1);
      auto lo = to_int(a), hi = to_int(b);
      if (!lo || !hi || *hi < *lo || *hi - *lo > 100000)
        return make_error("host list '" + std::string(list) + "': bad range '" + part + "'");
      for (long long n = *lo; n <= *hi; ++n) {
        std::string num = std::to_string(n);
        if (num.size() < a.size()) num.insert(0, a.size() - num.size(), '0');  // keep zero padding
        for (const auto& t : tails) out.push_back(prefix + num + t);
      }
    }
    return {};
  };
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      if (auto r = flush(trim(item)); !r) return make_error(r.error());
      item.clear();
    } else {
      item += c;
    }
  }
  if (auto r = flush(trim(item)); !r) return make_error(r.error());
  return out;
}

Result<Layout> Layout::make(const Plan& plan, std::vector<std::string> hosts, int gpus_per_node) {
  if (auto r = validate(plan, "plan"); !r) return make_error(r.error());
  Layout l;
  l.m_plan = plan;
  l.m_world = plan.world_size();
  int base = 0;
  for (const auto& s : plan.stages) {
    l.m_base.push_back(base);
    base += s.size();
  }
  if (hosts.empty()) {
    hosts.push_back("localhost");
    if (gpus_per_node <= 0) gpus_per_node = l.m_world;
  }
  if (gpus_per_node <= 0) return make_error("GPUs per node must be >= 1 (got " + std::to_string(gpus_per_node) + ")");
  long long slots = static_cast<long long>(hosts.size()) * gpus_per_node;
  if (l.m_world > slots)
    return make_error("the plan needs " + std::to_string(l.m_world) + " ranks but the allocation has " +
                      std::to_string(hosts.size()) + " node(s) x " + std::to_string(gpus_per_node) + " GPU(s) = " +
                      std::to_string(slots) + " slots");
  l.m_hosts = std::move(hosts);
  l.m_gpus_per_node = gpus_per_node;
  l.m_ranks.resize(l.m_world);
  for (int s = 0; s < plan.pp(); ++s) {
    const auto& st = plan.stages[s];
    for (int d = 0; d < st.dp; ++d)
      for (int t = 0; t < st.tp; ++t) {
        int r = l.m_base[s] + t + st.tp * d;
        RankInfo& ri = l.m_ranks[r];
        ri.rank = r;
        ri.stage = s;
        ri.dp_rank = d;
        ri.tp_rank = t;
        ri.node = r / gpus_per_node;
        ri.local_rank = r % gpus_per_node;
        ri.host = l.m_hosts[ri.node];
      }
  }
  for (const auto& g : l.tp_groups()) {
    const auto& a = l.m_ranks[g.front()];
    const auto& b = l.m_ranks[g.back()];
    if (a.node != b.node)
      return make_error("TP group " + format_int_list(g) + " of stage " + std::to_string(a.stage) +
                        " would span nodes " + a.host + " and " + b.host + " (" + std::to_string(gpus_per_node) +
                        " GPUs per node; a stage's TP size must divide the GPUs per node and its block must not "
                        "straddle a node boundary)");
  }
  return l;
}

int Layout::rank_of(int stage, int dp_rank, int tp_rank) const {
  if (stage < 0 || stage >= m_plan.pp()) return -1;
  const auto& st = m_plan.stages[stage];
  if (dp_rank < 0 || dp_rank >= st.dp || tp_rank < 0 || tp_rank >= st.tp) return -1;
  return m_base[stage] + tp_rank + st.tp * dp_rank;
}

int Layout::ranks_on_node(int node) const {
  int n = 0;
  for (const auto& r : m_ranks) n += r.node == node;
  return n;
}

std::vector<int> Layout::tp_group(int r) const {
  const auto& ri = m_ranks.at(r);
  std::vector<int> g;
  for (int t = 0; t < m_plan.stages[ri.stage].tp; ++t) g.push_back(rank_of(ri.stage, ri.dp_rank, t));
  return g;
}

std::vector<int> Layout::dp_group(int r) const {
  const auto& ri = m_ranks.at(r);
  std::vector<int> g;
  for (int d = 0; d < m_plan.stages[ri.stage].dp; ++d) g.push_back(rank_of(ri.stage, d, ri.tp_rank));
  return g;
}

std::vector<std::vector<int>> Layout::pp_groups() const {
  int chains = 0;
  for (const auto& s : m_plan.stages) chains = std::max(chains, s.size());
  std::vector<std::vector<int>> out(chains);
  for (int g = 0; g < chains; ++g)
    for (int s = 0; s < m_plan.pp(); ++s)
      out[g].push_back(m_base[s] + static_cast<int>(static_cast<long long>(g) * m_plan.stages[s].size() / chains));
  return out;
}

int Layout::pp_chain_of(int r) const {
  const auto& ri = m_ranks.at(r);
  int chains = 0;
  for (const auto& s : m_plan.stages) chains = std::max(chains, s.size());
  int local = r - m_base[ri.stage];
  int size = m_plan.stages[ri.stage].size();
  // lowest g with floor(g*size/chains) == local
  long long g = (static_cast<long long>(local) * chains + size - 1) / size;
  return static_cast<int>(g);
}

std::vector<int> Layout::pp_group(int r) const {
  int chains = 0;
  for (const auto& s : m_plan.stages) chains = std::max(chains, s.size());
  int g = pp_chain_of(r);
  std::vector<int> out;
  for (int s = 0; s < m_plan.pp(); ++s)
    out.push_back(m_base[s] + static_cast<int>(static_cast<long long>(g) * m_plan.stages[s].size() / chains));
  return out;
}

std::vector<std::vector<int>> Layout::tp_groups() const {
  std::vector<std::vector<int>> out;
  for (int s = 0; s < m_plan.pp(); ++s)
    for (int d = 0; d < m_plan.stages[s].dp; ++d) out.push_back(tp_group(rank_of(s, d, 0)));
  return out;
}

std::vector<std::vector<int>> Layout::dp_groups() const {
  std::vector<std::vector<int>> out;
  for (int s = 0; s < m_plan.pp(); ++s)
    for (int t = 0; t < m_plan.stages[s].tp; ++t) out.push_back(dp_group(rank_of(s, 0, t)));
  return out;
}

nlohmann::json Layout::to_json() const {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : m_ranks) {
    nlohmann::json j = {{"rank", r.rank},         {"host", r.host},       {"local_rank", r.local_rank},
                        {"stage", r.stage},       {"dp_rank", r.dp_rank}, {"tp_rank", r.tp_rank},
                        {"tp_group", tp_group(r.rank)}, {"dp_group", dp_group(r.rank)},
                        {"pp_group", pp_group(r.rank)}};
    const auto& st = m_plan.stages[r.stage];
    if (st.first_layer >= 0) j["layers"] = {st.first_layer, st.last_layer + 1};  // [begin, end)
    ranks.push_back(j);
  }
  return {{"ranks", ranks}, {"plan", launcher::to_json(m_plan)}};
}

std::string Layout::table() const {
  std::ostringstream o;
  size_t hw = 4;
  for (const auto& h : m_hosts) hw = std::max(hw, h.size());
  auto pad = [](std::string s, size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
  };
  o << pad("RANK", 6) << pad("HOST", hw + 2) << pad("LOCAL", 7) << pad("STAGE", 7) << pad("LAYERS", 10)
    << pad("DP", 4) << pad("TP", 4) << pad("TP_GROUP", 14) << pad("DP_GROUP", 14) << "PP_GROUP\n";
  for (const auto& r : m_ranks) {
    const auto& st = m_plan.stages[r.stage];
    std::string layers = st.first_layer >= 0 ? std::to_string(st.first_layer) + "-" + std::to_string(st.last_layer) : "-";
    o << pad(std::to_string(r.rank), 6) << pad(r.host, hw + 2) << pad(std::to_string(r.local_rank), 7)
      << pad(std::to_string(r.stage), 7) << pad(layers, 10) << pad(std::to_string(r.dp_rank), 4)
      << pad(std::to_string(r.tp_rank), 4) << pad(format_int_list(tp_group(r.rank)), 14)
      << pad(format_int_list(dp_group(r.rank)), 14) << format_int_list(pp_group(r.rank)) << "\n";
  }
  return o.str();
}

Result<std::vector<std::string>> megatron_args(const Plan& plan) {
  if (!plan.uniform())
    return make_error("Megatron-LM needs one TP and one DP size for all stages; this plan has per-stage shapes (" +
                      canonical(plan) + ")");
  const auto& s0 = plan.stages[0];
  std::vector<std::string> a = {"--tensor-model-parallel-size", std::to_string(s0.tp),
                                "--pipeline-model-parallel-size", std::to_string(plan.pp()),
                                "--micro-batch-size", std::to_string(plan.micro_batch_size),
                                "--global-batch-size",
                                std::to_string(static_cast<long long>(plan.micro_batch_size) * plan.micro_batches * s0.dp)};
  if (plan.has_layers()) {
    a.insert(a.end(), {"--num-layers", std::to_string(plan.num_layers())});
    int pp = plan.pp();
    auto len = [&](int i) { return plan.stages[i].last_layer - plan.stages[i].first_layer + 1; };
    bool even = true;
    for (int i = 1; i < pp; ++i) even = even && len(i) == len(0);
    if (!even) {
      // Megatron-LM (core >= 0.10) can give the first and last stage their own layer counts.
      for (int i = 2; i < pp - 1; ++i)
        if (len(i) != len(1))
          return make_error("Megatron-LM cannot express these stage layer ranges (" + format_layer_ranges(plan) +
                            "): only the first and last stage may differ");
      if (pp >= 3 && len(0) != len(1)) a.insert(a.end(), {"--decoder-first-pipeline-num-layers", std::to_string(len(0))});
      if (pp >= 3 && len(pp - 1) != len(1))
        a.insert(a.end(), {"--decoder-last-pipeline-num-layers", std::to_string(len(pp - 1))});
      if (pp == 2) a.insert(a.end(), {"--decoder-first-pipeline-num-layers", std::to_string(len(0))});
    }
  }
  if (plan.schedule.rfind("interleaved:", 0) == 0) {
    int v = std::stoi(plan.schedule.substr(12));
    if (plan.has_layers()) {
      int per_stage = plan.num_layers() / plan.pp();
      if (per_stage % v != 0 || plan.num_layers() % plan.pp() != 0)
        return make_error("interleaved:" + std::to_string(v) + " needs layers per stage divisible by " + std::to_string(v));
      a.insert(a.end(), {"--num-layers-per-virtual-pipeline-stage", std::to_string(per_stage / v)});
    } else {
      a.insert(a.end(), {"--num-virtual-stages-per-pipeline-rank", std::to_string(v)});
    }
  }
  if (plan.recompute == "selective") a.insert(a.end(), {"--recompute-granularity", "selective"});
  if (plan.recompute == "full")
    a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"});
  if (plan.sequence_parallel) a.push_back("--sequence-parallel");
  if (plan.zero == 1) a.push_back("--use-distributed-optimizer");
  return a;
}

}  // namespace crius::launcher
