// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The in-Cell plan search: for one Cell, every DP x TP shape, micro-batching,
// recomputation, schedule and ZeRO stage, each with its best layer split under the
// memory cap; estimate_cell() keeps the fastest, estimate_plan() costs one given plan.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <sstream>

#include "common/util.h"
#include "estimator/cost.h"

namespace crius::estimator {

using namespace detail;

namespace {

constexpr std::int64_t kLayerCostVisits = 8;

struct SplitResult {
  bool ok = false;
  bool beaten = false;  // not searched to the end: it cannot beat the bound it was given
  std::vector<int> ends;  // end layer of each stage
  double t_max = 0, t_sum = 0;
};

struct Evaluated {
  double iter = kInf;
  double mem_max = 0;
  Breakdown br;
  MemoryBreakdown mb;
};

class Searcher {
 public:
  explicit Searcher(Ctx& x) : m_x(x) {}

  void prepare(const Combo& k) {
    prepare_kinds(k);
    prepare_layers();
  }

  // The cost of each layer kind under `k` and the model's total time: enough for lower_bound().
  void prepare_kinds(const Combo& k) {
    const Ctx& x = m_x;
    // A layer_cost call counts as kLayerCostVisits layer visits: about its cost, so that the
    // budget stays a measure of time (job_submit-speed.sh's worst request: ~15 ms at 4,000,000).
    x.spend(kLayerCostVisits * (static_cast<std::int64_t>(x.d.kinds.size()) + 2));
    m_kind_cost.clear();
    for (const auto& kind : x.d.kinds) m_kind_cost.push_back(layer_cost(x, k, kind, false));
    m_embed = layer_cost(x, k, x.d.embed, false);
    m_embed.mem_work = 0;
    m_head = layer_cost(x, k, x.d.head, true);
    if (m_kind_count.empty()) {
      m_kind_count.assign(x.d.kinds.size(), 0);
      for (int kind : x.d.layer_kind) ++m_kind_count[kind];
    }
    m_total = m_embed.time + m_head.time;
    for (std::size_t i = 0; i < m_kind_cost.size(); ++i) m_total += m_kind_count[i] * m_kind_cost[i].time;
  }

  // Per-layer prefix sums of the kinds' costs, for the splits.
  void prepare_layers() {
    const Ctx& x = m_x;
    x.spend(x.L);
    const int L = x.L;
    m_pt.assign(L + 1, 0);
    m_ps.assign(L + 1, 0);
    m_pa.assign(L + 1, 0);
    m_pgd.assign(L + 1, 0);
    m_pge.assign(L + 1, 0);
    m_ppg.assign(L + 1, 0);
    m_max_work = 0;
    for (int i = 0; i < L; ++i) {
      const LayerCost& lc = m_kind_cost[x.d.layer_kind[i]];
      m_pgd[i + 1] = m_pgd[i] + lc.grad_bytes_dense;
      m_pge[i + 1] = m_pge[i] + lc.grad_bytes_expert;
      m_ppg[i + 1] = m_ppg[i] + lc.params_gpu;
      m_pt[i + 1] = m_pt[i] + lc.time;
      m_ps[i + 1] = m_ps[i] + lc.mem_static;
      m_pa[i + 1] = m_pa[i] + lc.mem_act;
      m_max_work = std::max(m_max_work, lc.mem_work);
    }
  }

  double stage_time(int s, int b, int e) const {
    double t = m_pt[e] - m_pt[b];
    if (s == 0) t += m_embed.time;
    if (s == m_x.S - 1) t += m_head.time;
    return t;
  }

  double stage_mem(const Combo& k, int s, int b, int e) const { return stage_mem(s, in_flight(k, m_x.S, s), b, e); }
  // `n`: micro-batches in flight on stage s (in_flight).
  double stage_mem(int s, double n, int b, int e) const {
    double mem = (m_ps[e] - m_ps[b]) + n * (m_pa[e] - m_pa[b]);
    if (s == 0) mem += m_embed.mem_static + n * m_embed.mem_act;
    // The output layer's working set and a recomputed layer's are not live at once.
    if (s == m_x.S - 1) mem += m_head.mem_static + std::max(m_max_work, m_head.mem_work);
    else mem += m_max_work;
    return mem;
  }

  // Greedy: each stage takes as many layers as fit under `tmax` and memory, and at least `least`
  // (an interleaved schedule's chunks per stage).
  bool greedy(const Combo& k, double tmax, std::vector<int>* ends, int least = 1) const {
    const int S = m_x.S, L = m_x.L;
    m_x.spend(L);
    int b = 0;
    for (int s = 0; s < S; ++s) {
      const int limit = L - least * (S - 1 - s);
      const double n = in_flight(k, S, s);
      int e = s == S - 1 ? L : b + least;
      if (e > limit || stage_time(s, b, e) > tmax || stage_mem(s, n, b, e) > m_x.cap) return false;
      while (s < S - 1 && e < limit && stage_time(s, b, e + 1) <= tmax && stage_mem(s, n, b, e + 1) <= m_x.cap) ++e;
      if (ends) (*ends)[s] = e;
      b = e;
    }
    return true;
  }

  SplitResult finish(std::vector<int> ends) const {
    SplitResult r;
    r.ok = true;
    r.ends = std::move(ends);
    int b = 0;
    for (int s = 0; s < m_x.S; ++s) {
      double t = stage_time(s, b, r.ends[s]);
      r.t_max = std::max(r.t_max, t);
      r.t_sum += t;
      b = r.ends[s];
    }
    return r;
  }

