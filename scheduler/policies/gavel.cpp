// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/policies/gavel.h"

#include <glpk.h>

#include <algorithm>
#include <numeric>

namespace crius::scheduler {

// Gavel keeps the count: some type must fit it at the requested count.
Result<void> GavelPolicy::runnable(const Job& job, const Context& ctx) const {
  for (const std::string& gpu : ctx.gpu_types())
    if (ctx.feasible(job, gpu, job.req_gpus)) return {};
  return make_error("no Cell of " + std::to_string(job.req_gpus) +
                    " GPUs of any type fits it in memory");
}

std::vector<Target> GavelPolicy::schedule(const Context& ctx) {
  const std::vector<std::string> types = ctx.gpu_types();
  const size_t J = ctx.jobs.size(), T = types.size();
  std::vector<Target> targets(J);
  if (J == 0) return targets;

  // Throughput of each job on each type at its requested count (data-parallel,
  // what Gavel profiles), normalised by its best type so jobs are comparable.
  std::vector<double> norm(J * T, 0);
  for (size_t j = 0; j < J; ++j) {
    const Job& job = *ctx.jobs[j];
    double top = 0;
    for (size_t t = 0; t < T; ++t) {
      double s = -1;
      for (const PlacedShape& ps : shapes_for(ctx.cluster, types[t], job.req_gpus))
        s = std::max(s, decision_speed(ctx, job, ps.shape, true));
      norm[j * T + t] = std::max(0.0, s);
      top = std::max(top, s);
    }
    for (size_t t = 0; t < T; ++t) norm[j * T + t] = top > 0 ? norm[j * T + t] / top : 0;
  }

  // max sum_jt x_jt * norm_jt  s.t.  sum_t x_jt <= 1,  sum_j x_jt * gpus_j <= capacity_t.
  glp_prob* lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MAX);
  glp_add_rows(lp, static_cast<int>(J + T));
  for (size_t j = 0; j < J; ++j) glp_set_row_bnds(lp, static_cast<int>(j + 1), GLP_UP, 0, 1);
  for (size_t t = 0; t < T; ++t)
    glp_set_row_bnds(lp, static_cast<int>(J + t + 1), GLP_UP, 0, ctx.total_gpus(types[t]));
  glp_add_cols(lp, static_cast<int>(J * T));
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  for (size_t j = 0; j < J; ++j)
    for (size_t t = 0; t < T; ++t) {
      int col = static_cast<int>(j * T + t + 1);
      glp_set_col_bnds(lp, col, norm[j * T + t] > 0 ? GLP_DB : GLP_FX, 0,
                       norm[j * T + t] > 0 ? 1 : 0);
      glp_set_obj_coef(lp, col, norm[j * T + t]);
      ia.push_back(static_cast<int>(j + 1)); ja.push_back(col); ar.push_back(1);
      ia.push_back(static_cast<int>(J + t + 1)); ja.push_back(col);
      ar.push_back(ctx.jobs[j]->req_gpus);
    }
  glp_load_matrix(lp, static_cast<int>(ia.size() - 1), ia.data(), ja.data(), ar.data());
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.tm_lim = static_cast<int>(m_options.solver_time_limit_s * 1000);
  std::vector<double> x(J * T, 0);
  if (glp_simplex(lp, &parm) == 0)
    for (size_t k = 0; k < J * T; ++k) x[k] = glp_get_col_prim(lp, static_cast<int>(k + 1));
  glp_delete_prob(lp);

  // Realise the shares for this round: the largest shares first; a running job
  // whose type the LP still favours keeps its GPUs.
  std::vector<size_t> order(J * T);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    double sa = x[a] + 1e-6 * norm[a], sb = x[b] + 1e-6 * norm[b];
    return sa > sb + 1e-12;
  });
  FreeMap free = ctx.free_map();
  std::vector<bool> done(J, false);
  for (size_t k : order) {
    size_t j = k / T, t = k % T;
    const Job& job = *ctx.jobs[j];
    if (done[j] || x[k] < 1e-6) continue;
    if (job.state == JobState::running && job.alloc.shape.gpu == types[t] && free.fits(job.alloc)) {
      targets[j].alloc = job.alloc;
      free.take(job.alloc);
      done[j] = true;
    }
  }
  for (size_t k : order) {
    size_t j = k / T, t = k % T;
    const Job& job = *ctx.jobs[j];
    if (done[j] || norm[k] <= 0) continue;
    auto a = place_best(ctx, free, job, types[t], job.req_gpus, true);
    if (!a) continue;
    free.take(*a);
    targets[j].alloc = *a;
    targets[j].reason = "LP share " + std::to_string(x[k]).substr(0, 4) + " on " + types[t];
    done[j] = true;
  }
  return targets;
}

}  // namespace crius::scheduler
