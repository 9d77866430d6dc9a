#include "slurm_plugin/submit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace crius::slurm {

namespace est = crius::estimator;

namespace {

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t pos = s.find(',', start);
    if (pos == std::string_view::npos) pos = s.size();
    if (pos > start) out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string matches_suffix(const std::vector<std::string>& m) {
  if (m.empty()) return "";
  return " (did you mean " + join(m, ", ") + "?)";
}

std::string fmt(double v, int prec = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", prec, v);
  return buf;
}

std::string cell_text(const est::Cell& c) {
  return c.gpu + ":" + std::to_string(c.nodes) + "x" + std::to_string(c.gpus_per_node) + ":" +
         std::to_string(c.stages);
}

std::string pin_text(const CellPin& p) {
  if (p.gpu.empty()) return "auto";
  std::string s = p.gpu;
  if (p.nodes) s += ":" + std::to_string(p.nodes) + "x" + std::to_string(p.gpus_per_node);
  if (p.stages) s += ":" + std::to_string(p.stages);
  return s;
}

}  // namespace

std::string find_crius_conf(const std::string& slurm_sysconfdir) {
  if (const char* c = std::getenv("CRIUS_CONF"); c && *c) return c;
  if (const char* s = std::getenv("SLURM_CONF"); s && *s) {
    std::string p = s;
    auto slash = p.rfind('/');
    return (slash == std::string::npos ? std::string(".") : p.substr(0, slash)) + "/crius.toml";
  }
  return slurm_sysconfdir + "/crius.toml";
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
                            join(names) + ")");
        }
        cfg.partitions.push_back(*s);
      }
    } else if (key == "record_top") {
      auto n = v.value<int64_t>();
      if (!n || *n < 1 || *n > 10) return make_error(where(v, key) + " must be a whole number from 1 to 10");
      cfg.record_top = static_cast<int>(*n);
    } else {
      return make_error(where(v, key) + ": unknown key (known: objective, on_error, partitions, record_top)");
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
    auto m = est::parse_model(req.model_toml, req.model);
    if (!m) return make_error("--crius-model: " + m.error());
    return *m;
  }
  if (const est::Model* m = models.find(req.model)) return *m;
  return make_error("unknown model " + shown(req.model) + matches_suffix(models.close_matches(req.model)));
}