  // The layers as even as they go, where `rule` allows that split with `v` chunks per stage.
  SplitResult uniform(const Combo& k, SplitRule rule, int v) const {
    const int S = m_x.S, L = m_x.L;
    std::vector<int> ends(S);
    for (int s = 0; s < S; ++s) ends[s] = static_cast<int>((static_cast<long long>(L) * (s + 1)) / S);
    if (!split_allowed(rule, ends.data(), S, v)) return {};
    int b = 0;
    for (int s = 0; s < S; ++s) {
      if (stage_mem(k, s, b, ends[s]) > m_x.cap) return {};
      b = ends[s];
    }
    return finish(std::move(ends));
  }

  // The split of SplitRule::first_last with the smallest bottleneck under the memory cap: the middle
  // stages m layers each, the first and last stage the rest between them; each stage a multiple
  // of `v` layers (an interleaved schedule's chunks).
  SplitResult first_last(const Combo& k, int v = 1) const {
    const int S = m_x.S, L = m_x.L;
    if (S <= 2 && v == 1) return balanced(k, kInf);
    std::vector<int> ends(S), best_ends;
    double best_t = kInf;
    const int middle = std::max(S - 2, 0);
    for (int m = S > 2 ? v : 0; middle * m + 2 * v <= L; m += v) {
      m_x.spend(static_cast<std::int64_t>(L - middle * m) * S);
      for (int a = v; a + middle * m + v <= L; a += v) {
        if ((L - a - middle * m) % v != 0) continue;
        for (int s = 0; s < S - 1; ++s) ends[s] = a + s * m;
        ends[S - 1] = L;
        double t = 0;
        bool fits = true;
        for (int s = 0, b = 0; s < S && fits; b = ends[s], ++s) {
          t = std::max(t, stage_time(s, b, ends[s]));
          fits = t < best_t && stage_mem(k, s, b, ends[s]) <= m_x.cap;
        }
        if (fits) best_t = t, best_ends = ends;
      }
      if (S <= 2) break;
    }
    if (best_ends.empty()) return {};
    return finish(std::move(best_ends));
  }

  // Minimum bottleneck split under the memory cap (binary search on the bottleneck); `beaten` as
  // soon as no split can make an iteration faster than `beat` seconds.
  SplitResult balanced(const Combo& k, double beat, int least = 1) const {
    const int S = m_x.S;
    std::vector<int> ends(S);
    const double total = m_pt[m_x.L] + m_embed.time + m_head.time;
    if (!greedy(k, kInf, &ends, least)) return {};
    double hi = total, lo = total / S;
    double maxl = 0;
    for (const auto& lc : m_kind_cost) maxl = std::max(maxl, lc.time);
    double guess = lo + maxl + m_embed.time + m_head.time;
    if (guess < hi && greedy(k, guess, nullptr, least)) hi = guess;
    for (int it = 0; it < 40 && hi - lo > 1e-7 * hi; ++it) {
      double mid = 0.5 * (lo + hi);
      if (greedy(k, mid, nullptr, least)) {
        hi = mid;
      } else {
        lo = mid;
        // No split has a bottleneck under lo, so iter >= (m - 1/V) lo + total/V (V = 1: 1F1B, GPipe).
        const double v = virtual_stages(k);
        if ((k.m - 1 / v) * lo + total / v >= beat) {
          SplitResult r;
          r.beaten = true;
          return r;
        }
      }
    }
    greedy(k, hi, &ends, least);
    return finish(std::move(ends));
  }

  // What of a stage's data-parallel communication `dpt` (an all-reduce's volume) the stack does
  // not hide, per step. Gradients are reduced in buckets as the last micro-batch's backward
  // (about 2/3 of its time `t`) produces them; with ZeRO-1 that is a reduce-scatter (half the
  // volume), and the parameters' all-gather (the other half) runs during the next iteration's
  // first forward (1/3 of `t`). ZeRO-2 reduce-scatters in every micro-batch's backward; ZeRO-3
  // also gathers the parameters for every forward and again for every backward, beside that
  // backward's reduce-scatter. The last bucket of each can hide behind nothing: Megatron-Core's
  // buckets hold max(4e7, 1e6 x dp) parameters (DistributedDataParallelConfig.bucket_size).
  double exposed_dp(const Combo& k, double dpt, double t, double params) const {
    const StackSwitches& st = m_x.c.stack;
    const double last = params > 0 ? std::min(1.0, std::max(4e7, 1e6 * k.replicas()) / params) : 1;
    auto hide = [&](double comm, double window, bool on) { return on ? std::max(comm - window, comm * last) : comm; };
    const double half = dpt / 2;
    switch (k.zero) {
      case 0: return hide(dpt, t * 2 / 3, st.overlap_grad_reduce);
      case 1: return hide(half, t * 2 / 3, st.overlap_grad_reduce) + hide(half, t / 3, st.overlap_param_gather);
      case 2: return k.m * hide(half, t * 2 / 3, st.overlap_grad_reduce) + hide(half, t / 3, st.overlap_param_gather);
      default:
        return k.m * (hide(half, t / 3, st.overlap_param_gather) +
                      hide(2 * half, t * 2 / 3, st.overlap_grad_reduce && st.overlap_param_gather));
    }
  }

