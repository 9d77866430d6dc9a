// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/submit.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "common/prometheus.h"
#include "common/util.h"

namespace crius::slurm {

namespace est = crius::estimator;

namespace {

std::string matches_suffix(const std::vector<std::string>& m) {
  if (m.empty()) return "";
  return " (did you mean " + util::join(m, ", ") + "?)";
}

Error rejected(Reject why, std::string message) { return make_error(std::move(message), static_cast<int>(why)); }

// What no ranking answers: checked before the cache.
Result<void> check_request(const JobRequest& req) {
  if (req.deadline_s && !req.iters)
    return rejected(Reject::bad_request,
                    "--crius-deadline needs --crius-iters (crius estimates run time as iterations x iteration time)");
  return {};
}

Result<Decision> refuse_missed_deadline(Decision d, const Loaded& conf) {
  if (!d.deadline_miss.empty() && conf.config.deadline_miss == DeadlineMiss::reject)
    return rejected(Reject::deadline, d.deadline_miss + " ([job_submit] deadline_miss = \"reject\")");
  return d;
}

// Ranked Cells kept per request (one per shape): more than a partition list has shapes.
constexpr std::size_t kRankingKept = 256;

}  // namespace

const std::vector<std::string>& submit_config_keys() {
  static const std::vector<std::string> keys = {"deadline_miss", "free_gpus_file", "max_gpus",   "metrics_file",
                                                "objective",     "on_error",       "outage_max_gpus", "partitions",
                                                "record_top",    "time_limit_factor", "work_budget", "work_per_second"};
  return keys;
}

Result<SubmitConfig> parse_submit_config(const est::Cluster& cluster) {
  SubmitConfig cfg;
  const toml::node* node = cluster.table.get("job_submit");
  if (!node) return cfg;
  const toml::table* t = node->as_table();
  auto where = [&](const toml::node& n, const std::string& key) {
    const auto& src = n.source();
    return cluster.path + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column) +
           ": [job_submit] " + key;
  };
  if (!t) return make_error(where(*node, "") + "must be a table");
  for (const auto& [k, v] : *t) {
    std::string key(k.str());
    if (key == "objective") {
      auto s = v.value<std::string>();
      auto o = s ? scheduler::parse_objective(*s) : Result<Objective>(make_error(""));
      if (!o) return make_error(where(v, key) + " must be \"adaptive\", \"throughput\" or \"efficiency\"");
      cfg.objective = *o;
    } else if (key == "deadline_miss") {
      auto s = v.value<std::string>();
      if (s && *s == "flag") cfg.deadline_miss = DeadlineMiss::flag;
      else if (s && *s == "reject") cfg.deadline_miss = DeadlineMiss::reject;
      else return make_error(where(v, key) + " must be \"flag\" or \"reject\"");
    } else if (key == "on_error") {
      auto s = v.value<std::string>();
      if (s && *s == "accept") cfg.on_error = OnError::accept;
      else if (s && *s == "reject") cfg.on_error = OnError::reject;
      else return make_error(where(v, key) + " must be \"accept\" or \"reject\"");
    } else if (key == "partitions") {
      const toml::array* a = v.as_array();
      if (!a) return make_error(where(v, key) + " must be an array of partition names");
      for (const auto& e : *a) {
        auto s = e.value<std::string>();
        if (!s) return make_error(where(e, key) + " must hold strings");
        if (!cluster.find_partition(*s)) {
          std::vector<std::string> names;
          for (const auto& p : cluster.partitions) names.push_back(p.name);
          return make_error(where(e, key) + ": no [[partition]] named '" + *s + "' (partitions: " +
                            util::join(names, ", ") + ")");
        }
        cfg.partitions.push_back(*s);
      }
    } else if (key == "record_top") {
      auto n = v.value<int64_t>();
      if (!n || *n < 1 || *n > 10) return make_error(where(v, key) + " must be a whole number from 1 to 10");
      cfg.record_top = static_cast<int>(*n);
    } else if (key == "free_gpus_file") {
      auto f = v.value<std::string>();
      if (!f || (!f->empty() && f->front() != '/'))
        return make_error(where(v, key) + " must be an absolute path, or \"\" for none");
      cfg.free_gpus_file = *f;
    } else if (key == "metrics_file") {
      auto f = v.value<std::string>();
      if (!f || (!f->empty() && f->front() != '/'))
        return make_error(where(v, key) + " must be an absolute path, or \"\" for none");
      cfg.metrics_file = *f;
    } else if (key == "max_gpus") {
      auto n = v.value<int64_t>();
      if (!n || *n < 1 || *n > 1'000'000) return make_error(where(v, key) + " must be a whole number from 1 to 1000000");
      cfg.max_gpus = static_cast<int>(*n);
    } else if (key == "outage_max_gpus") {
      auto n = v.value<int64_t>();
      if (!n || *n < 0 || *n > 1'000'000)
        return make_error(where(v, key) + " must be a whole number from 0 (no bound) to 1000000");
      cfg.outage_max_gpus = static_cast<int>(*n);
    } else if (key == "time_limit_factor") {
      auto x = v.value<double>();
      if (!x || !(*x == 0 || (*x >= 1 && *x <= job::kMaxTimeLimitFactor)))
        return make_error(where(v, key) + " must be 0 (crius sets no time limit) or a number from 1 to 100");
      cfg.time_limit_factor = *x;
    } else if (key == "work_budget") {
      auto n = v.value<int64_t>();
      if (!n || *n < 10'000 || *n > 100'000'000'000)
        return make_error(where(v, key) + " must be a whole number from 10000 to 100000000000");
      cfg.work_budget = *n;
    } else if (key == "work_per_second") {
      auto n = v.value<int64_t>();
      if (!n || *n < 10'000 || *n > 100'000'000'000)
        return make_error(where(v, key) + " must be a whole number from 10000 to 100000000000");
      cfg.work_per_second = *n;
    } else {
      return make_error(where(v, key) + ": unknown key (known: " + util::join(submit_config_keys(), ", ") + ")");
    }
  }
  return cfg;
}

