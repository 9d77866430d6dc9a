// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to the estimator: the model's per-layer description, the collective-time
// model, and the cost of one layer under one point of the plan space (cost.cpp); the
// split search (search.cpp) and the Cell enumeration (cells.cpp) build on them.
#pragma once

#include <limits>
#include <vector>

#include "estimator/estimator.h"

namespace crius::estimator::detail {

// One layer kind, per sample (one sequence or one image), forward pass,
// without tensor parallelism.  Bytes are in the model's dtype.
struct LayerKind {
  double gemm_flops = 0;     // matrix/conv FLOPs except the attention core
  double attn_flops = 0;     // attention core (QK^T, AV): recomputed by selective recompute
  double gemm_calls = 1;     // number of large GEMMs (sets the GEMM size for efficiency)
  double mem_bytes_tp = 0;   // memory-bound traffic that TP shards
  double mem_bytes_rep = 0;  // memory-bound traffic replicated across TP unless sequence parallel
  double mem_bytes_attn = 0; // softmax/dropout traffic on the attention scores (TP-sharded)
  double params_dense = 0;   // parameters sharded by TP only
  double params_expert = 0;  // expert parameters, sharded by TP and expert parallelism
  double act_tp = 0;         // stored activations sharded by TP
  double act_rep = 0;        // stored activations replicated across TP unless sequence parallel
  double act_attn = 0;       // attention scores etc., dropped by selective recompute
  double act_attn_fused = 0; // what a fused attention kernel keeps instead (softmax statistics)
  double act_input = 0;      // the layer's input (what full recompute keeps)
  double tp_bytes = 0;       // bytes of each TP all-reduce
  int tp_collectives = 0;    // TP all-reduces per forward
  double a2a_bytes = 0;      // MoE all-to-all bytes per forward, each of a2a_count
  int a2a_count = 0;
  double out_bytes = 0;      // output activation (pipeline p2p message)
  double kv_bytes = 0;       // keys and values (what context parallelism passes around its ring)
};

struct ModelDesc {
  std::vector<LayerKind> kinds;
  std::vector<int> layer_kind;  // kind index of each layer
  LayerKind embed;              // on the first stage
  LayerKind head;               // on the last stage (output layer + loss)
  int experts = 0;
  int heads = 0;                // TP must divide this: the query groups (0: any)
  double dtype_bytes = 2;
  int max_tp_divisor = 0;       // for wide_resnet: channels to shard
};

ModelDesc describe(const Model& m);

// Seconds for a collective over `n` GPUs spanning `k` nodes (n/k per node),
// `bytes` being the full buffer; uses the partition's table when it has one.
// `nic_sharing` groups on each node run the same collective at once and share its NIC.
// `alloc_nodes` x `alloc_gpn` is the job's allocation (picks calibration rows).
double collective_time(CommOp op, int n, int k, double bytes, const Partition& p, const CostConstants& c,
                       int nic_sharing = 1, int alloc_nodes = 0, int alloc_gpn = 0);

// Optimizer bytes of state and of update traffic per parameter; `remainders`: a bf16 model's
// fp32 master copy kept as its 16 low bits.
double optimizer_state_bytes(const Model& m, bool remainders);
double optimizer_update_bytes(const Model& m, bool remainders);


constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kAlpaMicroBatches = 16;
constexpr int kAlpaMaxStages = 16;  // Alpa clusters the model into 16 pipeline layers

// Divisors of n, ascending.
std::vector<int> divisors(long long n);
// Most pipeline stages the model (and runtime profile) allows.
int max_stages(const Model& m, Runtime r);

// One point of the plan space, except the layer split.
struct Combo {
  int tp = 1, dp = 1, mbs = 1, m = 1;
  Recompute rc = Recompute::none;
  bool sp = false;
  Schedule sched;
  int zero = 0;
  bool ep = true;  // Plan::expert_parallel
  int cp = 1;      // StagePlan::cp: ranks sharing each sequence
  int replicas() const { return dp * cp; }  // ranks holding the same weights
};

// Per-layer cost of one combo (per micro-batch) and memory (bytes per GPU).
struct LayerCost {
  double time = 0;  // fwd + bwd (+ recompute), incl. TP and MoE communication
  double compute = 0, tp = 0, moe = 0, cp = 0;
  double mem_static = 0;  // params, grads, optimizer states
  double mem_act = 0;     // stored activations per in-flight micro-batch
  double mem_work = 0;    // working activations of one micro-batch (full recompute)
  double grad_bytes_dense = 0, grad_bytes_expert = 0;  // per GPU
  double params_gpu = 0;                                // per GPU (for the optimizer step)
};

// Everything the cost of one Cell depends on.
struct Ctx {
  const Request& req;
  const Model& model;
  const Cell& cell;
  const Partition& part;
  const GpuType& gpu;
  CostConstants c;
  ModelDesc d;
  int L = 0, S = 1, gps = 1;
  double cap = 0;  // usable bytes per GPU for model states and activations
  bool brute = false;
  WorkBudget* budget = nullptr;  // layer visits of this request (may be null)
  void spend(std::int64_t layers) const {
    if (budget) budget->used += layers;
  }
  bool out_of_work() const { return budget && budget->exhausted(); }
};

// Nodes spanned by `ranks_stride_tp` ranks spaced `tp` apart inside a stage block.
int nodes_spanned(const Ctx& x, int ranks_stride_tp, int tp);
// Time and memory of one layer of kind L under combo k (is_head: the output layer).
LayerCost layer_cost(const Ctx& x, const Combo& k, const LayerKind& L, bool is_head);
// An infeasible estimate of `cell`, saying why.
Estimate infeasible(const Cell& cell, std::string why);

// Whether the plan search tries tensor-parallel degree `t` with context-parallel size `cp` for `gps`
// GPUs per stage in a Cell of `gpn` GPUs per node of `part`: t x cp divides gps, t stays inside a
// node's NVLink domain and divides the heads, and both match the pinned --tp/--cp/--dp.
bool tp_allowed(const Request& req, const ModelDesc& d, const Partition& part, int gpn, int gps, int t, int cp = 1);
// The micro-batch sizes that split the global batch over `dp` data-parallel ranks (the runtime
// profile's micro-batch count and the pins included), ascending; none if dp does not divide it.
std::vector<int> micro_batch_sizes(const Request& req, int dp);

// Micro-batches whose activations stage s of S holds at once.
double in_flight(const Combo& k, int S, int s);

}  // namespace crius::estimator::detail