  // Full iteration time and memory of a split.
  Evaluated evaluate(const Combo& k, const SplitResult& sp, bool want_breakdown) const {
    const Ctx& x = m_x;
    const int S = x.S;
    Evaluated ev;
    const double V = k.sched.kind == Schedule::Kind::interleaved ? k.sched.virtual_stages : 1;
    // Pipeline p2p per micro-batch: activation forward, gradient backward, at
    // the slowest stage boundary (its activation size; whether it crosses nodes).
    double pp = 0;
    const int gpn = x.cell.gpus_per_node;
    for (int s = 0; s + 1 < S; ++s) {
      const int last = sp.ends[s] - 1;
      const double out =
          (last < 0 ? x.d.embed.out_bytes : x.d.kinds[x.d.layer_kind[last]].out_bytes) * k.mbs / k.cp / k.tp;
      const bool crosses = (s + 1) * x.gps / gpn != ((s + 1) * x.gps - 1) / gpn;
      const int kn = crosses ? 2 : 1;
      const double c1 = collective_time(CommOp::send, 2, kn, out, x.part, x.c, crosses ? std::min(x.gps, gpn) : 1,
                                                x.cell.nodes, x.cell.gpus_per_node);
      // Overlapped (interleaved schedule): only the sends of the fill and the drain are exposed.
      const double exposed = x.c.stack.overlap_p2p_comm && V > 1 ? S - 1 : k.m + S - 1;
      pp = std::max(pp, exposed * 2 * c1 * V);
    }
    // DP gradient all-reduce and optimizer step, slowest stage: over the dp x cp ranks that hold
    // the same weights (rank order tp-cp-dp-pp: tp apart).
    const int ep = x.d.experts && k.ep ? std::gcd(x.d.experts, k.dp) : 1;
    const int reps = k.replicas();
    const double bw = x.gpu.memory_bw_gbs * 1e9 * x.c.memory_efficiency;
    double dp_max = 0, opt_max = 0, mem_max = 0;
    int b = 0, worst_mem_stage = 0;
    std::vector<double> stage_params(S);
    for (int s = 0; s < S; ++s) {
      const int e = sp.ends[s];
      double gd = m_pgd[e] - m_pgd[b], ge = m_pge[e] - m_pge[b], pg = m_ppg[e] - m_ppg[b];
      if (s == 0) gd += m_embed.grad_bytes_dense, pg += m_embed.params_gpu;
      if (s == S - 1) gd += m_head.grad_bytes_dense, pg += m_head.params_gpu;
      double dpt = 0;
      if (reps > 1) {
        const int kn = nodes_spanned(x, reps, k.tp);
        dpt += collective_time(CommOp::all_reduce, reps, kn, gd, x.part, x.c, k.tp, x.cell.nodes,
                                       x.cell.gpus_per_node);
        const int dpe = reps / ep;
        if (dpe > 1 && ge > 0) {
          const int kne = nodes_spanned(x, reps, k.tp);
          dpt += collective_time(CommOp::all_reduce, dpe, std::min(kne, dpe), ge, x.part, x.c, k.tp,
                                         x.cell.nodes, x.cell.gpus_per_node);
        }
      }
      if (dpt > 0) dpt = exposed_dp(k, dpt, stage_time(s, b, e), pg);
      const double opt = pg * optimizer_update_bytes(x.model, x.c.stack.master_param_remainders) / (k.zero ? reps : 1) / bw;
      dp_max = std::max(dp_max, dpt);
      opt_max = std::max(opt_max, opt);
      const double mem = stage_mem(k, s, b, e);
      if (mem > mem_max) mem_max = mem, worst_mem_stage = s;
      b = e;
    }
    // Interleaved, the fill and drain run one chunk at a time: (S - 1) chunks of a stage. A stage
    // whose layers do not divide into its V chunks has chunks one layer longer than the mean.
    double chunk = 1;
    for (int s = 0, b0 = 0; V > 1 && s < S; b0 = sp.ends[s], ++s) {
      const int n = sp.ends[s] - b0, v = static_cast<int>(V);
      chunk = std::max(chunk, static_cast<double>((n + v - 1) / v * v) / n);
    }
    const double bubble = (sp.t_sum - sp.t_max) / V * chunk;
    ev.iter = k.m * sp.t_max + bubble + pp + dp_max + opt_max;
    ev.mem_max = mem_max;
    if (want_breakdown) {
      // Split the steady-state time of the bottleneck stage into its parts.
      int bb = 0, bs = 0;
      double best_t = -1;
      for (int s = 0, st = 0; s < S; st = sp.ends[s], ++s) {
        double t = stage_time(s, st, sp.ends[s]);
        if (t > best_t) best_t = t, bs = s, bb = st;
      }
      double comp = 0, tp = 0, moe = 0, cp = 0;
      for (int i = bb; i < sp.ends[bs]; ++i) {
        const LayerCost& lc = m_kind_cost[x.d.layer_kind[i]];
        comp += lc.compute, tp += lc.tp, moe += lc.moe, cp += lc.cp;
      }
      if (bs == 0) comp += m_embed.compute, tp += m_embed.tp;
      if (bs == S - 1) comp += m_head.compute, tp += m_head.tp;
      ev.br.compute = k.m * comp;
      ev.br.tp_comm = k.m * tp;
      ev.br.moe_comm = k.m * moe;
      ev.br.cp_comm = k.m * cp;
      ev.br.bubble = bubble;
      ev.br.pp_comm = pp;
      ev.br.dp_comm = dp_max;
      ev.br.optimizer = opt_max;
      // Memory breakdown of the most loaded stage.
      const int s = worst_mem_stage;
      const int sb = s == 0 ? 0 : sp.ends[s - 1], se = sp.ends[s];
      const double n = in_flight(k, S, s);
      const double w = x.d.dtype_bytes;
      double params = 0, act = 0, stat = 0;
      for (int i = sb; i < se; ++i) {
        const LayerCost& lc = m_kind_cost[x.d.layer_kind[i]];
        params += lc.params_gpu;
        act += n * lc.mem_act;
        stat += lc.mem_static;
      }
      if (s == 0) params += m_embed.params_gpu, act += n * m_embed.mem_act, stat += m_embed.mem_static;
      if (s == S - 1) params += m_head.params_gpu, stat += m_head.mem_static;
      act += s == S - 1 ? std::max(m_max_work, m_head.mem_work) : m_max_work;
      // static = params + grads + optimizer states, of which ZeRO-3 and -2 keep a DP rank's share
      const double p_kept = params * w / (k.zero >= 3 ? reps : 1), g_kept = params * w / (k.zero >= 2 ? reps : 1);
      const double opt_bytes = stat - p_kept - g_kept;
      ev.mb.params = p_kept / kGiB;
      ev.mb.grads = g_kept / kGiB;
      ev.mb.optimizer = opt_bytes / kGiB;
      ev.mb.activations = act / kGiB;
      ev.mb.workspace = x.c.workspace_gib;
    }
    return ev;
  }

