// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Per-layer FLOPs/bytes/parameters/activations, collectives, optimizer, and
// the named cost constants per GPU type and runtime profile.
#include "estimator/cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/util.h"

namespace crius::estimator {

std::vector<int> resnet_stage_sizes(int depth);  // catalog.cpp

namespace detail {

static double dtype_bytes(Dtype d) { return d == Dtype::fp64 ? 8.0 : d == Dtype::fp32 ? 4.0 : 2.0; }

static LayerKind transformer_layer(const Model& m, bool moe) {
  const double s = m.seq_len, h = m.hidden, a = m.heads, f = m.ffn_hidden, db = dtype_bytes(m.dtype);
  const double kv = m.kv_heads ? m.kv_heads : m.heads;
  const double qkv_out = h + 2.0 * h * kv / a;
  const double mlp_mats = m.swiglu ? 3.0 : 2.0;
  // With top-k routing each token runs through k experts, padded to capacity.
  const double mlp_scale = moe ? m.top_k * m.capacity_factor : 1.0;
  LayerKind L;
  L.gemm_flops = 2 * s * h * qkv_out + 2 * s * h * h + mlp_scale * 2 * s * h * f * mlp_mats;
  if (moe) L.gemm_flops += 2 * s * h * m.experts;  // gate
  L.attn_flops = 4 * s * s * h;
  L.gemm_calls = 3 + mlp_mats;
  // Two layer norms (read and write the tokens) and two fused bias-dropout-residual adds
  // (read two inputs, write the sum and a one-byte mask), as Megatron-LM's fused kernels and
  // XLA's fusions run them. Without dropout no mask is written or kept (PyTorch's dropout
  // returns its input at p = 0).
  const double masks = m.dropout > 0 ? 1.0 : 0.0;
  L.mem_bytes_rep = (10 * db + 2 * masks) * s * h;
  L.mem_bytes_tp = (mlp_scale * (mlp_mats == 3 ? 3 : 2) * s * f + 4 * s * h) * db;
  L.mem_bytes_attn = a * s * s * (4 * db + masks);
  if (moe && m.expert_group_size > 0) {
    // GShard dispatch and combine: einsums of the [S, E, C] one-hot masks (E C = k cf S) with
    // the tokens, each 2 k cf S h FLOPs per token; the combine weights (db bytes) and the
    // dispatch mask (1 byte) are written and read.
    const double ec = m.top_k * m.capacity_factor * m.expert_group_size;
    L.gemm_flops += 2 * (2 * s * ec * h);
    L.gemm_calls += 2;
    L.mem_bytes_tp += 2 * s * ec * (db + 1);
  }
  const double attn_params = h * qkv_out + h * h + qkv_out + h + 4 * h;
  const double mlp_params = mlp_mats * h * f + f + h;
  if (moe) {
    L.params_dense = attn_params + h * m.experts;
    L.params_expert = m.experts * mlp_params;
  } else {
    L.params_dense = attn_params + mlp_params;
  }
  // Korthikanti et al. 2022: 34 s h + 5 a s^2 bytes per sample in fp16, of which
  // 10 s h are replicated across TP without sequence parallelism; two of them are the one-byte
  // dropout masks, and 3 a s^2 the attention dropout's mask and output (without dropout the
  // values' matmul keeps the softmax output itself).
  L.act_rep = 5 * s * h * db - 2 * (1 - masks) * s * h;
  // Of the TP-sharded part, Q, K, V and the output projection's input: K and V as wide as the
  // KV heads (grouped-query attention).
  L.act_tp = (qkv_out + h + mlp_scale * 2 * f * (mlp_mats / 2)) * s * db;
  L.act_attn = (masks ? 2.5 * db : db) * a * s * s;
  L.act_attn_fused = 4 * a * s;
  L.act_input = s * h * db;
  L.tp_bytes = s * h * db;
  L.tp_collectives = 2;
  if (moe) {
    L.a2a_bytes = s * m.top_k * m.capacity_factor * h * db;
    L.a2a_count = 2;  // dispatch and combine
  }
  L.out_bytes = s * h * db;
  L.kv_bytes = 2 * s * h * kv / a * db;
  return L;
}

static ModelDesc describe_transformer(const Model& m) {
  ModelDesc d;
  d.dtype_bytes = dtype_bytes(m.dtype);
  // Each TP rank holds whole query groups (grouped-query attention: Megatron-Core's num_query_groups
  // must be a multiple of TP), and the groups divide the heads.
  d.heads = m.kv_heads ? m.kv_heads : m.heads;
  d.experts = m.family == Family::moe ? m.experts : 0;
  d.kinds.push_back(transformer_layer(m, false));
  if (m.family == Family::moe) d.kinds.push_back(transformer_layer(m, true));
  for (int i = 0; i < m.layers; ++i)
    d.layer_kind.push_back(m.family == Family::moe && i % m.expert_every == 0 ? 1 : 0);
  const double s = m.seq_len, h = m.hidden, v = m.vocab, db = d.dtype_bytes;
  d.embed.params_dense = v * h + (m.rope ? 0 : s * h);
  d.embed.mem_bytes_rep = 3 * s * h * db;
  d.embed.act_rep = s * h * db;
  d.embed.out_bytes = s * h * db;
  d.head.gemm_flops = 2 * s * h * v;
  d.head.gemm_calls = 1;
  d.head.params_dense = v * h + 2 * h;
  d.head.mem_bytes_tp = s * v * (db + 8);  // logits, fp32 softmax cross-entropy
  d.head.mem_bytes_rep = 4 * s * h * db;
  d.head.act_tp = s * v * (db + 4);
  d.head.act_rep = s * h * db;
  d.head.act_input = s * h * db;
  return d;
}

static ModelDesc describe_resnet(const Model& m) {
  ModelDesc d;
  const double db = d.dtype_bytes = dtype_bytes(m.dtype);
  d.max_tp_divisor = m.channels;
  const double c = m.channels, wf = m.width_factor;
  double H = m.image_size / 2.0;  // after the 7x7/2 stem
  d.embed.gemm_flops = 2 * H * H * 49 * 3 * c;
  d.embed.gemm_calls = 1;
  d.embed.params_dense = 49 * 3 * c + 2 * c;
  d.embed.mem_bytes_tp = 6 * H * H * c * db;
  d.embed.act_tp = 3 * H * H * c * db;
  H /= 2;  // 3x3/2 max-pool
  d.embed.out_bytes = H * H * c * db;
  auto stages = resnet_stage_sizes(m.depth);
  double cin = c;
  for (size_t i = 0; i < stages.size(); ++i) {
    const double f = c * std::pow(2.0, static_cast<double>(i));
    for (int j = 0; j < stages[i]; ++j) {
      const double stride = (i > 0 && j == 0) ? 2 : 1;
      const double hin = H, hout = H / stride;
      const bool proj = j == 0;
      LayerKind L;
      double e1 = hin * hin * f, e2 = hout * hout * f * wf, e3 = hout * hout * 4 * f;
      L.gemm_flops = 2 * (hin * hin * cin * f + hout * hout * 9 * f * f * wf + hout * hout * f * wf * 4 * f +
                          (proj ? hout * hout * cin * 4 * f : 0));
      L.gemm_calls = proj ? 4 : 3;
      L.params_dense = cin * f + 9 * f * f * wf + f * wf * 4 * f + (proj ? cin * 4 * f : 0) +
                       2 * (f + f * wf + 4 * f + (proj ? 4 * f : 0));
      // BatchNorm (statistics + normalise) and ReLU on every conv output, residual add.
      L.mem_bytes_tp = (5 * (e1 + e2 + e3 + (proj ? e3 : 0)) + 3 * e3) * db;
      L.act_tp = 3 * (e1 + e2 + e3 + (proj ? e3 : 0)) * db;
      L.act_input = hin * hin * cin * db;
      L.tp_bytes = e3 * db;
      L.tp_collectives = 2;
      L.out_bytes = e3 * db;
      d.kinds.push_back(L);
      d.layer_kind.push_back(static_cast<int>(d.kinds.size()) - 1);
      cin = 4 * f;
      H = hout;
    }
  }
  d.head.gemm_flops = 2 * cin * m.classes;
  d.head.params_dense = cin * m.classes + m.classes;
  d.head.mem_bytes_rep = H * H * cin * db + m.classes * 12.0;
  d.head.act_rep = cin * db;
  return d;
}

ModelDesc describe(const Model& m) {
  return m.family == Family::wide_resnet ? describe_resnet(m) : describe_transformer(m);
}

double collective_time(CommOp op, int n, int k, double bytes, const Partition& p, const CostConstants& c,
                       int nic_sharing, int alloc_nodes, int alloc_gpn) {
  if (n <= 1 || bytes <= 0) return 0;
  k = std::max(1, k);
  const double runtime_factor = k > 1 ? c.inter_node_factor : 1.0;
  if (p.comm) {
    // Measured rows already include the contention of concurrent groups.
    if (auto t = p.comm->time_s(op, n, k, bytes, alloc_nodes, alloc_gpn)) return *t * runtime_factor;
  }
  const double bi = p.intra_node_bw_gbs * 1e9 * c.comm_efficiency;
  const double be = p.inter_node_bw_gbs * 1e9 * c.comm_efficiency / std::max(1, nic_sharing);
  constexpr double intra_latency_s = 5e-6;
  const double le = p.inter_node_latency_us * 1e-6;
  const double g = static_cast<double>(n) / k;  // GPUs of the group per node
  auto ring = [&](double factor) {              // factor: 2 for all-reduce, 1 for AG/RS
    double t = factor * (g - 1) / g * bytes / bi + factor * (g - 1) * intra_latency_s;
    if (k > 1) t += factor * (k - 1.0) / k * bytes / be + factor * (k - 1) * le;
    return t;
  };
  switch (op) {
    case CommOp::all_reduce: return ring(2) * runtime_factor;
    case CommOp::all_gather:
    case CommOp::reduce_scatter: return ring(1) * runtime_factor;
    case CommOp::all_to_all: {
      double t = (n - 1.0) / n * bytes / bi + intra_latency_s * (g - 1);
      if (k > 1) t += g * bytes * (k - 1.0) / k / be + le * (k - 1);
      return t * runtime_factor;
    }
    case CommOp::send: return k > 1 ? (bytes / be + le) * runtime_factor : bytes / bi + intra_latency_s;
  }
  return 0;
}

double optimizer_state_bytes(const Model& m, bool remainders) {
  // States in fp32 (in the model's type for fp64 models), plus an fp32 master
  // copy of half-precision parameters: of bf16 ones only the 16 bits bf16 lacks with
  // `remainders`.
  const bool half = m.dtype == Dtype::fp16 || m.dtype == Dtype::bf16;
  const double scale = m.dtype == Dtype::fp64 ? 2.0 : 1.0;
  const double master = !half ? 0.0 : remainders && m.dtype == Dtype::bf16 ? 2.0 : 4.0;
  switch (m.optimizer) {
    case Optimizer::adam: return master + 8 * scale;       // m + v
    case Optimizer::adafactor: return master + 0.5 * scale;  // factored second moment
    case Optimizer::sgd: return master + 4 * scale;        // momentum
  }
  return master + 8 * scale;
}

double optimizer_update_bytes(const Model& m, bool remainders) {
  // Each includes the fp32 master copy read and written (8 bytes); a remainder is read and
  // written with the bf16 parameter read beside it (6).
  const double less = remainders && m.dtype == Dtype::bf16 ? 2 : 0;
  switch (m.optimizer) {
    case Optimizer::adam: return 28 - less;
    case Optimizer::adafactor: return 20 - less;
    case Optimizer::sgd: return 16 - less;
  }
  return 28 - less;
}


std::vector<int> divisors(long long n) {
  std::vector<int> d;
  for (long long i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(static_cast<int>(i));
      if (i * i != n) d.push_back(static_cast<int>(n / i));
    }
  std::sort(d.begin(), d.end());
  return d;
}

int max_stages(const Model& m, Runtime r) {
  int s = m.layers;
  if (r == Runtime::alpa) s = std::min(s, kAlpaMaxStages);
  return std::max(1, s);
}

int nodes_spanned(const Ctx& x, int ranks_stride_tp, int tp) {
  // `ranks_stride_tp` ranks spaced `tp` apart inside a stage block.
  const int gpn = x.cell.gpus_per_node;
  if (x.gps <= gpn) return 1;
  const int per_node = std::max(1, gpn / tp);
  return std::max(1, (ranks_stride_tp + per_node - 1) / per_node);
}

static double gemm_time(const Ctx& x, double flops, double calls) {
  if (flops <= 0) return 0;
  const double gflop_per_call = flops / std::max(1.0, calls) / 1e9;
  const bool half = x.model.dtype == Dtype::fp16 || x.model.dtype == Dtype::bf16;
  const double emax = half ? x.c.gemm_efficiency : x.c.fp32_efficiency;
  const double eff = emax * gflop_per_call / (gflop_per_call + x.c.gemm_half_gflop);
  return flops / (x.gpu.peak_tflops(x.model.dtype) * 1e12 * eff);
}

LayerCost layer_cost(const Ctx& x, const Combo& k, const LayerKind& L, bool is_head) {
  LayerCost r;
  // Every per-sample figure of a layer grows with its tokens, of which context parallelism gives
  // each rank 1/cp (the attention too: its share of the queries against every key, balanced over
  // the causal mask by Megatron-Core's two chunks per rank).
  const double b = static_cast<double>(k.mbs) / k.cp, t = k.tp;
  const double rep_div = k.sp ? t : 1.0;
  const double bw = x.gpu.memory_bw_gbs * 1e9 * x.c.memory_efficiency;
  const double g = gemm_time(x, L.gemm_flops * b / t, L.gemm_calls);
  // A fused attention kernel (FlashAttention, cuDNN) runs the core as one call and never writes
  // the s x s scores; its backward recomputes them: 2.5x the forward's FLOPs instead of 2x. The
  // transformer families are decoder-only (causal): it skips the masked half of the scores.
  const bool fused = x.c.stack.fused_attention && L.attn_flops > 0;
  const double a = fused ? gemm_time(x, 0.5 * L.attn_flops * b / t, 1) / x.c.fused_attention_efficiency
                         : gemm_time(x, L.attn_flops * b / t, 2) / x.c.attention_efficiency;
  const double mem = (L.mem_bytes_tp / t + L.mem_bytes_rep / rep_div) * b / bw;
  const double mem_attn = fused ? 0 : L.mem_bytes_attn / t * b / bw;
  const double fwd = (g + a + mem + mem_attn) * x.c.runtime_overhead;
  double comp = 3 * fwd + (fused ? 0.5 * a * x.c.runtime_overhead : 0);
  if (!is_head) {
    if (k.rc == Recompute::full) comp += fwd;
    if (k.rc == Recompute::selective && !fused) comp += (a + mem_attn) * x.c.runtime_overhead;
  }
  double tp_time = 0;
  if (k.tp > 1 && L.tp_collectives > 0) {
    const double ar = detail::collective_time(CommOp::all_reduce, k.tp, 1, L.tp_bytes * b, x.part, x.c, 1, x.cell.nodes,
                                                 x.cell.gpus_per_node);
    int n = 2 * L.tp_collectives;
    if (k.rc == Recompute::full && !is_head) n += L.tp_collectives;
    tp_time = n * ar;
    // With sequence parallelism the all-gathers and reduce-scatters are split into chunks that
    // overlap the layer's GEMMs (Transformer Engine's userbuffers): what the GEMMs cannot hide,
    // the chunk that cannot be pipelined, and the SMs the reduce-scatters take from the GEMMs
    // beside them (the output projection's and the second MLP GEMM's forward, 5/36 of a
    // standard layer's GEMM work over forward and backward) while those run.
    if (x.c.stack.tp_comm_overlap && k.sp) {
      const double gemms = g * x.c.runtime_overhead * (k.rc == Recompute::full && !is_head ? 4 : 3);
      const double hidden = std::min(tp_time, gemms);
      tp_time -= hidden;
      if (x.c.tp_comm_splits > 0) tp_time += hidden / x.c.tp_comm_splits;
      if (x.c.tp_comm_sms > 0 && x.c.sm_count > x.c.tp_comm_sms)
        tp_time += gemms * (5.0 / 36) * x.c.tp_comm_sms / (x.c.sm_count - x.c.tp_comm_sms);
    }
  }
  double moe_time = 0;
  const int ep = x.d.experts && k.ep ? std::gcd(x.d.experts, k.dp) : 1;
  if (L.a2a_count > 0 && ep > 1) {
    const int kn = nodes_spanned(x, ep, k.tp);
    const double a2a =
        detail::collective_time(CommOp::all_to_all, ep, kn, L.a2a_bytes * b / t, x.part, x.c, k.tp, x.cell.nodes,
                                x.cell.gpus_per_node);
    int n = 2 * L.a2a_count;
    if (k.rc == Recompute::full) n += L.a2a_count;
    moe_time = n * a2a;
  }
  // Context parallelism passes each rank's keys and values around its ring of cp ranks in cp - 1
  // steps, and the backward their gradients beside them; each step's transfer hides behind the
  // attention of the chunk before it (Megatron-Core's p2p, attention.py's ring). The ring's ranks
  // are tp apart (rank order tp-cp-dp-pp); on a ring across nodes the tp rings share the NIC.
  double cp_time = 0;
  if (k.cp > 1 && L.kv_bytes > 0) {
    const int kn = nodes_spanned(x, k.cp, k.tp);
    const double step = collective_time(CommOp::send, 2, kn > 1 ? 2 : 1, L.kv_bytes * b / t, x.part, x.c,
                                        kn > 1 ? k.tp : 1, x.cell.nodes, x.cell.gpus_per_node);
    const double a_fwd = a * x.c.runtime_overhead / k.cp, a_bwd = (fused ? 2.5 : 2.0) * a_fwd;
    const double fwd_exposed = std::max(0.0, step - a_fwd), bwd_exposed = std::max(0.0, 2 * step - a_bwd);
    int passes = 1;
    if (k.rc == Recompute::full && !is_head) ++passes;
    cp_time = (k.cp - 1) * (passes * fwd_exposed + bwd_exposed);
  }
  r.compute = comp;
  r.tp = tp_time;
  r.moe = moe_time;
  r.cp = cp_time;
  r.time = comp + tp_time + moe_time + cp_time;

  const double w = x.d.dtype_bytes;
  const double opt = detail::optimizer_state_bytes(x.model, x.c.stack.master_param_remainders);
  const double pd = L.params_dense / t, pe = L.params_expert / (t * ep);
  // What each DP rank keeps of a parameter: its weight and gradient (w each) and optimizer
  // states, the shares ZeRO shards over the ranks holding the same weights (dp x cp; experts'
  // over the ranks holding them).
  const double shard_d = k.replicas(), shard_e = std::max(1, k.replicas() / ep);
  auto kept = [&](double shard) {
    return (k.zero >= 3 ? w / shard : w) + (k.zero >= 2 ? w / shard : w) + (k.zero >= 1 ? opt / shard : opt);
  };
  r.mem_static = pd * kept(shard_d) + pe * kept(shard_e);
  r.params_gpu = pd + pe;
  r.grad_bytes_dense = pd * w;
  r.grad_bytes_expert = pe * w;
  // A fused kernel keeps only its output (in act_tp) and the softmax statistics (fp32 per head
  // and token) of the scores.
  const double act_attn = fused ? L.act_attn_fused : L.act_attn;
  const double full_act = (L.act_tp / t + L.act_rep / rep_div + act_attn / t) * b;
  // Sharded, the layer's gradient is whole until its reduce-scatter, and its parameters whole
  // while it runs, with the next layer's gathered beside them (prefetch).
  const double whole = (pd + pe) * w * ((k.zero >= 2 ? 1 : 0) + (k.zero >= 3 ? 2 : 0));
  if (is_head) {
    r.mem_work = full_act;
  } else if (k.rc == Recompute::none) {
    r.mem_act = full_act;
  } else if (k.rc == Recompute::selective) {
    r.mem_act = (L.act_tp / t + L.act_rep / rep_div) * b;
  } else {
    r.mem_act = L.act_input / rep_div * b;
    r.mem_work = full_act;
    if (x.req.runtime == Runtime::alpa && x.L > kAlpaMaxStages) {
      // Alpa checkpoints the boundaries of its 16 pipeline layers, not every layer,
      // and recomputes one pipeline layer (L/16 layers) at a time.
      const double units = kAlpaMaxStages;
      r.mem_act *= units / x.L;
      r.mem_work *= x.L / units;
    }
  }
  r.mem_work += whole;
  return r;
}

// Micro-batches whose activations a stage holds at once.
double in_flight(const Combo& k, int S, int s) {
  switch (k.sched.kind) {
    case Schedule::Kind::gpipe: return k.m;
    case Schedule::Kind::one_f_one_b: return std::min(k.m, S - s);
    case Schedule::Kind::interleaved: {
      const double v = k.sched.virtual_stages;
      return std::min<double>(k.m, (S - s) * (1.0 + (S - 1.0) / (S * v)));
    }
  }
  return k.m;
}

Estimate infeasible(const Cell& cell, std::string why) {
  Estimate e;
  e.cell = cell;
  e.feasible = false;
  e.why = std::move(why);
  return e;
}

}  // namespace detail

double Model::parameters() const {
  detail::ModelDesc d = detail::describe(*this);
  double p = d.embed.params_dense + d.head.params_dense;
  for (int k : d.layer_kind) p += d.kinds[k].params_dense + d.kinds[k].params_expert;
  return p;
}

double iteration_flops(const Model& m, int global_batch, Recompute recompute) {
  detail::ModelDesc d = detail::describe(m);
  double layers_fwd = 0, attn_fwd = 0;
  for (int k : d.layer_kind) {
    layers_fwd += d.kinds[k].gemm_flops + d.kinds[k].attn_flops;
    attn_fwd += d.kinds[k].attn_flops;
  }
  double per_sample = 3 * (layers_fwd + d.embed.gemm_flops + d.head.gemm_flops);
  if (recompute == Recompute::full) per_sample += layers_fwd;
  if (recompute == Recompute::selective) per_sample += attn_fwd;
  return per_sample * global_batch;
}

double zero_model_state_bytes(double parameters, int dp, int zero_stage) {
  const double dpd = std::max(1, dp);
  double p = 2 * parameters, g = 2 * parameters, o = 12 * parameters;
  if (zero_stage >= 1) o /= dpd;
  if (zero_stage >= 2) g /= dpd;
  if (zero_stage >= 3) p /= dpd;
  return p + g + o;
}

bool dual_issue_fp32(const GpuType& g) { return g.tflops_fp16 > 0 && g.tflops_fp32 >= 0.2 * g.tflops_fp16; }

// The fitted constants live in the GPU catalogue (etc/crius/gpus.toml: per GPU type
// gemm_efficiency, fp32_efficiency, memory_efficiency; per runtime profile
// inter_node_factor, runtime_overhead). A type without one gets the datasheet rule of
// crius.toml(5): the mean of the calibrated types nearest to it (for fp32 only those of its
// fp32 class, dual_issue_fp32): of its memory technology where one of them has a value, and
// of those the nearest generation. With no calibrated type, the generic default of CostConstants.
ConstantSources constant_sources(const GpuCatalog& catalog, const GpuType& gpu) {
  ConstantSources out;
  auto rule = [&](double own, double fallback, auto value_of, auto same_class, ConstantSource& src) {
    if (own > 0) {
      src = {own, true, {}};
      return;
    }
    std::vector<const GpuType*> pool;
    for (const GpuType& t : catalog.types())
      if (t.id != gpu.id && value_of(t) > 0 && same_class(t)) pool.push_back(&t);
    const std::string tech = gpu.memory_technology();
    if (gpu.generation() > 0 && !tech.empty()) {
      auto distance = [&](const GpuType* t) {
        return t->generation() > 0 ? std::abs(t->generation() - gpu.generation()) : std::numeric_limits<int>::max();
      };
      if (std::any_of(pool.begin(), pool.end(), [&](const GpuType* t) { return t->memory_technology() == tech; }))
        std::erase_if(pool, [&](const GpuType* t) { return t->memory_technology() != tech; });
      int nearest = std::numeric_limits<int>::max();
      for (const GpuType* t : pool) nearest = std::min(nearest, distance(t));
      std::erase_if(pool, [&](const GpuType* t) { return distance(t) != nearest; });
    }
    double sum = 0;
    for (const GpuType* t : pool) {
      sum += value_of(*t);
      src.from.push_back(t->id);
    }
    src.value = src.from.empty() ? fallback : sum / static_cast<double>(src.from.size());
  };
  const CostConstants generic;
  auto any = [](const GpuType&) { return true; };
  rule(gpu.gemm_efficiency, generic.gemm_efficiency, [](const GpuType& t) { return t.gemm_efficiency; }, any,
       out.gemm);
  rule(gpu.fp32_efficiency, generic.fp32_efficiency, [](const GpuType& t) { return t.fp32_efficiency; },
       [&](const GpuType& t) { return dual_issue_fp32(t) == dual_issue_fp32(gpu); }, out.fp32);
  rule(gpu.memory_efficiency, generic.memory_efficiency, [](const GpuType& t) { return t.memory_efficiency; }, any,
       out.memory);
  return out;
}

std::string describe(const ConstantSource& s) {
  std::string v = util::fmt(s.value, 3);
  if (s.calibrated) return v + " (calibrated)";
  if (s.from.empty()) return v + " (uncalibrated: the generic default)";
  return v + " (uncalibrated: datasheet rule, the mean of " + util::join(s.from, ", ") + ")";
}

CostConstants cost_constants(const GpuCatalog& catalog, const GpuType& gpu, Runtime runtime) {
  CostConstants c;
  const RuntimeProfile rp = catalog.runtime(runtime);
  c.inter_node_factor = rp.inter_node_factor;
  c.runtime_overhead = rp.runtime_overhead;
  c.tp_comm_splits = rp.tp_comm_splits;
  c.tp_comm_sms = rp.tp_comm_sms;
  c.sm_count = gpu.sm_count;
  c.stack = rp.stack;
  const ConstantSources s = constant_sources(catalog, gpu);
  c.gemm_efficiency = s.gemm.value;
  c.fp32_efficiency = s.fp32.value;
  c.memory_efficiency = s.memory.value;
  if (gpu.attention_efficiency > 0) c.attention_efficiency = gpu.attention_efficiency;
  if (gpu.fused_attention_efficiency > 0) c.fused_attention_efficiency = gpu.fused_attention_efficiency;
  if (gpu.gemm_half_gflop >= 0) c.gemm_half_gflop = gpu.gemm_half_gflop;
  return c;
}

}  // namespace crius::estimator
