#include "slurm_plugin/submit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "common/util.h"

namespace crius::slurm {

namespace est = crius::estimator;

namespace {

std::string matches_suffix(const std::vector<std::string>& m) {
  if (m.empty()) return "";
  return " (did you mean " + util::join(m, ", ") + "?)";
}

Error rejected(Reject why, std::string message) { return make_error(std::move(message), static_cast<int>(why)); }

}  // namespace

const std::vector<std::string>& submit_config_keys() {
  static const std::vector<std::string> keys = {"max_gpus", "objective", "on_error", "partitions", "record_top", "work_budget"};
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
      if (s && *s == "throughput") cfg.objective = Objective::throughput;
      else if (s && *s == "efficiency") cfg.objective = Objective::efficiency;
      else return make_error(where(v, key) + " must be \"throughput\" or \"efficiency\"");
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
    } else if (key == "max_gpus") {
      auto n = v.value<int64_t>();
      if (!n || *n < 1 || *n > 1'000'000) return make_error(where(v, key) + " must be a whole number from 1 to 1000000");
      cfg.max_gpus = static_cast<int>(*n);
    } else if (key == "work_budget") {
      auto n = v.value<int64_t>();
      if (!n || *n < 10'000 || *n > 100'000'000'000)
        return make_error(where(v, key) + " must be a whole number from 10000 to 100000000000");
      cfg.work_budget = *n;
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

Result<Decision> decide(const JobRequest& req, const Loaded& conf, std::string_view user_partitions) {
  const est::Cluster& cl = conf.cluster;
  if (req.deadline_s && !req.iters)
    return rejected(Reject::bad_request,
                    "--crius-deadline needs --crius-iters (crius estimates run time as iterations x iteration time)");

  auto model = resolve_model(req, cl.models);
  if (!model) return make_error(model.error(), model.error_code());

  est::Request ereq;
  ereq.model = std::move(*model);
  ereq.global_batch = req.global_batch;
  ereq.runtime = req.runtime;
  if (auto v = est::validate_request(ereq); !v) return rejected(Reject::bad_request, v.error());

  // The partitions this job may use.
  std::vector<std::string> all_names;
  for (const auto& p : cl.partitions) all_names.push_back(p.name);
  std::vector<const est::Partition*> allowed;
  std::vector<std::string> user_crius_partitions;
  if (!user_partitions.empty()) {
    auto asked = util::split(user_partitions, ',', true);
    if (asked.size() > 64) asked.resize(64);  // more names than a partition list has: the rest is ignored
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

  std::vector<est::Estimate> all;
  est::WorkBudget budget;
  budget.limit = conf.config.work_budget;
  est::SearchOptions opts;
  opts.budget = &budget;
  for (const est::Partition* p : allowed) {
    est::CellFilter f;
    f.partition = p->name;
    if (!req.cell.gpu.empty()) f.gpu = req.cell.gpu;
    if (req.cell.nodes) {
      f.nodes = req.cell.nodes;
      f.gpus_per_node = req.cell.gpus_per_node;
    }
    if (req.cell.stages) f.stages = req.cell.stages;
    auto r = est::rank_cells(ereq, cl, f, opts);
    all.insert(all.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
  }
  if (all.empty())
    return rejected(Reject::no_cell, "no Cell matches --crius-cell=" + pin + " for model " + shown(req.model) +
                                         " (stages must divide the layers and fit the GPUs)");
  if (const int cap = conf.config.max_gpus; cap > 0) {
    std::erase_if(all, [cap](const est::Estimate& e) { return e.cell.gpus() > cap; });
    if (all.empty())
      return rejected(Reject::no_cell, "no Cell of at most " + std::to_string(cap) +
                                           " GPUs ([job_submit] max_gpus) matches --crius-cell=" + pin);
  }

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
                                         std::to_string(req.global_batch) + " (--crius-cell=" + pin +
                                         ")" + (conf.config.max_gpus > 0 ? " within [job_submit] max_gpus " + std::to_string(conf.config.max_gpus) : std::string()) +
                                         "; best try " + est::to_string(all.front().cell) + ": " + all.front().why);

  Decision d;
  d.partial = budget.exhausted();
  std::size_t chosen = 0;
  bool deadline_met = true;
  if (req.deadline_s && req.iters) {
    // Smallest Cell whose estimated run time meets the deadline; else the fastest.
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < all.size() && all[i].feasible; ++i) {
      double run = all[i].iter_time_s * static_cast<double>(*req.iters);
      if (run > static_cast<double>(*req.deadline_s)) continue;
      if (!best || all[i].cell.gpus() < all[*best].cell.gpus()) best = i;
    }
    if (best) chosen = *best;
    else deadline_met = false;
  }
  d.chosen = all[chosen];
  if (chosen != 0) std::rotate(all.begin(), all.begin() + static_cast<long>(chosen),
                               all.begin() + static_cast<long>(chosen) + 1);
  if (all.size() > 10) all.resize(10);
  d.ranked = all;

  const est::Estimate& e = d.chosen;
  job::Record& rec = d.record;
  rec.request.model = req.model;
  rec.request.model_file = req.model_is_file;
  if (req.model_is_file) rec.request.model_spec = est::to_spec(ereq.model);
  rec.request.global_batch = req.global_batch;
  rec.request.iters = req.iters;
  rec.request.runtime = req.runtime;
  rec.request.pin = req.cell;
  rec.request.deadline_s = req.deadline_s;
  rec.request.partitions = user_crius_partitions;
  rec.request.objective = eff ? "efficiency" : "throughput";
  rec.request.movable = req.movable;
  rec.cell = e.cell;
  rec.plan = e.plan;
  rec.iter_time_s = e.iter_time_s;
  rec.samples_per_s = e.samples_per_s;
  rec.memory_gib = e.memory_gib;
  if (req.deadline_s) rec.deadline_met = deadline_met;
  rec.partial = d.partial;
  for (const auto& r : d.ranked) {
    if (!r.feasible || static_cast<int>(rec.top.size()) >= conf.config.record_top) break;
    rec.top.push_back({r.cell, r.iter_time_s, r.samples_per_s, r.memory_gib});
  }
  d.env = job::record_env(rec);
  d.summary = "model=" + shown(req.model) + " batch=" + std::to_string(req.global_batch) + " -> cell " +
              est::describe(e.cell) + " iter=" + util::fmt(e.iter_time_s) + "s samples/s=" +
              util::fmt(e.samples_per_s) + (deadline_met ? "" : " (deadline not met)") +
              (d.partial ? " (work budget reached: the best of the Cells estimated)" : "");
  return d;
}

Result<Decision> DecisionCache::decide(const JobRequest& req, const Loaded& conf, std::string_view user_partitions) {
  // Every field of the request that decide() reads, each value bounded by parse_request.
  const std::string key = req.model + '\n' + req.model_spec + '\n' + std::to_string(req.global_batch) + '\n' +
                          (req.iters ? std::to_string(*req.iters) : "-") + '\n' + est::to_string(req.cell) + '\n' +
                          std::string(est::to_string(req.runtime)) + '\n' +
                          (req.deadline_s ? std::to_string(*req.deadline_s) : "-") + '\n' + (req.movable ? "m" : "-") + '\n' +
                          std::string(user_partitions.substr(0, 4096));
  for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
    if (it->first == key) {
      m_entries.splice(m_entries.begin(), m_entries, it);
      ++m_hits;
      return m_entries.front().second;
    }
  auto d = slurm::decide(req, conf, user_partitions);
  m_entries.emplace_front(key, d);
  if (m_entries.size() > m_capacity) m_entries.pop_back();
  return d;
}

std::string explain_text(const JobRequest& req, const Decision& d) {
  std::ostringstream o;
  o << "crius: model " << req.model << ", global batch " << req.global_batch << ", runtime " << est::to_string(req.runtime)
    << ", cell " << est::to_string(req.cell) << "\n";
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
    << (d.partial ? " (work budget reached: the best of the Cells estimated)" : "") << "\n";
  return o.str();
}

}  // namespace crius::slurm