  // iter >= (m - 1/V) T_max + sum/V and T_max >= sum/S.
  double lower_bound(const Combo& k) const {
    const double total = m_total;
    double v = virtual_stages(k);
    if (k.sched.kind == Schedule::Kind::one_f_one_b && m_x.S > 1 && m_x.L >= m_x.S * 2 && k.m % m_x.S == 0) {
      // Before the schedule is chosen: interleaving may shrink the bubble (schedules_for's deepest).
      const auto& pin = m_x.req.pins.schedule;
      v = std::max(4, pin && pin->kind == Schedule::Kind::interleaved ? pin->virtual_stages : 1);
    }
    return (k.m - 1.0 / v) * total / m_x.S + total / v;
  }
  // Mean over stages of the stage memory: a lower bound of the most loaded stage.
  double mean_stage_mem(const Combo& k) const {
    double sum = m_ps[m_x.L] + m_embed.mem_static + m_head.mem_static + std::max(m_max_work, m_head.mem_work) +
                 (m_x.S - 1) * m_max_work;
    sum += m_pa[m_x.L] * in_flight(k, m_x.S, m_x.S - 1) + m_embed.mem_act * in_flight(k, m_x.S, 0);
    return sum / m_x.S;
  }

  static int virtual_stages(const Combo& k) {
    return k.sched.kind == Schedule::Kind::interleaved ? k.sched.virtual_stages : 1;
  }

  // All compositions of L layers into S stages that `rule` allows (brute force).
  void all_splits(const Combo& k, SplitRule rule, std::vector<int>& ends, int s, int b, SplitResult& best,
                  double& best_iter) const {
    const int S = m_x.S, L = m_x.L;
    if (s == S - 1) {
      ends[s] = L;
      if (L - b < 1 || !split_allowed(rule, ends.data(), S, virtual_stages(k))) return;
      int bb = 0;
      for (int q = 0; q < S; ++q) {
        if (stage_mem(k, q, bb, ends[q]) > m_x.cap) return;
        bb = ends[q];
      }
      SplitResult r = finish(ends);
      double it = evaluate(k, r, false).iter;
      if (it < best_iter) best_iter = it, best = r;
      return;
    }
    for (int e = b + 1; e <= L - (S - 1 - s); ++e) {
      ends[s] = e;
      all_splits(k, rule, ends, s + 1, e, best, best_iter);
    }
  }