Result<Decision> decide(const JobRequest& req, const Loaded& conf, std::string_view user_partitions) {
  const est::Cluster& cl = conf.cluster;
  if (req.deadline_s && !req.iters)
    return make_error("--crius-deadline needs --crius-iters (crius estimates run time as iterations x iteration time)");

  auto model = resolve_model(req, cl.models);
  if (!model) return make_error(model.error());

  est::Request ereq;
  ereq.model = std::move(*model);
  ereq.global_batch = req.global_batch;
  auto rt = est::parse_runtime(req.runtime);
  if (!rt) return make_error("--crius-runtime: " + rt.error());
  ereq.runtime = *rt;
  if (auto v = est::validate_request(ereq); !v) return make_error(v.error());

  // The partitions this job may use.
  std::vector<std::string> all_names;
  for (const auto& p : cl.partitions) all_names.push_back(p.name);
  std::vector<const est::Partition*> allowed;
  if (!user_partitions.empty()) {
    auto asked = split_list(user_partitions);
    for (const auto& name : asked)
      if (const est::Partition* p = cl.find_partition(name)) allowed.push_back(p);
    if (allowed.empty())
      return make_error("none of the job's partitions " + shown(join(asked, ",")) +
                        " is described in crius.toml (crius partitions: " + join(all_names) + ")");
  } else if (!conf.config.partitions.empty()) {
    for (const auto& name : conf.config.partitions) allowed.push_back(cl.find_partition(name));
  } else {
    for (const auto& p : cl.partitions) allowed.push_back(&p);
  }

  if (!req.cell.gpu.empty()) {
    if (!cl.gpus.find(req.cell.gpu))
      return make_error("--crius-cell: unknown GPU type " + shown(req.cell.gpu) +
                        matches_suffix(cl.gpus.close_matches(req.cell.gpu)));
    std::vector<const est::Partition*> typed;
    std::vector<std::string> have;
    for (const est::Partition* p : allowed) {
      have.push_back(p->name + " (" + p->gpu + ")");
      if (p->gpu == req.cell.gpu) typed.push_back(p);
    }
    if (typed.empty())
      return make_error("--crius-cell=" + pin_text(req.cell) + ": no partition of type '" + req.cell.gpu +
                        "' among the job's partitions: " + join(have));
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
        return make_error("--crius-cell=" + pin_text(req.cell) + " is larger than the partition (" +
                          join(shapes, "; ") + ")");
    }
  }

  std::vector<est::Estimate> all;
  for (const est::Partition* p : allowed) {
    est::CellFilter f;
    f.partition = p->name;
    if (!req.cell.gpu.empty()) f.gpu = req.cell.gpu;
    if (req.cell.nodes) {
      f.nodes = req.cell.nodes;
      f.gpus_per_node = req.cell.gpus_per_node;
    }
    if (req.cell.stages) f.stages = req.cell.stages;
    auto r = est::rank_cells(ereq, cl, f);
    all.insert(all.end(), std::make_move_iterator(r.begin()), std::make_move_iterator(r.end()));
  }
  if (all.empty())
    return make_error("no Cell matches --crius-cell=" + pin_text(req.cell) + " for model " + shown(req.model) +
                      " (stages must divide the layers and fit the GPUs)");

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
    return make_error("no feasible Cell for model " + shown(req.model) + " with global batch " +
                      std::to_string(req.global_batch) + " (--crius-cell=" + pin_text(req.cell) +
                      "); best try " + cell_text(all.front().cell) + ": " + all.front().why);

  Decision d;
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
  const est::Plan& plan = e.plan;
  std::string layers, dps, tps;
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const auto& s = plan.stages[i];
    // Inclusive "first-last", as crius-launch(1) reads CRIUS_STAGE_LAYERS.
    layers += (i ? "," : "") + std::to_string(s.layer_begin) + "-" + std::to_string(s.layer_end - 1);
    dps += (i ? "," : "") + std::to_string(s.dp);
    tps += (i ? "," : "") + std::to_string(s.tp);
  }
  auto add = [&](const char* k, const std::string& v) { d.env.push_back(std::string(k) + "=" + v); };
  add("CRIUS_MODEL", req.model);
  add("CRIUS_GLOBAL_BATCH", std::to_string(req.global_batch));
  add("CRIUS_RUNTIME", req.runtime);
  add("CRIUS_CELL", cell_text(e.cell));
  add("CRIUS_PARTITION", e.cell.partition);
  add("CRIUS_GPU", e.cell.gpu);
  add("CRIUS_NODES", std::to_string(e.cell.nodes));
  add("CRIUS_GPUS_PER_NODE", std::to_string(e.cell.gpus_per_node));
  add("CRIUS_STAGES", std::to_string(e.cell.stages));
  add("CRIUS_STAGE_LAYERS", layers);
  add("CRIUS_STAGE_DP", dps);
  add("CRIUS_STAGE_TP", tps);
  add("CRIUS_MICRO_BATCH_SIZE", std::to_string(plan.micro_batch_size));
  add("CRIUS_MICRO_BATCHES", std::to_string(plan.micro_batches));
  add("CRIUS_SCHEDULE", est::to_string(plan.schedule));
  add("CRIUS_RECOMPUTE", std::string(est::to_string(plan.recompute)));
  add("CRIUS_SEQUENCE_PARALLEL", plan.sequence_parallel ? "1" : "0");
  add("CRIUS_ZERO", std::to_string(plan.zero));
  add("CRIUS_EST_ITER_S", fmt(e.iter_time_s, 6));
  add("CRIUS_EST_SAMPLES_PER_S", fmt(e.samples_per_s, 6));
  add("CRIUS_EST_MEMORY_GIB", fmt(e.memory_gib, 4));
  if (req.iters) {
    add("CRIUS_ITERS", std::to_string(*req.iters));
    add("CRIUS_EST_RUN_S", fmt(e.iter_time_s * static_cast<double>(*req.iters), 6));
  }
  add("CRIUS_PLAN_JSON", est::to_json(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));

  nlohmann::json rec;
  rec["crius"] = 1;
  nlohmann::json rq = {{"model", req.model},
                       {"model_file", req.model_is_file},
                       {"global_batch", req.global_batch},
                       {"runtime", req.runtime},
                       {"cell", pin_text(req.cell)},
                       {"objective", eff ? "efficiency" : "throughput"}};
  if (req.model_is_file) rq["model_toml"] = req.model_toml;
  if (req.iters) rq["iters"] = *req.iters;
  if (req.deadline_s) rq["deadline_s"] = *req.deadline_s;
  if (!user_partitions.empty()) rq["partitions"] = std::string(user_partitions);
  rec["request"] = rq;
  rec["chosen"] = {{"cell", cell_text(e.cell)},
                   {"partition", e.cell.partition},
                   {"iter_time_s", e.iter_time_s},
                   {"samples_per_s", e.samples_per_s}};
  if (req.deadline_s) rec["chosen"]["deadline_met"] = deadline_met;
  nlohmann::json top = nlohmann::json::array();
  for (std::size_t i = 0; i < d.ranked.size() && static_cast<int>(top.size()) < conf.config.record_top; ++i) {
    const auto& r = d.ranked[i];
    if (!r.feasible) break;
    top.push_back({{"cell", cell_text(r.cell)},
                   {"partition", r.cell.partition},
                   {"iter_time_s", r.iter_time_s},
                   {"samples_per_s", r.samples_per_s},
                   {"memory_gib", r.memory_gib}});
  }
  rec["top"] = top;
  d.record = rec.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

  d.summary = "model=" + req.model + " batch=" + std::to_string(req.global_batch) + " -> cell " +
              cell_text(e.cell) + " partition=" + e.cell.partition + " iter=" + fmt(e.iter_time_s) +
              "s samples/s=" + fmt(e.samples_per_s) + (deadline_met ? "" : " (deadline not met)");
  return d;
}

