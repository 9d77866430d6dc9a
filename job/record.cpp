// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "job/record.h"

#include <algorithm>
#include <cmath>
#include <csignal>

#include "common/json_reader.h"
#include "common/util.h"
#include "estimator/estimator.h"

namespace crius::job {

namespace est = crius::estimator;
using nlohmann::json;

namespace {

constexpr long kMaxLong = 1L << 50;

json ranked_json(const Ranked& r) {
  return {{"cell", est::to_json(r.cell)}, {"iter_time_s", r.iter_time_s},
          {"samples_per_s", r.samples_per_s}, {"memory_gib", r.memory_gib}};
}

Result<Request> request_from_json(const json& j) {
  util::JsonObject r(j, "crius record: request");
  if (auto ok = r.only({"model", "model_file", "model_spec", "global_batch", "iters", "runtime", "framework",
                        "cell", "deadline_s", "max_gpus", "partitions", "objective", "movable", "checkpoint_grace_s",
                        "checkpoint_signal"});
      !ok)
    return make_error(ok.error());
  Request q;
  CRIUS_JSON_GET(q.model, r.string("model"));
  CRIUS_JSON_GET(q.model_file, r.boolean("model_file", false));
  CRIUS_JSON_GET(q.model_spec, r.string("model_spec", std::string()));
  if (q.model_spec.size() > estimator::kMaxModelSpecBytes)
    return make_error("crius record: request: key 'model_spec' is too long");
  CRIUS_JSON_GET(q.global_batch, r.integer("global_batch", 1, 1L << 30));
  if (r.has("iters")) {
    long n = 0;
    CRIUS_JSON_GET(n, r.integer("iters", 1, kMaxLong));
    q.iters = n;
  }
  if (r.has("deadline_s")) {
    long n = 0;
    CRIUS_JSON_GET(n, r.integer("deadline_s", 1, kMaxLong));
    q.deadline_s = n;
  }
  if (r.has("max_gpus")) {
    long n = 0;
    CRIUS_JSON_GET(n, r.integer("max_gpus", 1, 1'000'000));
    q.max_gpus = static_cast<int>(n);
  }
  std::string text;
  CRIUS_JSON_GET(text, r.string("runtime", std::string("megatron")));
  auto rt = est::parse_runtime(text);
  if (!rt) return make_error("crius record: request: key 'runtime': " + rt.error());
  q.runtime = *rt;
  CRIUS_JSON_GET(text, r.string("framework", std::string("crius-train")));
  auto fw = est::parse_framework(text);
  if (!fw) return make_error("crius record: request: key 'framework': " + fw.error());
  q.framework = *fw;
  CRIUS_JSON_GET(text, r.string("cell", std::string("auto")));
  auto pin = est::parse_cell(text);
  if (!pin) return make_error("crius record: request: key 'cell': " + pin.error());
  q.pin = *pin;
  CRIUS_JSON_GET(q.objective, r.string("objective", std::string("throughput")));
  CRIUS_JSON_GET(q.movable, r.boolean("movable", false));
  if (r.has("checkpoint_grace_s")) {
    long n = 0;
    CRIUS_JSON_GET(n, r.integer("checkpoint_grace_s", 1, 86400));
    q.checkpoint_grace_s = static_cast<int>(n);
  }
  if (r.has("checkpoint_signal")) {
    CRIUS_JSON_GET(text, r.string("checkpoint_signal"));
    auto sig = parse_checkpoint_signal(text);
    if (!sig) return make_error("crius record: request: key 'checkpoint_signal': " + sig.error());
    q.checkpoint_signal = *sig;
  }
  if (r.has("partitions")) {
    const json& p = j["partitions"];
    if (!p.is_array() || p.size() > 64) return make_error("crius record: request: key 'partitions' must be a list");
    for (const auto& name : p) {
      if (!name.is_string()) return make_error("crius record: request: key 'partitions' must hold names");
      q.partitions.push_back(name.get<std::string>());
    }
  }
  return q;
}

Result<Ranked> ranked_from_json(const json& j, const std::string& what) {
  util::JsonObject r(j, what);
  if (auto ok = r.only({"cell", "iter_time_s", "samples_per_s", "memory_gib"}); !ok) return make_error(ok.error());
  Ranked x;
  if (!j.contains("cell")) return make_error(what + ": key 'cell' is missing");
  auto c = est::cell_from_json(j["cell"], what + ": cell");
  if (!c) return make_error(c.error());
  x.cell = *c;
  CRIUS_JSON_GET(x.iter_time_s, r.number("iter_time_s", 0, 1e30, 0.0));
  CRIUS_JSON_GET(x.samples_per_s, r.number("samples_per_s", 0, 1e30, 0.0));
  CRIUS_JSON_GET(x.memory_gib, r.number("memory_gib", 0, 1e30, 0.0));
  return x;
}

// A list of node names (criusd's pins): bounded like a Cell's node count.
Result<std::vector<std::string>> node_names(const json& j, const std::string& what) {
  if (!j.is_array() || j.size() > static_cast<std::size_t>(est::kMaxCellNodes))
    return make_error(what + " must be a list of at most " + std::to_string(est::kMaxCellNodes) + " node names");
  std::vector<std::string> out;
  for (const auto& n : j) {
    if (!n.is_string() || n.get_ref<const std::string&>().empty() || n.get_ref<const std::string&>().size() > 64)
      return make_error(what + " must hold node names of 1 to 64 characters");
    out.push_back(n.get<std::string>());
  }
  return out;
}

Result<MoveLog> move_log_from_json(const json& j, const std::string& what) {
  util::JsonObject m(j, what);
  if (auto ok = m.only({"from", "to", "reason", "started", "ended", "outcome"}); !ok) return make_error(ok.error());
  MoveLog log;
  for (auto [key, cell] : {std::pair{"from", &log.from}, std::pair{"to", &log.to}}) {
    std::string text;
    CRIUS_JSON_GET(text, m.string(key, std::string("auto")));
    auto c = est::parse_cell(text);
    if (!c) return make_error(what + ": key '" + key + "': " + c.error());
    *cell = *c;
  }
  CRIUS_JSON_GET(log.reason, m.string("reason", std::string()));
  CRIUS_JSON_GET(log.outcome, m.string("outcome", std::string()));
  if (log.reason.size() > kMaxHistoryText || log.outcome.size() > kMaxHistoryText)
    return make_error(what + ": keys 'reason' and 'outcome' hold at most " + std::to_string(kMaxHistoryText) + " bytes");
  CRIUS_JSON_GET(log.started, m.integer("started", 0, kMaxLong, 0));
  CRIUS_JSON_GET(log.ended, m.integer("ended", 0, kMaxLong, 0));
  return log;
}

Result<Record> record_from_json(const json& j) {
  util::JsonObject r(j, "crius record");
  if (auto ok = r.only({"crius", "request", "cell", "plan", "estimate", "by", "deadline_met", "partial", "top", "move",
                        "history", "moved_at", "unmovable", "nodes", "time_limit_factor", "time_limit_min",
                        "saved_under"}); !ok)
    return make_error(ok.error());
  int version = 0;
  CRIUS_JSON_GET(version, r.integer("crius", 0, 1000000));
  if (version != kRecordVersion && version != 2)
    return make_error("crius record version " + std::to_string(version) + " (this crius reads versions 2 and " +
                      std::to_string(kRecordVersion) + ")");
  if (r.has(version == 2 ? "history" : "moved_at"))
    return make_error(std::string("crius record version ") + std::to_string(version) + ": key '" +
                      (version == 2 ? "history" : "moved_at") + "' is not of this version");
  Record rec;
  if (!j.contains("request")) return make_error("crius record: key 'request' is missing");
  auto q = request_from_json(j["request"]);
  if (!q) return make_error(q.error());
  rec.request = std::move(*q);
  if (!j.contains("cell")) return make_error("crius record: key 'cell' is missing");
  auto c = est::cell_from_json(j["cell"], "crius record: cell");
  if (!c) return make_error(c.error());
  rec.cell = *c;
  if (!j.contains("plan")) return make_error("crius record: key 'plan' is missing");
  auto p = est::plan_from_json(j["plan"], "crius record: plan");
  if (!p) return make_error(p.error());
  rec.plan = std::move(*p);
  if (j.contains("estimate")) {
    util::JsonObject e(j["estimate"], "crius record: estimate");
    if (auto ok = e.only({"iter_time_s", "samples_per_s", "memory_gib"}); !ok) return make_error(ok.error());
    CRIUS_JSON_GET(rec.iter_time_s, e.number("iter_time_s", 0, 1e30, 0.0));
    CRIUS_JSON_GET(rec.samples_per_s, e.number("samples_per_s", 0, 1e30, 0.0));
    CRIUS_JSON_GET(rec.memory_gib, e.number("memory_gib", 0, 1e30, 0.0));
  }
  CRIUS_JSON_GET(rec.by, r.string("by", std::string("job_submit")));
  if (rec.by != "job_submit" && rec.by != "criusd")
    return make_error("crius record: key 'by' must be \"job_submit\" or \"criusd\"");
  if (r.has("deadline_met")) {
    bool met = false;
    CRIUS_JSON_GET(met, r.boolean("deadline_met", false));
    rec.deadline_met = met;
  }
  CRIUS_JSON_GET(rec.partial, r.boolean("partial", false));
  if (r.has("top")) {
    const json& t = j["top"];
    if (!t.is_array() || t.size() > 16) return make_error("crius record: key 'top' must be a list of at most 16");
    for (std::size_t i = 0; i < t.size(); ++i) {
      auto x = ranked_from_json(t[i], "crius record: top[" + std::to_string(i) + "]");
      if (!x) return make_error(x.error());
      rec.top.push_back(*x);
    }
  }
  if (r.has("move")) {
    util::JsonObject m(j["move"], "crius record: move");
    if (auto ok = m.only({"cell", "nodes", "phase", "since", "reason"}); !ok) return make_error(ok.error());
    if (!j["move"].contains("cell")) return make_error("crius record: move: key 'cell' is missing");
    auto t = est::cell_from_json(j["move"]["cell"], "crius record: move: cell");
    if (!t) return make_error(t.error());
    Move mv;
    mv.target = *t;
    CRIUS_JSON_GET(mv.phase, m.string("phase"));
    if (mv.phase != "signalling" && mv.phase != "signalled" && mv.phase != "requeuing" && mv.phase != "requeued")
      return make_error("crius record: move: key 'phase' must be signalling, signalled, requeuing or requeued");
    CRIUS_JSON_GET(mv.since, m.integer("since", 0, kMaxLong, 0));
    CRIUS_JSON_GET(mv.reason, m.string("reason", std::string()));
    if (j["move"].contains("nodes")) {
      auto n = node_names(j["move"]["nodes"], "crius record: move: nodes");
      if (!n) return make_error(n.error());
      mv.nodes = std::move(*n);
    }
    rec.move = std::move(mv);
  }
  if (r.has("moved_at")) {  // version 2: the start times alone
    const json& m = j["moved_at"];
    if (!m.is_array() || m.size() > kMaxHistory) return make_error("crius record: key 'moved_at' must be a list of at most 16");
    for (const auto& t : m) {
      if (!t.is_number_integer() || t.get<long long>() < 0)
        return make_error("crius record: key 'moved_at' must hold times (seconds since 1970)");
      MoveLog log;
      log.started = t.get<std::int64_t>();
      rec.history.push_back(std::move(log));
    }
  }
  if (r.has("history")) {
    const json& h = j["history"];
    if (!h.is_array() || h.size() > kMaxHistory)
      return make_error("crius record: key 'history' must be a list of at most " + std::to_string(kMaxHistory));
    for (std::size_t i = 0; i < h.size(); ++i) {
      auto log = move_log_from_json(h[i], "crius record: history[" + std::to_string(i) + "]");
      if (!log) return make_error(log.error());
      rec.history.push_back(std::move(*log));
    }
  }
  CRIUS_JSON_GET(rec.unmovable, r.string("unmovable", std::string()));
  CRIUS_JSON_GET(rec.time_limit_factor, r.number("time_limit_factor", 0, kMaxTimeLimitFactor, 0.0));
  CRIUS_JSON_GET(rec.time_limit_min, r.integer("time_limit_min", 0, kMaxTimeLimitMin, 0));
  if (r.has("nodes")) {
    auto n = node_names(j["nodes"], "crius record: nodes");
    if (!n) return make_error(n.error());
    rec.nodes = std::move(*n);
  }
  if (r.has("saved_under")) {
    const json& s = j["saved_under"];
    util::JsonObject so(s, "crius record: saved_under");
    if (auto ok = so.only({"cell", "plan"}); !ok) return make_error(ok.error());
    if (!s.contains("cell") || !s.contains("plan")) return make_error("crius record: saved_under needs 'cell' and 'plan'");
    auto cell = est::cell_from_json(s["cell"], "crius record: saved_under: cell");
    if (!cell) return make_error(cell.error());
    auto plan = est::plan_from_json(s["plan"], "crius record: saved_under: plan");
    if (!plan) return make_error(plan.error());
    rec.saved_under = Record::Saved{*cell, *plan};
  }
  return rec;
}

}  // namespace

namespace {
constexpr std::pair<const char*, int> kCheckpointSignals[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM},
                                                               {"INT", SIGINT},   {"HUP", SIGHUP},   {"URG", SIGURG}};
}  // namespace