 private:
  Ctx& m_x;
  std::vector<LayerCost> m_kind_cost;
  LayerCost m_embed, m_head;
  std::vector<int> m_kind_count;  // layers of each kind
  double m_total = 0;             // fwd + bwd time of all layers, embedding and head
  std::vector<double> m_pt, m_ps, m_pa, m_pgd, m_pge, m_ppg;
  double m_max_work = 0;
};

Plan make_plan(const Ctx& x, const Combo& k, const SplitResult& sp) {
  Plan p;
  p.micro_batch_size = k.mbs;
  p.micro_batches = k.m;
  p.schedule = k.sched;
  p.recompute = k.rc;
  p.sequence_parallel = k.sp;
  p.zero = k.zero;
  p.runtime = x.req.runtime;
  p.expert_parallel = k.ep;
  p.framework = x.req.framework;
  int b = 0;
  for (int s = 0; s < x.S; ++s) {
    p.stages.push_back(StagePlan{b, sp.ends[s], k.dp, k.tp, k.cp});
    b = sp.ends[s];
  }
  return p;
}

struct SearchState {
  bool found = false;
  double best_iter = kInf;
  Combo best_combo;
  SplitResult best_split;
  double min_mem = kInf;  // smallest memory need of any plan looked at (bytes)
  std::string reason;     // first structural reason a dimension had no candidate
  std::string rule;       // the framework's reason for the first plan it could not run
  bool probe_failed = false;
  bool budget_out = false;  // the request's work budget ran out during the search
  std::int64_t evaluated = 0;
};

// Whether the framework can run `layers` over `stages` with `v` chunks per stage at all.
bool interleaving_possible(const Ctx& x, const Combo& k, int v) {
  if (x.S < 2 || k.m % x.S != 0 || x.L < x.S * v) return false;
  return split_rule(x.req.framework, Schedule{Schedule::Kind::interleaved, v}) != SplitRule::even || x.L % (x.S * v) == 0;
}

std::vector<Schedule> schedules_for(const Ctx& x, const Combo& k) {
  const Pins& p = x.req.pins;
  std::vector<Schedule> out;
  auto allowed = [&](const Schedule& s) { return !p.schedule || *p.schedule == s; };
  if (x.req.runtime == Runtime::alpa) {
    Schedule g{Schedule::Kind::gpipe, 1};
    if (allowed(g)) out.push_back(g);
    return out;
  }
  Schedule f{Schedule::Kind::one_f_one_b, 1};
  if (allowed(f)) out.push_back(f);
  for (int v : {2, 3, 4}) {
    Schedule s{Schedule::Kind::interleaved, v};
    if (interleaving_possible(x, k, v) && allowed(s)) out.push_back(s);
  }
  if (p.schedule && p.schedule->kind == Schedule::Kind::gpipe) out.push_back(*p.schedule);
  // A pinned interleaving deeper than the search's own (NeMo's recipes use up to 12 chunks).
  if (p.schedule && p.schedule->kind == Schedule::Kind::interleaved && p.schedule->virtual_stages > 4 &&
      interleaving_possible(x, k, p.schedule->virtual_stages))
    out.push_back(*p.schedule);
  return out;
}

void run_search(Ctx& x, SearchState& st) {
  const Pins& p = x.req.pins;
  const int B = x.req.global_batch;
  const bool ep_default = expert_parallel_allowed(x.req.framework, x.model);
  // Every plan kept is one the framework can run (the search's splits already follow its rule).
  const bool ruled = x.req.framework.kind != Framework::Kind::crius_train;
  Searcher srch(x);
  // Each stage's tensor-parallel degree and context-parallel size; the data-parallel degree is the rest.
  struct Shape { int tp, cp; };
  std::vector<Shape> shapes;
  const std::vector<int> cps = context_parallel_sizes(x.req.framework, x.model, &x.c.stack);
  for (int t : divisors(x.gps))
    for (int c : cps)
      if (tp_allowed(x.req, x.d, x.part, x.cell.gpus_per_node, x.gps, t, c)) shapes.push_back({t, c});
  if (shapes.empty()) {
    if (p.cp && std::find(cps.begin(), cps.end(), *p.cp) == cps.end())
      st.reason = "the pinned --cp " + std::to_string(*p.cp) + " is not one the plan search tries for this job (1 or " +
                  "a power of two up to " + std::to_string(kMaxSearchContextParallel) + " that " + to_string(x.req.framework) +
                  " runs for it)";
    else
      st.reason = p.tp || p.dp || p.cp ? "the pinned --tp/--cp/--dp does not fit " + std::to_string(x.gps) + " GPUs per stage"
                                       : "no tensor-parallel degree divides the heads (query groups) and fits in a node";
    return;
  }
  std::vector<Recompute> rcs;
  if (x.req.runtime == Runtime::alpa) rcs = {Recompute::full};
  else if (x.model.family == Family::wide_resnet) rcs = {Recompute::none, Recompute::full};
  else rcs = {Recompute::none, Recompute::selective, Recompute::full};
  if (p.recompute) {
    if (std::find(rcs.begin(), rcs.end(), *p.recompute) != rcs.end() ||
        (x.model.family == Family::wide_resnet && megatron_family(x.req.runtime)))
      rcs = {*p.recompute};
    else
      rcs.clear();
  }
  // Memory probe: the plan with the least memory per GPU (largest TP and, for it, the largest CP,
  // the most ZeRO sharding, full recompute, sequence parallel, smallest micro-batch, 1F1B) bounds
  // every plan of the Cell from below; if it does not fit, nothing does. A smaller TP with a larger
  // CP may hold fewer activations, so each TP degree's largest CP is probed.
  // (Not for alpa: without sequence parallelism the largest TP is not always
  // the smallest footprint, and its space is small anyway.)
  if (!x.brute && megatron_family(x.req.runtime)) {
    double least = kInf;
    bool fits = false;
    const bool any_cp = std::any_of(shapes.begin(), shapes.end(), [](const Shape& s) { return s.cp > 1; });
    for (std::size_t i = any_cp ? 0 : shapes.size() - 1; i < shapes.size() && !fits; ++i) {
      if (i + 1 < shapes.size() && shapes[i + 1].tp == shapes[i].tp) continue;  // not its TP's largest CP
      Combo k;
      k.tp = shapes[i].tp;
      k.cp = shapes[i].cp;
      k.dp = x.gps / k.tp / k.cp;
      k.rc = Recompute::full;
      k.sp = k.tp > 1 && x.model.family != Family::wide_resnet;
      k.ep = p.expert_parallel.value_or(ep_default);
      k.sched = Schedule{Schedule::Kind::one_f_one_b, 1};
      k.mbs = 1;
      k.m = std::max(1, B / k.dp);
      const std::vector<int> has = zero_stages(x.req.framework, x.model, x.S, k.m, &x.c.stack);
      k.zero = k.replicas() > 1 ? p.zero.value_or(has.empty() ? 1 : has.back()) : 0;
      srch.prepare(k);
      fits = srch.greedy(k, kInf, nullptr);
      if (!fits) least = std::min(least, srch.mean_stage_mem(k));
    }
    if (!fits) {
      ++st.evaluated;
      st.min_mem = std::min(st.min_mem, least);
      st.probe_failed = true;
      return;
    }
  }
  bool any_batch = false;
  std::vector<int> has;  // the ZeRO stages of plans with has_m micro-batches
  int has_m = 0;
  for (const Shape& shape : shapes) {
    const int t = shape.tp, dp = x.gps / t / shape.cp;
    std::vector<int> mbss = micro_batch_sizes(x.req, dp);
    // Larger micro-batches first: usually faster, so pruning starts early.
    std::reverse(mbss.begin(), mbss.end());
    for (int mb : mbss) {
      any_batch = true;
      for (Recompute rc : rcs) {
        std::vector<bool> sps = {false};
        // Sequence parallelism never costs time or memory in this model, so the
        // fast search only tries it on (the brute force tries both).
        if (t > 1 && megatron_family(x.req.runtime) && x.model.family != Family::wide_resnet)
          sps = x.brute ? std::vector<bool>{true, false} : std::vector<bool>{true};
        if (p.sequence_parallel) {
          if (*p.sequence_parallel && (t == 1 || x.req.runtime == Runtime::alpa)) continue;
          sps = {*p.sequence_parallel};
        }
        for (bool spv : sps) {
          if (x.out_of_work()) {
            st.budget_out = true;
            return;
          }
          Combo k;
          k.tp = t, k.cp = shape.cp, k.dp = dp, k.mbs = mb, k.m = B / dp / mb, k.rc = rc, k.sp = spv;
          k.ep = p.expert_parallel.value_or(ep_default);
          k.sched = Schedule{};
          // ZeRO-1 has the same communication volume and less memory and optimizer time, so the
          // fast search tries it first and ZeRO-0 only where the stack overlaps the DP
          // communication (its all-gather then hides behind a shorter window than an all-reduce).
          // ZeRO-2 and -3 add communication in every micro-batch: tried only when no less sharded
          // plan of the combo fits (brute force: every stage the framework has).
          const bool overlapped = x.c.stack.overlap_grad_reduce || x.c.stack.overlap_param_gather;
          if (k.m != has_m) has = zero_stages(x.req.framework, x.model, x.S, k.m, &x.c.stack), has_m = k.m;
          static constexpr int kEveryStage[] = {1, 0, 2, 3}, kShardedStages[] = {1, 2, 3};
          std::vector<int> zeros;
          for (int z : x.brute || overlapped ? std::span<const int>(kEveryStage) : std::span<const int>(kShardedStages))
            if (std::find(has.begin(), has.end(), z) != has.end()) zeros.push_back(z);
          if (p.zero) zeros = {*p.zero};
          // Alpa plans keep every optimizer state on each DP rank. Alpa itself shards them (the
          // artifact ran it with prefer_reduce_scatter; its measured pure-DP memory falls as 1/dp),
          // but the artifact's best-plan times fit better so: sharded states admit plans (plain DP
          // of BERT 2.6B on 4 V100) that Alpa's planner did not run and that cost faster than it ran
          // (docs/results.md, "What the cost model gets wrong on BERT").
          else if (k.replicas() == 1 || x.req.runtime == Runtime::alpa) zeros = {0};
          if (zeros.empty()) {
            if (st.rule.empty()) st.rule = check_zero(x.req.framework, x.model, 1, k.replicas(), x.S, k.m, &x.c.stack).error();
            continue;
          }
          // The layers' memory depends on the ZeRO stage: prepared for the first one tried.
          k.zero = zeros.front();
          srch.prepare_kinds(k);
          if (!x.brute && srch.lower_bound(k) >= st.best_iter) continue;
          bool layers_ready = false;
          for (const Schedule& sc : schedules_for(x, k)) {
            k.sched = sc;
            if (!x.brute && srch.lower_bound(k) >= st.best_iter) continue;
            if (!layers_ready) srch.prepare_layers(), layers_ready = true;
            bool fits = false;  // a less sharded plan of this combo fits, or cannot win at all
            for (int z : zeros) {
              if (z >= 2 && fits && !x.brute) break;
              if (z != k.zero) {
                k.zero = z;
                srch.prepare(k);
              }
              SplitResult sp;
              const SplitRule rule = split_rule(x.req.framework, sc);
              const int v = sc.kind == Schedule::Kind::interleaved ? sc.virtual_stages : 1;
              if (x.brute) {
                std::vector<int> ends(x.S);
                double bi = kInf;
                srch.all_splits(k, rule, ends, 0, 0, sp, bi);
              } else if (rule == SplitRule::even) {
                sp = srch.uniform(k, rule, v);
              } else if (rule == SplitRule::first_last) {
                sp = srch.first_last(k, v);
                SplitResult u = srch.uniform(k, rule, v);
                if (u.ok && (!sp.ok || srch.evaluate(k, u, false).iter < srch.evaluate(k, sp, false).iter)) sp = u;
              } else {
                sp = srch.balanced(k, x.brute ? kInf : st.best_iter, v);
                if (sp.beaten) {  // nor can the uniform split, whose bottleneck is no smaller
                  ++st.evaluated;
                  fits = true;
                  continue;
                }
                SplitResult u = srch.uniform(k, rule, v);
                if (u.ok && (!sp.ok || srch.evaluate(k, u, false).iter < srch.evaluate(k, sp, false).iter)) sp = u;
              }
              ++st.evaluated;
              if (!sp.ok) {
                // Memory of the least-loaded possible stage bounds what this combo needs.
                SplitResult u;
                std::vector<int> ends(x.S);
                for (int s = 0; s < x.S; ++s) ends[s] = static_cast<int>((static_cast<long long>(x.L) * (s + 1)) / x.S);
                double worst = 0;
                int b = 0;
                for (int s = 0; s < x.S; ++s) {
                  worst = std::max(worst, srch.stage_mem(k, s, b, ends[s]));
                  b = ends[s];
                }
                st.min_mem = std::min(st.min_mem, worst);
                continue;
              }
              fits = true;
              Evaluated ev = srch.evaluate(k, sp, false);
              st.min_mem = std::min(st.min_mem, ev.mem_max);
              if (ev.iter < st.best_iter) {
                if (ruled) {
                  if (auto ok = check_plan(x.req.framework, x.model, make_plan(x, k, sp), &x.c.stack); !ok) {
                    if (st.rule.empty()) st.rule = ok.error();
                    continue;
                  }
                }
                st.found = true;
                st.best_iter = ev.iter;
                st.best_combo = k;
                st.best_split = sp;
              }
            }
          }
        }
      }
    }
  }
  if (!any_batch && st.reason.empty()) {
    std::ostringstream ss;
    ss << "global batch " << B << " cannot be split";
    if (x.req.runtime == Runtime::alpa) ss << " into " << kAlpaMicroBatches << " micro-batches";
    ss << " over any data-parallel degree that fits " << x.gps << " GPUs per stage";
    if (p.micro_batch_size || p.micro_batches) ss << " with the pinned micro-batching";
    st.reason = ss.str();
  }
}

const GpuType* gpu_of(const Cluster& c, const Cell& cell) { return c.gpus.find(cell.gpu); }

}  // namespace

bool detail::tp_allowed(const Request& req, const ModelDesc& d, const Partition& part, int gpn, int gps, int t, int cp) {
  const int tp_limit = part.nvlink_domain > 0 ? std::min(gpn, part.nvlink_domain) : gpn;
  if (gps % (static_cast<long long>(t) * cp) != 0) return false;
  if (req.pins.cp && *req.pins.cp != cp) return false;
  if (t > tp_limit || gpn % t != 0) return false;  // TP groups stay inside a node (NVLink domain)
  if (d.heads > 0 && d.heads % t != 0) return false;
  if (d.max_tp_divisor > 0 && d.max_tp_divisor % t != 0) return false;
  if (req.pins.tp && *req.pins.tp != t) return false;
  if (req.pins.dp && *req.pins.dp != gps / t / cp) return false;
  return true;
}

std::vector<int> detail::micro_batch_sizes(const Request& req, int dp) {
  const int B = req.global_batch;
  std::vector<int> out;
  if (dp < 1 || B % dp != 0) return out;
  for (int mb : divisors(B / dp)) {
    const int m = B / dp / mb;
    if (req.runtime == Runtime::alpa && m != kAlpaMicroBatches) continue;
    if (req.pins.micro_batch_size && *req.pins.micro_batch_size != mb) continue;
    if (req.pins.micro_batches && *req.pins.micro_batches != m) continue;
    out.push_back(mb);
  }
  return out;
}

static Estimate run_cell(const Request& req, const Cell& cell, const Cluster& cluster, const SearchOptions& opts,
                         const Plan* fixed) {
  const Partition* part = cluster.find_partition(cell.partition);
  if (!part) return infeasible(cell, "no partition '" + cell.partition + "' in the cluster");
  const GpuType* gpu = gpu_of(cluster, cell);
  if (!gpu) return infeasible(cell, "GPU type '" + cell.gpu + "' is not in the catalogue");
  if (cell.nodes < 1 || cell.gpus_per_node < 1 || cell.stages < 1)
    return infeasible(cell, "the Cell must have at least one node, GPU and stage");
  if (cell.nodes > part->nodes || cell.gpus_per_node > part->gpus_per_node)
    return infeasible(cell, "partition '" + part->name + "' has only " + std::to_string(part->nodes) + " nodes x " +
                                std::to_string(part->gpus_per_node) + " GPUs");
  if (cell.gpus() % cell.stages != 0)
    return infeasible(cell, std::to_string(cell.stages) + " stages do not divide " + std::to_string(cell.gpus()) + " GPUs");
  if (cell.stages > max_stages(req.model, req.runtime))
    return infeasible(cell, std::to_string(cell.stages) + " stages exceed the " + std::to_string(max_stages(req.model, req.runtime)) +
                                " the model allows");
  if (auto v = validate_request(req); !v) return infeasible(cell, v.error());
  if (!(gpu->peak_tflops(req.model.dtype) > 0))
    return infeasible(cell, "GPU type '" + gpu->id + "' has no " + std::string(to_string(req.model.dtype)) +
                                " rate in the catalogue (tflops." + std::string(to_string(req.model.dtype)) + ")");
  Ctx x{req, req.model, cell, *part, *gpu, opts.constants ? *opts.constants : cost_constants(cluster.gpus, *gpu, req.runtime),
        describe(req.model)};
  x.L = static_cast<int>(x.d.layer_kind.size());
  x.S = cell.stages;
  x.gps = cell.gpus() / cell.stages;
  x.cap = (gpu->memory_gib * x.c.memory_usable - x.c.workspace_gib) * kGiB;
  x.brute = opts.brute_force;
  x.budget = opts.budget;
  if (!stages_allowed(req.framework, x.L, x.S))
    return infeasible(cell, "framework " + to_string(req.framework) + " needs the " + std::to_string(x.L) +
                                " layers split evenly over the stages; " + std::to_string(x.S) + " stages do not divide them");

  Estimate e;
  e.cell = cell;
  e.gpu_memory_gib = gpu->memory_gib;
  SearchState st;
  if (fixed) {
    Request pinned = req;
    Pins& p = pinned.pins;
    if (fixed->stages.size() != static_cast<size_t>(cell.stages))
      return infeasible(cell, "the plan has " + std::to_string(fixed->stages.size()) + " stages, the Cell " +
                                  std::to_string(cell.stages));
    p.tp = fixed->stages[0].tp;
    p.dp = fixed->stages[0].dp;
    p.cp = fixed->stages[0].cp;
    p.micro_batch_size = fixed->micro_batch_size;
    p.micro_batches = fixed->micro_batches;
    p.schedule = fixed->schedule;
    p.recompute = fixed->recompute;
    p.sequence_parallel = fixed->sequence_parallel;
    p.zero = fixed->zero;
    p.expert_parallel = fixed->expert_parallel;
    Ctx z{pinned, pinned.model, cell, *part, *gpu, x.c, x.d};
    z.L = x.L, z.S = x.S, z.gps = x.gps, z.cap = x.cap;
    // Evaluate exactly the given split.
    Searcher srch(z);
    Combo k;
    k.tp = fixed->stages[0].tp, k.dp = fixed->stages[0].dp, k.mbs = fixed->micro_batch_size, k.m = fixed->micro_batches;
    k.rc = fixed->recompute, k.sp = fixed->sequence_parallel, k.sched = fixed->schedule, k.zero = fixed->zero;
    k.ep = fixed->expert_parallel;
    k.cp = fixed->stages[0].cp;
    if (k.tp * k.dp * k.cp != x.gps || static_cast<long long>(k.dp) * k.mbs * k.m != req.global_batch)
      return infeasible(cell, "the plan's dp x tp x cp or micro-batching does not match the Cell and batch");
    srch.prepare(k);
    std::vector<int> ends;
    int prev = 0;
    for (const auto& sp : fixed->stages) {
      if (sp.layer_begin != prev || sp.layer_end <= sp.layer_begin) return infeasible(cell, "the plan's layer ranges are not contiguous");
      ends.push_back(sp.layer_end);
      prev = sp.layer_end;
    }
    if (prev != x.L) return infeasible(cell, "the plan's layer ranges do not cover the model");
    if (auto ok = check_plan(req.framework, req.model, *fixed, &x.c.stack); !ok) return infeasible(cell, ok.error());
    SplitResult sr = srch.finish(ends);
    Evaluated ev = srch.evaluate(k, sr, true);
    e.plan = *fixed;
    e.iter_time_s = ev.iter;
    e.samples_per_s = req.global_batch / ev.iter;
    e.breakdown = ev.br;
    e.memory = ev.mb;
    e.memory_gib = ev.mb.total();
    e.flops_per_iter = iteration_flops(req.model, req.global_batch, k.rc);
    e.plans_evaluated = 1;
    e.feasible = ev.mem_max <= x.cap;
    if (!e.feasible)
      e.why = "the plan needs " + util::fixed(e.memory_gib, 1) + " GiB per GPU, " + cell.gpu + " has " + util::fixed(gpu->memory_gib, 1);
    return e;
  }

  // Quick memory bound: model states spread perfectly over every GPU of the Cell.
  {
    const double P = req.model.parameters();
    const double opt = optimizer_state_bytes(req.model, x.c.stack.master_param_remainders);
    const double w = x.d.dtype_bytes;
    double lb = P * (2 * w + opt / std::max(1, x.gps)) / cell.gpus();
    if (lb > x.cap) {
      e.feasible = false;
      e.why = "needs at least " + util::fixed(lb / kGiB + x.c.workspace_gib, 1) + " GiB per GPU at any plan (" + cell.gpu + ": " +
              util::fixed(gpu->memory_gib * x.c.memory_usable, 1) + " of " + util::fixed(gpu->memory_gib, 1) + " GiB usable)";
      return e;
    }
  }
  const bool bounded = !x.brute && opts.at_most_s < kInf;
  if (bounded) st.best_iter = std::nextafter(opts.at_most_s, kInf);  // a plan at the bound counts
  run_search(x, st);
  e.plans_evaluated = st.evaluated;
  e.partial = st.budget_out;
  if (!st.found) {
    e.feasible = false;
    if (st.budget_out) e.why = kBudgetOut;
    else if (bounded && !st.probe_failed && st.reason.empty()) e.why = kNotFaster;
    else if (!st.reason.empty()) e.why = st.reason;
    else if (!st.rule.empty()) e.why = "framework " + to_string(req.framework) + " runs no plan that fits: " + st.rule;
    else if (st.min_mem < kInf && st.min_mem > x.cap)
      e.why = "needs at least " + util::fixed(st.min_mem / kGiB + x.c.workspace_gib, 1) + " GiB per GPU at any plan (" + cell.gpu +
              ": " + util::fixed(gpu->memory_gib * x.c.memory_usable, 1) + " of " + util::fixed(gpu->memory_gib, 1) + " GiB usable)";
    else if (st.min_mem < kInf)
      e.why = "no layer split fits in " + util::fixed(gpu->memory_gib, 1) + " GiB per GPU at any plan (stages too unequal in memory" +
              (split_rule(req.framework, Schedule{}) == SplitRule::any
                   ? std::string(")")
                   : "; framework " + to_string(req.framework) + " allows only the splits of crius(7), FRAMEWORKS)");
    else
      e.why = "no plan matches the pinned dimensions in this Cell";
    return e;
  }
  Searcher srch(x);
  srch.prepare(st.best_combo);
  Evaluated ev = srch.evaluate(st.best_combo, st.best_split, true);
  e.feasible = true;
  e.plan = make_plan(x, st.best_combo, st.best_split);
  e.iter_time_s = ev.iter;
  e.samples_per_s = req.global_batch / ev.iter;
  e.breakdown = ev.br;
  e.memory = ev.mb;
  e.memory_gib = ev.mb.total();
  e.flops_per_iter = iteration_flops(req.model, req.global_batch, st.best_combo.rc);
  return e;
}

Estimate estimate_cell(const Request& req, const Cell& cell, const Cluster& cluster, const SearchOptions& opts) {
  try {
    return run_cell(req, cell, cluster, opts, nullptr);
  } catch (const std::exception& ex) {
    return infeasible(cell, std::string("internal error: ") + ex.what());
  }
}

Estimate estimate_plan(const Request& req, const Cell& cell, const Plan& plan, const Cluster& cluster,
                       const SearchOptions& opts) {
  try {
    return run_cell(req, cell, cluster, opts, &plan);
  } catch (const std::exception& ex) {
    return infeasible(cell, std::string("internal error: ") + ex.what());
  }
}

}  // namespace crius::estimator
