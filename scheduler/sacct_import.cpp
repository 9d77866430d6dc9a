// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/sacct_import.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <sstream>

#include "common/util.h"
#include "estimator/toml_util.h"

namespace crius::scheduler {

namespace est = crius::estimator;

namespace {

bool glob(const std::string& pattern, const std::string& text) {
  return pattern.empty() || ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// [D-]HH:MM:SS, MM:SS or MM(.ss) as sacct prints durations; -1 if not one.
double duration_s(const std::string& text) {
  std::string t = text;
  double days = 0;
  if (auto dash = t.find('-'); dash != std::string::npos) {
    if (!util::parse_number(t.substr(0, dash), days) || days < 0) return -1;
    t = t.substr(dash + 1);
  }
  auto parts = util::split(t, ':');
  if (parts.empty() || parts.size() > 3) return -1;
  double v[3] = {0, 0, 0}, total = 0;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (!util::parse_number(parts[i], v[i]) || v[i] < 0) return -1;
  if (parts.size() == 3) total = v[0] * 3600 + v[1] * 60 + v[2];
  else if (parts.size() == 2) total = v[0] * 60 + v[1];
  else total = v[0] * 60;  // a bare number is minutes, as in Slurm's time formats
  return days * 86400 + total;
}

// Unix seconds (SLURM_TIME_FORMAT=%s) or YYYY-MM-DDTHH:MM:SS in local time; -1 if neither.
double time_s(const std::string& text) {
  if (auto v = util::to_int(text)) return static_cast<double>(*v);
  std::tm tm{};
  const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || *end) return -1;
  tm.tm_isdst = -1;
  return static_cast<double>(std::mktime(&tm));
}

// gres/gpu count and type, and node count, from AllocTRES
// ("billing=16,cpu=16,gres/gpu:a100=8,gres/gpu=8,mem=64G,node=1").
struct Tres {
  int gpus = 0, nodes = 0;
  std::string gpu_type;
};
Tres parse_tres(const std::string& text) {
  Tres t;
  for (const std::string& item : util::split(text, ',', true)) {
    auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    int n = 0;
    if (!util::parse_number(value, n)) continue;
    if (key == "gres/gpu") t.gpus = n;
    else if (key == "node") t.nodes = n;
    else if (key.rfind("gres/gpu:", 0) == 0 && t.gpu_type.empty()) t.gpu_type = key.substr(9);
  }
  return t;
}

}  // namespace

Result<std::vector<ImportRule>> load_import_rules(const std::string& path, const est::ModelCatalog& models) {
  auto text = util::read_file(path);
  if (!text) return make_error(text.error());
  auto doc = est::detail::parse_toml(*text, path);
  if (!doc) return make_error(doc.error());
  std::vector<ImportRule> rules;
  for (const auto& [key, node] : *doc)
    if (key.str() != "rule")
      return make_error(path + ":" + std::to_string(node.source().begin.line) + ": unknown key '" +
                        std::string(key.str()) + "' (the file holds [[rule]] tables)");
  const toml::array* arr = (*doc)["rule"].as_array();
  if (!arr || arr->empty()) return make_error(path + ": no [[rule]] (see crius-import-sacct(1))");
  for (const auto& n : *arr) {
    const toml::table* t = n.as_table();
    const int line = static_cast<int>(n.source().begin.line);
    const std::string at = path + ":" + std::to_string(line) + ": [[rule]] ";
    if (!t) return make_error(at + "must be a table");
    ImportRule r;
    r.line = line;
    for (const auto& [k, v] : *t) {
      const std::string key(k.str());
      const std::string where = path + ":" + std::to_string(v.source().begin.line) + ": [[rule]] " + key;
      if (key == "global_batch") {
        auto b = v.value<int64_t>();
        if (!b || *b < 1 || *b > (1 << 24)) return make_error(where + " must be a whole number from 1 to 16777216");
        r.global_batch = static_cast<int>(*b);
        continue;
      }
      auto s = v.value<std::string>();
      if (!s) return make_error(where + " must be a string");
      if (key == "job_name") r.job_name = *s;
      else if (key == "account") r.account = *s;
      else if (key == "user") r.user = *s;
      else if (key == "partition") r.partition = *s;
      else if (key == "comment") r.comment = *s;
      else if (key == "model") r.model = *s;
      else
        return make_error(where + ": unknown key (known: job_name, account, user, partition, comment, model, "
                                  "global_batch)");
    }
    if (r.model.empty() || !r.global_batch) return make_error(at + "needs model and global_batch");
    if (!models.find(r.model))
      return make_error(at + "model: unknown model '" + r.model + "'" +
                        (models.close_matches(r.model).empty()
                             ? std::string()
                             : " (did you mean " + util::join(models.close_matches(r.model), ", ") + "?)"));
    rules.push_back(std::move(r));
  }
  return rules;
}

const std::vector<std::string>& sacct_import_fields() {
  static const std::vector<std::string> f = {"JobIDRaw", "JobName", "Account", "User",      "Partition",
                                             "Submit",   "Elapsed", "Timelimit", "AllocTRES", "State", "Comment"};
  return f;
}

Result<ImportReport> import_sacct(const std::string& text, const std::string& source,
                                  const std::vector<ImportRule>& rules, const est::Cluster& cluster,
                                  est::Runtime runtime) {
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  std::map<std::string, std::size_t> col;
  std::size_t columns = 0;
  ImportReport rep;
  std::map<std::string, double> iter_time;  // per (model, batch, type, nodes x gpus)
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string at = source + ":" + std::to_string(lineno) + ": ";
    // The Comment is the last field and may hold '|': only the first columns-1 splits count.
    std::vector<std::string> f;
    std::size_t pos = 0;
    while (true) {
      std::size_t bar = line.find('|', pos);
      if (bar == std::string::npos || (columns && f.size() + 1 == columns)) {
        f.push_back(line.substr(pos));
        break;
      }
      f.push_back(line.substr(pos, bar - pos));
      pos = bar + 1;
    }
    if (col.empty()) {
      for (std::size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
      for (const auto& need : sacct_import_fields())
        if (!col.count(need))
          return make_error(at + "the header lacks " + need + " (export with sacct -a -X -P -o " +
                            util::join(sacct_import_fields(), ",") + ")");
      if (col.at("Comment") + 1 != f.size())
        return make_error(at + "Comment must be the last field (it may hold '|')");
      columns = f.size();
      continue;
    }
    if (f.size() != columns)
      return make_error(at + std::to_string(f.size()) + " fields, the header has " + std::to_string(columns));
    auto field = [&](const char* name) -> const std::string& { return f[col.at(name)]; };
    const std::string id = field("JobIDRaw");
    const double submit = time_s(field("Submit"));
    if (submit < 0) return make_error(at + "Submit " + util::shown(field("Submit")) + " is not a time");
    const double elapsed = duration_s(field("Elapsed"));
    if (elapsed < 0) return make_error(at + "Elapsed " + util::shown(field("Elapsed")) + " is not a duration");
    const Tres tres = parse_tres(field("AllocTRES"));
    if (tres.gpus <= 0) {
      ++rep.no_gpus;
      continue;
    }
    if (elapsed <= 0) {
      ++rep.never_ran;
      continue;
    }
    const ImportRule* rule = nullptr;
    for (const auto& r : rules)
      if (glob(r.job_name, field("JobName")) && glob(r.account, field("Account")) && glob(r.user, field("User")) &&
          glob(r.partition, field("Partition")) && glob(r.comment, field("Comment"))) {
        rule = &r;
        break;
      }
    if (!rule) {
      ++rep.unmapped;
      continue;
    }
    std::string gpu = tres.gpu_type;
    if (gpu.empty())
      if (const est::Partition* p = cluster.find_partition(field("Partition"))) gpu = p->gpu;
    const int nodes = std::max(1, tres.nodes);
    if (gpu.empty() || !cluster.gpus.find(gpu) || tres.gpus % nodes) {
      ++rep.infeasible;
      rep.notes.push_back("job " + util::printable(id, 32) + ": its GPUs (" + util::printable(field("AllocTRES"), 128) +
                          ", partition " + util::printable(field("Partition"), 32) +
                          ") name no GPU type of the cluster file");
      continue;
    }
    const std::string key = rule->model + "/" + std::to_string(rule->global_batch) + "/" + gpu + "/" +
                            std::to_string(nodes) + "x" + std::to_string(tres.gpus / nodes);
    auto it = iter_time.find(key);
    if (it == iter_time.end()) {
      est::Request req;
      req.model = *cluster.models.find(rule->model);
      req.global_batch = rule->global_batch;
      req.runtime = runtime;
      est::Estimate e = est::best_for_allocation(req, cluster, gpu, nodes, tres.gpus / nodes);
      it = iter_time.emplace(key, e.feasible ? e.iter_time_s : -1).first;
    }
    if (it->second <= 0) {
      ++rep.infeasible;
      rep.notes.push_back("job " + util::printable(id, 32) + ": " + rule->model + " at global batch " +
                          std::to_string(rule->global_batch) + " does not fit " + std::to_string(nodes) + " x " +
                          std::to_string(tres.gpus / nodes) + " " + gpu + " (map rule at line " +
                          std::to_string(rule->line) + ")");
      continue;
    }
    ImportedJob j;
    j.id = id;
    j.model = rule->model;
    j.global_batch = rule->global_batch;
    j.gpu = gpu;
    j.gpus = tres.gpus;
    j.submit = submit;
    j.iterations = std::max(1.0, std::round(elapsed / it->second));
    const double limit = duration_s(field("Timelimit"));  // UNLIMITED, Partition_Limit: none
    j.deadline = submit + (limit > 0 ? limit : 365.0 * 86400);
    rep.jobs.push_back(std::move(j));
  }
  if (col.empty()) return make_error(source + ": empty (expected sacct -P output with its header)");
  if (!rep.jobs.empty()) {
    std::stable_sort(rep.jobs.begin(), rep.jobs.end(),
                     [](const ImportedJob& a, const ImportedJob& b) { return a.submit < b.submit; });
    const double t0 = rep.jobs.front().submit;
    for (auto& j : rep.jobs) {
      j.submit -= t0;
      j.deadline -= t0;
    }
  }
  return rep;
}

std::string to_trace_csv(const ImportReport& r, const std::string& source) {
  std::ostringstream o;
  o << "# imported by crius-import-sacct from " << util::printable(source, 256) << ": iterations estimated from each"
    << " job's run time on its GPUs; deadline = submission + time limit\n";
  o << "job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,gpu_type\n";
  for (const auto& j : r.jobs)
    o << j.id << "," << util::fmt(j.submit, 12) << "," << util::fmt(j.iterations, 12) << "," << j.model << ","
      << util::fmt(j.deadline, 12) << "," << j.global_batch << "," << j.gpus << "," << j.gpu << "\n";
  return o.str();
}

}  // namespace crius::scheduler