Result<int> parse_checkpoint_signal(std::string_view name) {
  if (name == "none") return 0;
  const std::string_view n = name.substr(0, 3) == "SIG" ? name.substr(3) : name;
  for (const auto& [k, v] : kCheckpointSignals)
    if (n == k) return v;
  return make_error(util::shown(name) + " is not a checkpoint signal (USR1, USR2, TERM, INT, HUP, URG or none)");
}

std::string checkpoint_signal_name(int sig) {
  for (const auto& [k, v] : kCheckpointSignals)
    if (sig == v) return k;
  return sig == 0 ? "none" : std::to_string(sig);
}

int default_checkpoint_signal(const est::Framework& f) {
  switch (f.kind) {
    case est::Framework::Kind::megatron: return SIGTERM;
    case est::Framework::Kind::torchtitan: return 0;
    case est::Framework::Kind::crius_train: break;
  }
  return SIGUSR1;
}

std::string to_text(const Record& rec) {
  const Request& q = rec.request;
  json rq = {{"model", q.model}, {"global_batch", q.global_batch}, {"runtime", std::string(est::to_string(q.runtime))},
             {"cell", est::to_string(q.pin)}, {"objective", q.objective}};
  if (q.model_file) {
    rq["model_file"] = true;
    rq["model_spec"] = q.model_spec;
  }
  if (q.framework.kind != est::Framework::Kind::crius_train) rq["framework"] = est::to_string(q.framework);
  if (q.iters) rq["iters"] = *q.iters;
  if (q.deadline_s) rq["deadline_s"] = *q.deadline_s;
  if (q.max_gpus) rq["max_gpus"] = *q.max_gpus;
  if (!q.partitions.empty()) rq["partitions"] = q.partitions;
  if (q.movable) rq["movable"] = true;
  if (q.checkpoint_grace_s) rq["checkpoint_grace_s"] = *q.checkpoint_grace_s;
  if (q.checkpoint_signal) rq["checkpoint_signal"] = checkpoint_signal_name(*q.checkpoint_signal);
  // "crius" first: looks_like_record() knows a record by its first bytes.
  nlohmann::ordered_json j;
  j["crius"] = kRecordVersion;
  j["request"] = std::move(rq);
  j["cell"] = est::to_json(rec.cell);
  j["plan"] = est::to_json(rec.plan);
  j["estimate"] = json{{"iter_time_s", rec.iter_time_s}, {"samples_per_s", rec.samples_per_s},
                       {"memory_gib", rec.memory_gib}};
  j["by"] = rec.by;
  if (rec.deadline_met) j["deadline_met"] = *rec.deadline_met;
  if (rec.partial) j["partial"] = true;
  if (!rec.top.empty()) {
    json top = json::array();
    for (const auto& r : rec.top) top.push_back(ranked_json(r));
    j["top"] = std::move(top);
  }
  if (rec.move) {
    j["move"] = {{"cell", est::to_json(rec.move->target)}, {"phase", rec.move->phase},
                 {"since", rec.move->since}, {"reason", rec.move->reason}};
    if (!rec.move->nodes.empty()) j["move"]["nodes"] = rec.move->nodes;
  }
  if (!rec.nodes.empty()) j["nodes"] = rec.nodes;
  if (!rec.history.empty()) {
    json h = json::array();
    for (const MoveLog& m : rec.history) {
      json e = {{"from", est::to_string(m.from)}, {"to", est::to_string(m.to)}, {"started", m.started}};
      if (!m.reason.empty()) e["reason"] = m.reason;
      if (m.ended) e["ended"] = m.ended;
      if (!m.outcome.empty()) e["outcome"] = m.outcome;
      h.push_back(std::move(e));
    }
    j["history"] = std::move(h);
  }
  if (!rec.unmovable.empty()) j["unmovable"] = rec.unmovable;
  if (rec.time_limit_factor > 0) j["time_limit_factor"] = rec.time_limit_factor;
  if (rec.time_limit_min > 0) j["time_limit_min"] = rec.time_limit_min;
  if (rec.saved_under)
    j["saved_under"] = {{"cell", est::to_json(rec.saved_under->cell)}, {"plan", est::to_json(rec.saved_under->plan)}};
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::int64_t time_limit_minutes(double iterations, double iter_time_s, double factor, std::int64_t max_s) {
  const double s = factor * std::max(0.0, iterations) * std::max(0.0, iter_time_s) + kTimeLimitSlackS;
  // Slurm keeps minutes in 32 bits (INFINITE is 0xffffffff): a year is far from it.
  std::int64_t minutes = static_cast<std::int64_t>(std::ceil(std::min(s, kMaxTimeLimitMin * 60.0) / 60));
  if (max_s > 0) minutes = std::min(minutes, std::max<std::int64_t>(1, max_s / 60));
  return std::max<std::int64_t>(1, minutes);
}

void Record::log_move_start(const est::Cell& from, const est::Cell& to, const std::string& reason, std::int64_t now) {
  MoveLog log;
  log.from = from;
  log.from.partition.clear();
  log.to = to;
  log.to.partition.clear();
  log.reason = util::printable(reason, kMaxHistoryText - 3);
  log.started = now;
  history.push_back(std::move(log));
  if (history.size() > kMaxHistory) history.erase(history.begin());
}

void Record::log_move_end(const std::string& outcome, std::int64_t now) {
  if (history.empty() || !history.back().outcome.empty()) return;
  history.back().outcome = util::printable(outcome, kMaxHistoryText - 3);
  history.back().ended = now;
}

namespace {
constexpr std::string_view kRecordStart = R"({"crius":)";
}  // namespace

std::string_view record_line(std::string_view admin_comment) {
  for (std::size_t at = 0; at < admin_comment.size();) {
    std::size_t end = admin_comment.find('\n', at);
    if (end == std::string_view::npos) end = admin_comment.size();
    std::string_view line = admin_comment.substr(at, end - at);
    if (line.substr(0, kRecordStart.size()) == kRecordStart) return line;
    at = end + 1;
  }
  return {};
}

std::string with_record(std::string_view admin_comment, std::string_view record) {
  std::string out;
  for (std::size_t at = 0; at < admin_comment.size();) {
    std::size_t end = admin_comment.find('\n', at);
    if (end == std::string_view::npos) end = admin_comment.size();
    std::string_view line = admin_comment.substr(at, end - at);
    if (line.substr(0, kRecordStart.size()) != kRecordStart) {
      out.append(line);
      if (end < admin_comment.size()) out += '\n';
    }
    at = end + 1;
  }
  if (record.empty()) {
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  out.append(record);
  return out;
}

std::optional<Result<Record>> parse_record(std::string_view admin_comment) {
  const std::string_view text = record_line(admin_comment);
  if (text.empty()) return std::nullopt;
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("crius")) return std::nullopt;
  try {
    return record_from_json(j);
  } catch (const json::exception& e) {
    return Result<Record>(make_error(std::string("crius record: ") + e.what()));
  }
}

}  // namespace crius::job
