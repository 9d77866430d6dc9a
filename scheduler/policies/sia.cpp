// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/policies/sia.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace crius::scheduler {

namespace {
// Branch-and-bound effort per round, counted in subproblems GLPK selects: a
// deterministic bound (a time limit would make results depend on the machine).
constexpr int kMaxSubproblems = 200;

void limit_nodes(glp_tree* tree, void* info) {
  if (glp_ios_reason(tree) != GLP_ISELECT) return;
  if (++*static_cast<int*>(info) > kMaxSubproblems) glp_ios_terminate(tree);
}

struct Config {
  size_t job;
  std::string gpu;
  int gpus;
  double utility;
};
}  // namespace

std::vector<Target> SiaPolicy::schedule(const Context& ctx) {
  const std::vector<std::string> types = ctx.gpu_types();
  const size_t J = ctx.jobs.size();
  std::vector<Target> targets(J);
  if (J == 0) return targets;

  // Candidate configurations: every type, powers of two up to 4x the request.
  // Utility: sqrt of goodput (data-parallel speed) normalised by the job's
  // slowest feasible configuration, times a restart penalty when it differs
  // from what the job runs now.
  std::vector<Config> configs;
  for (size_t j = 0; j < J; ++j) {
    const Job& job = *ctx.jobs[j];
    size_t first = configs.size();
    double base = 0;
    for (const std::string& gpu : types)
      for (int c : counts_for(ctx.total_gpus(gpu))) {
        if (c > 4 * job.req_gpus) break;
        double s = -1;
        for (const PlacedShape& ps : shapes_for(ctx.cluster, gpu, c))
          s = std::max(s, decision_speed(ctx, job, ps.shape, true));
        if (s <= 0) continue;
        configs.push_back(Config{j, gpu, c, s});
        base = base > 0 ? std::min(base, s) : s;
      }
    for (size_t k = first; k < configs.size(); ++k) {
      Config& cf = configs[k];
      cf.utility = std::sqrt(cf.utility / base);
      bool same = job.state == JobState::running && job.alloc.shape.gpu == cf.gpu &&
                  job.alloc.shape.gpus() == cf.gpus;
      if (job.state == JobState::running && !same)
        cf.utility *= std::max(0.0, 1.0 - restart_cost(m_options, false, cf.gpus) / m_options.interval_s);
    }
  }
  if (configs.empty()) return targets;

  glp_prob* ip = glp_create_prob();
  glp_set_obj_dir(ip, GLP_MAX);
  glp_add_rows(ip, static_cast<int>(J + types.size()));
  for (size_t j = 0; j < J; ++j) glp_set_row_bnds(ip, static_cast<int>(j + 1), GLP_UP, 0, 1);
  for (size_t t = 0; t < types.size(); ++t)
    glp_set_row_bnds(ip, static_cast<int>(J + t + 1), GLP_UP, 0,
                     ctx.total_gpus(types[t]));
  glp_add_cols(ip, static_cast<int>(configs.size()));
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  for (size_t k = 0; k < configs.size(); ++k) {
    int col = static_cast<int>(k + 1);
    glp_set_col_kind(ip, col, GLP_BV);
    glp_set_obj_coef(ip, col, configs[k].utility);
    size_t t = std::find(types.begin(), types.end(), configs[k].gpu) - types.begin();
    ia.push_back(static_cast<int>(configs[k].job + 1)); ja.push_back(col); ar.push_back(1);
    ia.push_back(static_cast<int>(J + t + 1)); ja.push_back(col); ar.push_back(configs[k].gpus);
  }
  glp_load_matrix(ip, static_cast<int>(ia.size() - 1), ia.data(), ja.data(), ar.data());
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.mip_gap = 0.01;
  parm.tm_lim = static_cast<int>(m_options.solver_time_limit_s * 1000);  // safety net only
  int subproblems = 0;
  parm.cb_func = limit_nodes;
  parm.cb_info = &subproblems;
  std::vector<double> y(configs.size(), 0);
  int rc = glp_intopt(ip, &parm);
  int st = glp_mip_status(ip);
  if ((rc == 0 || rc == GLP_ETMLIM || rc == GLP_EMIPGAP || rc == GLP_ESTOP) &&
      (st == GLP_OPT || st == GLP_FEAS)) {
    for (size_t k = 0; k < configs.size(); ++k) y[k] = glp_mip_col_val(ip, static_cast<int>(k + 1));
  }
  glp_delete_prob(ip);
  if (std::none_of(y.begin(), y.end(), [](double v) { return v > 0.5; })) {
    // No integer solution within the time limit: greedy, per job in order, the
    // configuration of the highest utility that still fits the type's capacity.
    std::vector<int> cap;
    for (const std::string& t : types) cap.push_back(ctx.total_gpus(t));
    for (size_t j = 0, k = 0; j < J; ++j) {
      size_t pick = configs.size();
      for (; k < configs.size() && configs[k].job == j; ++k) {
        size_t t = std::find(types.begin(), types.end(), configs[k].gpu) - types.begin();
        if (configs[k].gpus <= cap[t] &&
            (pick == configs.size() || configs[k].utility > configs[pick].utility))
          pick = k;
      }
      if (pick == configs.size()) continue;
      y[pick] = 1;
      cap[std::find(types.begin(), types.end(), configs[pick].gpu) - types.begin()] -=
          configs[pick].gpus;
    }
  }

  // Place the chosen configurations, highest utility first; a job that keeps its
  // configuration keeps its GPUs; fragmentation falls back to smaller counts.
  std::vector<size_t> chosen;
  for (size_t k = 0; k < configs.size(); ++k)
    if (y[k] > 0.5) chosen.push_back(k);
  std::stable_sort(chosen.begin(), chosen.end(),
                   [&](size_t a, size_t b) { return configs[a].utility > configs[b].utility; });
  FreeMap free = ctx.free_map();
  for (size_t k : chosen) {
    const Job& job = *ctx.jobs[configs[k].job];
    if (job.state == JobState::running && job.alloc.shape.gpu == configs[k].gpu &&
        job.alloc.shape.gpus() == configs[k].gpus && free.fits(job.alloc)) {
      targets[configs[k].job].alloc = job.alloc;
      free.take(job.alloc);
    }
  }
  for (size_t k : chosen) {
    const Config& cf = configs[k];
    if (!targets[cf.job].alloc.empty()) continue;
    const Job& job = *ctx.jobs[cf.job];
    std::optional<Allocation> a;
    for (int c = cf.gpus; !a && c >= 1; c /= 2) a = place_best(ctx, free, job, cf.gpu, c, true);
    if (!a) continue;
    free.take(*a);
    targets[cf.job].alloc = *a;
    targets[cf.job].reason = "ILP: " + std::to_string(cf.gpus) + " " + cf.gpu;
  }
  return targets;
}

}  // namespace crius::scheduler
