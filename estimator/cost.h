// Internal: the model's per-layer description and the collective-time model.
#pragma once

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
  double act_input = 0;      // the layer's input (what full recompute keeps)
  double tp_bytes = 0;       // bytes of each TP all-reduce
  int tp_collectives = 0;    // TP all-reduces per forward
  double a2a_bytes = 0;      // MoE all-to-all bytes per forward, each of a2a_count
  int a2a_count = 0;
  double out_bytes = 0;      // output activation (pipeline p2p message)
};

struct ModelDesc {
  std::vector<LayerKind> kinds;
  std::vector<int> layer_kind;  // kind index of each layer
  LayerKind embed;              // on the first stage
  LayerKind head;               // on the last stage (output layer + loss)
  int experts = 0;
  int heads = 0;                // TP must divide this (0: any)
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

// Optimizer bytes of state per parameter and of traffic per parameter update.
double optimizer_state_bytes(const Model& m);
double optimizer_update_bytes(const Model& m);

}  // namespace crius::estimator::detail