Result<Loaded> load_config(const std::string& path) {
  auto cluster = est::load_cluster(path);
  if (!cluster) return make_error(cluster.error());
  if (cluster->partitions.empty()) return make_error(path + ": no [[partition]] described");
  for (const auto& p : cluster->partitions)
    if (!cluster->gpus.find(p.gpu))
      return make_error(path + ": partition '" + p.name + "': unknown GPU type '" + p.gpu + "'");
  auto cfg = parse_submit_config(*cluster);
  if (!cfg) return make_error(cfg.error());
  if (auto f = free_gpus_file_override()) cfg->free_gpus_file = *f;
  return Loaded{std::move(*cluster), std::move(*cfg)};
}

Result<est::Model> resolve_model(const JobRequest& req, const est::ModelCatalog& models) {
  if (req.model_is_file) {
    auto m = est::parse_model_spec(req.model_spec, req.model);
    if (!m) return rejected(Reject::bad_request, "--crius-model: " + m.error());
    return *m;
  }
  if (const est::Model* m = models.find(req.model)) return *m;
  return rejected(Reject::bad_request,
                  "unknown model " + shown(req.model) + matches_suffix(models.close_matches(req.model)));
}

Result<Ranking> rank(const JobRequest& req, const Loaded& conf, std::string_view user_partitions,
                     std::int64_t work_budget, std::int64_t* work_used) {
  const est::Cluster& cl = conf.cluster;
  est::WorkBudget budget;
  budget.limit = work_budget > 0 ? work_budget : conf.config.work_budget;
  struct Report {  // the work spent, whatever the answer
    const est::WorkBudget& b;
    std::int64_t* out;
    ~Report() { if (out) *out = b.used; }
  } report{budget, work_used};

  auto model = resolve_model(req, cl.models);
  if (!model) return make_error(model.error(), model.error_code());

  est::Request ereq;
  ereq.model = std::move(*model);
  ereq.global_batch = req.global_batch;
  ereq.framework = req.framework.value_or(cl.framework);
  ereq.runtime = req.runtime.value_or(est::default_runtime(ereq.framework));
  if (auto v = est::validate_request(ereq); !v) return rejected(Reject::bad_request, v.error());

  // The partitions this job may use.
  std::vector<std::string> all_names;
  for (const auto& p : cl.partitions) all_names.push_back(p.name);
  std::vector<const est::Partition*> allowed;
  std::vector<std::string> user_crius_partitions;
  if (!user_partitions.empty()) {
    // The first 64 names, each cut to 256 bytes, read without splitting the rest (a client may
    // send any length): more names than a partition list has are ignored.
    std::vector<std::string> asked;
    for (std::string_view rest = user_partitions; !rest.empty() && asked.size() < 64;) {
      const std::size_t comma = rest.find(',');
      if (std::string_view name = rest.substr(0, comma); !name.empty()) asked.emplace_back(name.substr(0, 256));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    for (const auto& name : asked)
      if (const est::Partition* p = cl.find_partition(name);
          p && std::find(allowed.begin(), allowed.end(), p) == allowed.end()) {
        allowed.push_back(p);
        user_crius_partitions.push_back(p->name);
      }
    if (allowed.empty())
      return rejected(Reject::no_partition, "none of the job's partitions " + shown(util::join(asked, ",")) +
                                                " is described in crius.toml (crius partitions: " +
                                                util::join(all_names, ", ") + ")");
  } else if (!conf.config.partitions.empty()) {
    for (const auto& name : conf.config.partitions) allowed.push_back(cl.find_partition(name));
  } else {
    for (const auto& p : cl.partitions) allowed.push_back(&p);
  }

  const std::string pin = est::to_string(req.cell);
  if (!req.cell.gpu.empty()) {
    if (!cl.gpus.find(req.cell.gpu))
      return rejected(Reject::bad_request, "--crius-cell: unknown GPU type " + shown(req.cell.gpu) +
                                               matches_suffix(cl.gpus.close_matches(req.cell.gpu)));
    std::vector<const est::Partition*> typed;
    std::vector<std::string> have;
    for (const est::Partition* p : allowed) {
      have.push_back(p->name + " (" + p->gpu + ")");
      if (p->gpu == req.cell.gpu) typed.push_back(p);
    }
    if (typed.empty())
      return rejected(Reject::no_cell, "--crius-cell=" + pin + ": no partition of type '" + req.cell.gpu +
                                           "' among the job's partitions: " + util::join(have, ", "));
    allowed = std::move(typed);
    if (req.cell.nodes) {
      bool fits = false;
      std::vector<std::string> shapes;
      for (const est::Partition* p : allowed) {
        shapes.push_back(p->name + ": " + std::to_string(p->nodes) + " nodes x " +
                         std::to_string(p->gpus_per_node) + " GPUs");
        if (req.cell.nodes <= p->nodes && req.cell.gpus_per_node <= p->gpus_per_node) fits = true;
      }
      if (!fits)
        return rejected(Reject::no_cell, "--crius-cell=" + pin + " is larger than the partition (" +
                                             util::join(shapes, "; ") + ")");
    }
  }

  std::string bound;  // the maximum that applies, for messages
  int cap = conf.config.max_gpus;
  if (cap > 0) bound = "[job_submit] max_gpus " + std::to_string(cap);
  if (req.max_gpus && (cap == 0 || *req.max_gpus < cap)) {
    cap = *req.max_gpus;
    bound = "--crius-max-gpus=" + std::to_string(cap);
  }

  std::vector<est::Estimate> all;
  est::SearchOptions opts;
  opts.budget = &budget;
  opts.frontier = true;  // choose() picks from the frontier whatever is free (est::SearchOptions)
  for (const est::Partition* p : allowed) {
    est::CellFilter f;
    f.partition = p->name;
    if (!req.cell.gpu.empty()) f.gpu = req.cell.gpu;
    if (req.cell.nodes) {
      f.nodes = req.cell.nodes;
      f.gpus_per_node = req.cell.gpus_per_node;
    }
    if (req.cell.stages) f.stages = req.cell.stages;
    if (cap > 0) f.max_gpus = cap;
    auto r = est::rank_cells(ereq, cl, f, opts);
    all.insert(all.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
  }
  if (all.empty() && cap > 0)
    return rejected(Reject::no_cell, "no Cell of at most " + std::to_string(cap) + " GPUs (" + bound +
                                         ") matches --crius-cell=" + pin);
  if (all.empty())
    return rejected(Reject::no_cell, "no Cell matches --crius-cell=" + pin + " for model " + shown(req.model) +
                                         " (stages must divide the layers and fit the GPUs)");

  // Listed by the objective's measure; choose() applies the rule to the Cells that fit.
  const bool eff = conf.config.objective == Objective::efficiency;
  auto score = [&](const est::Estimate& e) {
    return eff ? e.samples_per_s / std::max(1, e.cell.gpus()) : e.samples_per_s;
  };
  std::stable_sort(all.begin(), all.end(), [&](const est::Estimate& a, const est::Estimate& b) {
    if (a.feasible != b.feasible) return a.feasible;
    if (!a.feasible) return false;
    double sa = score(a), sb = score(b);
    if (sa != sb) return sa > sb;
    return a.cell.gpus() < b.cell.gpus();
  });
  if (!all.front().feasible)
    return rejected(Reject::no_cell, "no feasible Cell for model " + shown(req.model) + " with global batch " +
                                         std::to_string(req.global_batch) + " (--crius-cell=" + pin + ")" +
                                         (bound.empty() ? std::string() : " within " + bound) + "; best try " +
                                         est::to_string(all.front().cell) + ": " + all.front().why);

  Ranking r;
  r.partial = budget.exhausted();
  r.model_spec = req.model_is_file ? est::to_spec(ereq.model) : std::string();
  r.partitions = user_crius_partitions;
  // The best Cell of each shape, feasible ones only: what choose() picks from.
  for (auto& e : all) {
    if (!e.feasible || r.cells.size() >= kRankingKept) break;
    bool seen = std::any_of(r.cells.begin(), r.cells.end(), [&](const est::Estimate& k) {
      return k.cell.partition == e.cell.partition && k.cell.nodes == e.cell.nodes &&
             k.cell.gpus_per_node == e.cell.gpus_per_node;
    });
    if (!seen) r.cells.push_back(std::move(e));
  }
  return r;
}

Decision choose(const JobRequest& req, const Loaded& conf, const Ranking& r, const FreeGpus* free,
                const Submitter* who) {
  const std::vector<est::Estimate>& all = r.cells;
  Decision d;
  d.partial = r.partial;
  d.busy = r.busy;
  // When the job would end in a Cell started now (0: never): its own time limit, else the one
  // crius would set in that Cell ([job_submit] time_limit_factor), else the longest Slurm lets it
  // have there (its partition's MaxTime, QOS's and association's MaxWall; Slurm may give it a
  // shorter DefaultTime). A Cell fits now only on nodes without a reservation before then.
  auto until = [&](const est::Estimate& e) -> std::int64_t {
    if (!free) return 0;
    std::int64_t limit_s = who ? who->time_limit_s : 0;
    if (limit_s <= 0) {
      const std::int64_t longest = who ? free->longest_time_limit_s(e.cell.partition, *who) : 0;
      if (conf.config.time_limit_factor > 0 && req.iters && e.iter_time_s > 0)
        limit_s = 60 * job::time_limit_minutes(static_cast<double>(*req.iters), e.iter_time_s,
                                               conf.config.time_limit_factor, longest);
      if (limit_s <= 0) limit_s = longest;
    }
    const std::int64_t start = who && who->now > 0 ? who->now : free->time;
    return limit_s > 0 ? start + limit_s : 0;
  };
  std::vector<std::int64_t> ends(all.size());
  if (free && !free->reserved_from.empty())
    for (std::size_t i = 0; i < all.size(); ++i) ends[i] = until(all[i]);
  auto fits_now = [&](std::size_t i) { return free && free->fits(all[i].cell, ends[i]); };
  // A job that is not movable keeps the Cell it starts in: one that fits now is at least
  // kKeptCellFloor of its fastest Cell where there is such.
  double floor = 0;
  if (!req.movable)
    for (const est::Estimate& e : all) floor = std::max(floor, scheduler::kKeptCellFloor * e.samples_per_s);
  // The crius policy's rule (scheduler/objective.h): the Cell the objective takes among those
  // that fit the GPUs free now; where none does, among all (it waits, and criusd re-decides it).
  auto by_objective = [&](bool fitting_only) -> std::optional<std::size_t> {
    std::vector<std::size_t> index;
    std::vector<scheduler::CellOption> options;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (!fitting_only || fits_now(i)) {
        index.push_back(i);
        options.push_back({all[i].samples_per_s, all[i].cell.gpus()});
      }
    // Others wait: criusd's count with those submitted since, or no Cell fits what is free (the
    // job waits). Without a report nothing is known of the queue: the best Cell of an empty
    // cluster, as throughput.
    const bool others_wait = free && (!fitting_only || free->waiting > 0);
    if (auto k = scheduler::choose_cell(options, conf.config.objective, others_wait, fitting_only ? floor : 0))
      return index[*k];
    return std::nullopt;
  };
  std::optional<std::size_t> chosen = by_objective(true);
  bool deadline_met = true;
  if (req.deadline_s && req.iters) {
    // The smallest Cell whose estimated run time meets the deadline, one that fits now first.
    std::optional<std::size_t> best;
    auto better = [&](std::size_t i, std::size_t b) {
      if (fits_now(i) != fits_now(b)) return fits_now(i);
      return all[i].cell.gpus() < all[b].cell.gpus();
    };
    for (std::size_t i = 0; i < all.size(); ++i) {
      double run = all[i].iter_time_s * static_cast<double>(*req.iters);
      if (run > static_cast<double>(*req.deadline_s)) continue;
      if (!best || better(i, *best)) best = i;
    }
    if (best) {
      chosen = best;
    } else {
      deadline_met = false;
      // The fastest Cell, for the reason.
      std::size_t f = 0;
      for (std::size_t i = 1; i < all.size(); ++i)
        if (all[i].iter_time_s < all[f].iter_time_s) f = i;
      d.deadline_miss = "no Cell meets --crius-deadline=" + std::to_string(*req.deadline_s) + "s: the fastest, " +
                        est::to_string(all[f].cell) + ", needs " +
                        util::fmt(all[f].iter_time_s * static_cast<double>(*req.iters)) + " s for " +
                        std::to_string(*req.iters) + " iterations";
    }
  }
  const std::size_t pick = chosen ? *chosen : by_objective(false).value_or(0);
  d.load = !free ? Load::unknown : fits_now(pick) ? Load::fits : Load::none_fits;
  d.chosen = all[pick];
  d.until = ends[pick];
  d.ranked.assign(all.begin(), all.begin() + static_cast<long>(std::min<std::size_t>(all.size(), 10)));
  if (pick >= d.ranked.size()) d.ranked.back() = all[pick];
  auto at = std::find_if(d.ranked.begin(), d.ranked.end(), [&](const est::Estimate& e) { return e.cell == d.chosen.cell; });
  std::rotate(d.ranked.begin(), at, at + 1);

  const est::Estimate& e = d.chosen;
  job::Record& rec = d.record;
  rec.request.model = req.model;
  rec.request.model_file = req.model_is_file;
  rec.request.model_spec = r.model_spec;
  rec.request.global_batch = req.global_batch;
  rec.request.iters = req.iters;
  rec.request.runtime = e.plan.runtime;
  rec.request.framework = e.plan.framework;
  rec.request.pin = req.cell;
  rec.request.max_gpus = req.max_gpus;
  rec.request.deadline_s = req.deadline_s;
  rec.request.partitions = r.partitions;
  rec.request.objective = scheduler::to_string(conf.config.objective);
  rec.request.movable = req.movable;
  rec.request.checkpoint_grace_s = req.checkpoint_grace_s;
  rec.request.checkpoint_signal = req.checkpoint_signal;
  rec.cell = e.cell;
  rec.plan = e.plan;
  rec.iter_time_s = e.iter_time_s;
  rec.samples_per_s = e.samples_per_s;
  rec.memory_gib = e.memory_gib;
  if (req.deadline_s) rec.deadline_met = deadline_met;
  rec.partial = d.partial || d.busy;
  for (const auto& k : d.ranked) {
    if (static_cast<int>(rec.top.size()) >= conf.config.record_top) break;
    rec.top.push_back({k.cell, k.iter_time_s, k.samples_per_s, k.memory_gib});
  }
  d.env = job::record_env(rec);
  d.summary = "model=" + shown(req.model) + " batch=" + std::to_string(req.global_batch) + " -> cell " +
              est::describe(e.cell) + " iter=" + util::fmt(e.iter_time_s) + "s samples/s=" +
              util::fmt(e.samples_per_s) + (deadline_met ? "" : " (deadline not met)") +
              (d.load == Load::fits        ? " (fits the GPUs free now)"
               : d.load == Load::none_fits ? " (no Cell fits the GPUs free now: the best Cell, it waits)"
                                           : "") +
              (d.partial ? " (work budget reached: the best of the Cells estimated)" : "");
  return d;
}

Result<Decision> decide(const JobRequest& req, const Loaded& conf, std::string_view user_partitions,
                        const FreeGpus* free) {
  if (auto ok = check_request(req); !ok) return make_error(ok.error(), ok.error_code());
  auto r = rank(req, conf, user_partitions);
  if (!r) return make_error(r.error(), r.error_code());
  return refuse_missed_deadline(choose(req, conf, *r, free), conf);
}

DecisionCache::DecisionCache(std::size_t capacity, Clock clock) : m_capacity(capacity), m_clock(std::move(clock)) {
  if (!m_clock)
    m_clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
}

Result<Decision> DecisionCache::decide(const JobRequest& req, const Loaded& conf, std::string_view user_partitions,
                                       const FreeGpus* free, const Submitter* who, const FreeGpus* rules) {
  if (!rules) rules = free;
  if (auto ok = check_request(req); !ok) return make_error(ok.error(), ok.error_code());
  // The bucket of work: ten seconds' worth, refilled at work_per_second.
  const double rate = static_cast<double>(conf.config.work_per_second), full = 10 * rate, now = m_clock();
  if (!m_started) m_tokens = full, m_last = now, m_started = true;
  m_tokens = std::min(full, m_tokens + std::max(0.0, now - m_last) * rate);
  m_last = now;
  // Every field of the request that rank() reads, each value bounded by parse_request.
  const std::string key = req.model + '\n' + req.model_spec + '\n' + std::to_string(req.global_batch) + '\n' +
                          est::to_string(req.cell) + '\n' + (req.runtime ? std::string(est::to_string(*req.runtime)) : "-") + '\n' +
                          (req.framework ? est::to_string(*req.framework) : "-") + '\n' +
                          (req.max_gpus ? std::to_string(*req.max_gpus) : "-") + '\n' +
                          std::string(user_partitions.substr(0, 4096));
  auto it = std::find_if(m_entries.begin(), m_entries.end(), [&](const auto& e) { return e.first == key; });
  // A ranking made on the small budget is made again once the bucket has work to give.
  const bool stale = it != m_entries.end() && it->second && it->second->busy && m_tokens > 0;
  if (it != m_entries.end() && !stale) {
    m_entries.splice(m_entries.begin(), m_entries, it);
    ++m_hits;
  } else {
    if (stale) m_entries.erase(it);
    if (m_tokens <= -full)
      return rejected(Reject::busy, "slurmctld is busy with crius submissions (more estimator work than "
                                    "[job_submit] work_per_second for ten seconds): submit again in a minute");
    const bool busy = m_tokens <= 0;
    std::int64_t used = 0;
    auto ranking = slurm::rank(req, conf, user_partitions,
                               busy ? std::max<std::int64_t>(10'000, conf.config.work_budget / 16) : 0, &used);
    m_tokens -= static_cast<double>(used);
    if (ranking && busy) ranking->busy = true;
    m_entries.emplace_front(key, std::move(ranking));
    if (m_entries.size() > m_capacity) m_entries.pop_back();
  }
  const Result<Ranking>& r = m_entries.front().second;
  if (!r) return make_error(r.error(), r.error_code());
  if (!rules || !who || rules->access.empty()) return refuse_missed_deadline(choose(req, conf, *r, free, who), conf);
  // Only Cells of partitions Slurm lets the submitter into (criusd's report says who); a job
  // that names no account runs in its user's default one.
  Submitter me = *who;
  if (me.account.empty()) me.account = rules->default_account(me.uid);
  Ranking mine = *r;
  std::vector<std::string> why;
  std::erase_if(mine.cells, [&](const est::Estimate& e) {
    std::string no = rules->refusal(e.cell.partition, me, e.cell.nodes, e.cell.gpus());
    if (!no.empty() && std::find(why.begin(), why.end(), no) == why.end()) why.push_back(no);
    return !no.empty();
  });
  if (mine.cells.empty())
    return rejected(Reject::no_partition, "no Cell of a partition Slurm lets this job into: " + util::join(why, "; "));
  // Per-type group limits (GrpTRES gres/gpu:TYPE): Cells within what the job's association may
  // still hold, where any is; otherwise the job waits as Slurm has it (on 22.05, whose untyped
  // request Slurm does not check against them, it may start over them: criusd(8)).
  if (std::any_of(mine.cells.begin(), mine.cells.end(), [&](const est::Estimate& e) {
        return rules->typed_room(e.cell.partition, me, e.cell.gpu, e.cell.gpus());
      }))
    std::erase_if(mine.cells, [&](const est::Estimate& e) {
      return !rules->typed_room(e.cell.partition, me, e.cell.gpu, e.cell.gpus());
    });
  return refuse_missed_deadline(choose(req, conf, mine, free, &me), conf);
}

std::string explain_text(const JobRequest& req, const Decision& d) {
  std::ostringstream o;
  o << "crius: model " << req.model << ", global batch " << req.global_batch << ", runtime " << est::to_string(d.chosen.plan.runtime)
    << (req.framework ? ", framework " + est::to_string(*req.framework) : std::string()) << ", cell " << est::to_string(req.cell) << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-3s %-16s %-10s %10s %12s %9s  %s\n", "#", "CELL", "PARTITION",
                "ITER_S", "SAMPLES/S", "MEM_GIB", "PLAN (per stage dp x tp)");
  o << line;
  int i = 0;
  for (const auto& e : d.ranked) {
    ++i;
    if (!e.feasible) {
      std::snprintf(line, sizeof line, "  %-3d %-16s %-10s %10s %12s %9s  infeasible: %.80s\n", i,
                    est::to_string(e.cell).c_str(), e.cell.partition.c_str(), "-", "-", "-", e.why.c_str());
      o << line;
      continue;
    }
    std::string plan;
    for (const auto& s : e.plan.stages) plan += (plan.empty() ? "" : " ") + std::to_string(s.dp) + "x" + std::to_string(s.tp);
    plan += " mbs=" + std::to_string(e.plan.micro_batch_size) + " mb=" + std::to_string(e.plan.micro_batches);
    std::snprintf(line, sizeof line, "  %-3d %-16s %-10s %10.4g %12.4g %9.3g  %s\n", i, est::to_string(e.cell).c_str(),
                  e.cell.partition.c_str(), e.iter_time_s, e.samples_per_s, e.memory_gib, plan.c_str());
    o << line;
  }
  o << "crius: chosen " << est::to_string(d.chosen.cell) << " in partition " << d.chosen.cell.partition
    << (d.load == Load::fits        ? " (the best Cell that fits the GPUs free now)"
        : d.load == Load::none_fits ? " (no Cell fits the GPUs free now)"
                                    : "")
    << (d.partial ? " (work budget reached: the best of the Cells estimated)" : "") << "\n";
  if (!d.deadline_miss.empty()) o << "crius: " << d.deadline_miss << "\n";
  return o.str();
}

const char* reject_reason(int code) {
  switch (static_cast<Reject>(code)) {
    case Reject::bad_request: return "bad_request";
    case Reject::no_partition: return "no_partition";
    case Reject::no_cell: return "no_cell";
    case Reject::deadline: return "deadline";
    case Reject::busy: return "busy";
  }
  return "other";
}

std::string metrics_text(const SubmitCounters& c) {
  std::string t;
  auto head = [&](const char* name, const char* type, const char* help) { prometheus::family(t, name, type, help); };
  using prometheus::number;
  head("crius_job_submit_decisions_total", "counter",
       "crius submissions by outcome: placed (a Cell given), rejected, degraded_accepted, degraded_rejected.");
  for (const auto& [k, n] : c.decisions) t += "crius_job_submit_decisions_total{outcome=\"" + k + "\"} " + std::to_string(n) + "\n";
  head("crius_job_submit_rejections_total", "counter", "crius submissions refused, by reason (job_submit_crius(8)).");
  for (const auto& [k, n] : c.rejections) t += "crius_job_submit_rejections_total{reason=\"" + k + "\"} " + std::to_string(n) + "\n";
  head("crius_job_submit_partial_total", "counter", "Placed on the best Cell estimated within the work budget.");
  t += "crius_job_submit_partial_total " + std::to_string(c.partial) + "\n";
  head("crius_job_submit_busy_total", "counter", "Placed on the small budget of a busy slurmctld (work_per_second).");
  t += "crius_job_submit_busy_total " + std::to_string(c.busy) + "\n";
  head("crius_job_submit_deadline_flagged_total", "counter", "Placed although no Cell meets its deadline (flagged).");
  t += "crius_job_submit_deadline_flagged_total " + std::to_string(c.deadline_flagged) + "\n";
  head("crius_job_submit_updates_refused_total", "counter", "Updates of a crius job's Cell fields refused.");
  t += "crius_job_submit_updates_refused_total " + std::to_string(c.updates_refused) + "\n";
  head("crius_job_submit_decide_seconds_total", "counter", "Time spent deciding crius submissions.");
  t += "crius_job_submit_decide_seconds_total " + number(c.decide_seconds_sum) + "\n";
  head("crius_job_submit_decide_seconds_max", "gauge", "The longest decision so far.");
  t += "crius_job_submit_decide_seconds_max " + number(c.decide_seconds_max) + "\n";
  return t;
}

}  // namespace crius::slurm