std::string explain_text(const JobRequest& req, const Decision& d) {
  std::ostringstream o;
  o << "crius: model " << req.model << ", global batch " << req.global_batch << ", runtime " << req.runtime
    << ", cell " << pin_text(req.cell) << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-3s %-16s %-10s %10s %12s %9s  %s\n", "#", "CELL", "PARTITION",
                "ITER_S", "SAMPLES/S", "MEM_GIB", "PLAN (per stage dp x tp)");
  o << line;
  int i = 0;
  for (const auto& e : d.ranked) {
    ++i;
    if (!e.feasible) {
      std::snprintf(line, sizeof line, "  %-3d %-16s %-10s %10s %12s %9s  infeasible: %.80s\n", i,
                    cell_text(e.cell).c_str(), e.cell.partition.c_str(), "-", "-", "-", e.why.c_str());
      o << line;
      continue;
    }
    std::string plan;
    for (const auto& s : e.plan.stages) plan += (plan.empty() ? "" : " ") + std::to_string(s.dp) + "x" + std::to_string(s.tp);
    plan += " mbs=" + std::to_string(e.plan.micro_batch_size) + " mb=" + std::to_string(e.plan.micro_batches);
    std::snprintf(line, sizeof line, "  %-3d %-16s %-10s %10.4g %12.4g %9.3g  %s\n", i, cell_text(e.cell).c_str(),
                  e.cell.partition.c_str(), e.iter_time_s, e.samples_per_s, e.memory_gib, plan.c_str());
    o << line;
  }
  o << "crius: chosen " << cell_text(d.chosen.cell) << " in partition " << d.chosen.cell.partition << "\n";
  return o.str();
}

}  // namespace crius::slurm
