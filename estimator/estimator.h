// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// libcrius core: model and GPU catalogues, cluster description, Cells, the
// in-Cell plan search and the cost and memory model.  See crius-estimate(1)
// and crius.toml(5).
//
// Safe to call from slurmctld: nothing here throws out of the API (errors are
// Result values), there is no global mutable state, and estimate_cell(),
// rank_cells() and best_for_allocation() do no I/O.  Loading catalogues and
// cluster files reads files and must happen outside hot paths.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "estimator/plan.h"
#include "estimator/result.h"

namespace crius::estimator {

enum class Dtype { fp16, bf16, fp32, fp64 };
enum class Family { transformer, moe, wide_resnet };
enum class Optimizer { adam, adafactor, sgd };

std::string_view to_string(Dtype d);
std::string_view to_string(Family f);
std::string_view to_string(Optimizer o);

// ---- GPU catalogue ----------------------------------------------------------

struct GpuType {
  std::string id;            // catalogue id, e.g. "a100"
  std::string name;          // display name
  double memory_gib = 0;
  double memory_bw_gbs = 0;  // HBM GB/s
  double tflops_fp16 = 0, tflops_bf16 = 0, tflops_tf32 = 0, tflops_fp32 = 0, tflops_fp64 = 0;  // dense peak
  std::vector<std::string> match;  // case-insensitive substrings of raw device names
  // The generation and memory technology the datasheet rule matches on (0 / empty: not given):
  // CUDA compute capability ("8.0" for A100, "8.9" for Ada), and the memory ("HBM2e", "GDDR6").
  double compute_capability = 0;
  std::string memory_type;
  int sm_count = 0;  // streaming multiprocessors (0: not given)
  int generation() const { return static_cast<int>(compute_capability); }  // 8 for 8.0 and 8.9
  std::string memory_technology() const;  // "HBM" or "GDDR"; empty when not given
  // Fitted efficiency constants (crius.toml(5), tests/bench/estimator-accuracy.sh fits
  // them); 0 = the generic default of CostConstants.
  double gemm_efficiency = 0;       // fp16/bf16 (tensor core) GEMMs
  double fp32_efficiency = 0;       // fp32 GEMMs and convolutions
  double memory_efficiency = 0;
  double attention_efficiency = 0;  // attention cores' rate as a fraction of GEMMs' (0 = 1)
  double fused_attention_efficiency = 0;  // the same for a fused attention kernel (0 = 1)
  double gemm_half_gflop = -1;      // GEMM size reaching half the rate (-1 = the generic 2.0)
  // Peak TFLOP/s used for math in `d` (bf16 falls back to fp32 where the GPU lacks
  // it; fp32 is plain fp32: the measured fp32 runs did not use TF32; fp64 is 0
  // where the catalogue gives no fp64 rate).
  double peak_tflops(Dtype d) const;
};

// What a training stack fuses, overlaps and stores (crius-estimate(1), RUNTIME PROFILES): each
// a switch of [runtime.<name>] in the GPU catalogue; megatron-core turns every one but
// master_param_remainders on, the other profiles none.
struct StackSwitches {
  bool fused_attention = false;       // attention core as one fused kernel (FlashAttention, cuDNN)
  bool overlap_grad_reduce = false;   // DP gradient reduction during the last micro-batch's backward
  bool overlap_param_gather = false;  // ZeRO-1 parameter all-gather during the first forward
  bool tp_comm_overlap = false;       // TP all-gather/reduce-scatter pipelined with the GEMMs (with SP)
  bool overlap_p2p_comm = false;      // pipeline sends during compute (interleaved schedule)
  // The fp32 master copy of bf16 parameters kept as its 16 low bits (Apex DistributedFusedAdam
  // in NeMo 1.x; Megatron-Core's precision-aware optimizer): off by default everywhere.
  bool master_param_remainders = false;
  static StackSwitches of(Runtime r);
  // Each switch by its catalogue key, in the order --explain lists them.
  static constexpr std::pair<const char*, bool StackSwitches::*> kSwitches[] = {
      {"fused_attention", &StackSwitches::fused_attention},
      {"overlap_grad_reduce", &StackSwitches::overlap_grad_reduce},
      {"overlap_param_gather", &StackSwitches::overlap_param_gather},
      {"tp_comm_overlap", &StackSwitches::tp_comm_overlap},
      {"overlap_p2p_comm", &StackSwitches::overlap_p2p_comm},
      {"master_param_remainders", &StackSwitches::master_param_remainders}};
};

// Fitted constants of a runtime profile ([runtime.<name>] in the GPU catalogue).
struct RuntimeProfile {
  Runtime runtime = Runtime::megatron;
  double inter_node_factor = 1.0;  // multiplier on collectives and sends that cross nodes
  double runtime_overhead = 1.0;   // multiplier on compute
  // tp_comm_overlap as Transformer Engine runs it: the collectives in `tp_comm_splits` chunks
  // pipelined with their GEMM (one chunk of the two is not hidden), and the reduce-scatters on
  // `tp_comm_sms` SMs that their GEMM does without (0, 0: everything hidden, at no cost).
  int tp_comm_splits = 0;
  int tp_comm_sms = 0;
  StackSwitches stack;
};

class GpuCatalog {
 public:
  static Result<GpuCatalog> load(const std::string& path);
  static Result<GpuCatalog> parse(std::string_view toml_text, std::string source);
  const GpuType* find(std::string_view id) const;
  // Raw hwloc/nvidia-smi model name -> catalogue id (case-insensitive
  // substring match against every `match` pattern; the longest pattern wins).
  std::optional<std::string> match_name(std::string_view raw_model_name) const;
  // "unknown GPU type 'x' in SOURCE (close matches: a, b)" style helper list.
  std::vector<std::string> close_matches(std::string_view id) const;
  const std::vector<GpuType>& types() const { return m_types; }
  // The profile's constants; defaults (all 1) when the catalogue has no [runtime.<name>].
  RuntimeProfile runtime(Runtime r) const;
  const std::string& source() const { return m_source; }
  // Adds `over`'s types, replacing those of the same id (a calibration over a catalogue), and
  // its runtime profiles likewise.
  void merge(const GpuCatalog& over);

 private:
  std::vector<GpuType> m_types;
  std::vector<RuntimeProfile> m_runtimes;
  std::string m_source;
};

// ---- models -----------------------------------------------------------------

struct Model {
  std::string id;  // catalogue id or file path it came from
  Family family = Family::transformer;
  Dtype dtype = Dtype::fp16;
  Optimizer optimizer = Optimizer::adam;
  // transformer and moe
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0 /* 0 = heads */, ffn_hidden = 0;
  int seq_len = 0, vocab = 0;
  bool swiglu = false;
  // Dropout probability of the hidden states and attention (Megatron's --hidden-dropout and
  // --attention-dropout); 0 stores no dropout masks and writes none.
  double dropout = 0.1;
  // Rotary position embedding (RoPE: Llama, Mixtral, Nemotron) instead of a learned table of
  // seq_len x hidden parameters.
  bool rope = false;
  // moe: an expert layer every `expert_every` layers (the first of each group)
  int experts = 0, expert_every = 0, top_k = 2;
  double capacity_factor = 1.0;
  // Tokens per GShard dispatch group (GShard, Alpa: one-hot dispatch and combine einsums, each
  // 2 k cf S h FLOPs per token); 0: tokens are gathered to their experts (Megatron), no FLOPs.
  int expert_group_size = 0;
  // wide_resnet: `layers` is set to the number of bottleneck blocks
  int depth = 0, width_factor = 0, channels = 0, image_size = 0, classes = 0;

  double parameters() const;  // total parameter count
};

// The most transformer layers a model may have (the largest published models have 128).
inline constexpr int kMaxLayers = 1024;

// Parse one model (keys at top level).  `source` names the file in errors.
Result<Model> parse_model(std::string_view toml_text, std::string source);
Result<Model> load_model_file(const std::string& path);

// A model as one line of bounded scalars, "family=transformer,dtype=fp16,...,layers=24,...":
// what a model file becomes on the submit host before it crosses to slurmctld, which
// reads it without a recursive parser (the same checks as a model file).
inline constexpr std::size_t kMaxModelSpecBytes = 512;
std::string to_spec(const Model& m);
Result<Model> parse_model_spec(std::string_view spec, std::string source);

class ModelCatalog {
 public:
  static Result<ModelCatalog> load(const std::string& path);
  static Result<ModelCatalog> parse(std::string_view toml_text, std::string source);
  const Model* find(std::string_view id) const;
  // A catalogue id, or a path to a model file (contains '/' or ends in
  // ".toml").  Unknown names give an error listing close matches.
  Result<Model> resolve(std::string_view name_or_path) const;
  std::vector<std::string> close_matches(std::string_view id) const;
  const std::vector<Model>& models() const { return m_models; }
  const std::string& source() const { return m_source; }

 private:
  std::vector<Model> m_models;
  std::string m_source;
};

// ---- collective calibration tables ----------------------------------------

enum class CommOp { all_reduce, all_gather, reduce_scatter, all_to_all, send };
std::string_view to_string(CommOp op);

// Measured collective timings (see etc/crius/calibration/README.md): for
// each (op, group size, nodes the group spans) a curve of (bytes, seconds).
class CommTable {
 public:
  static Result<CommTable> load(const std::string& path);
  static Result<CommTable> parse(std::string_view csv_text, std::string source);
  // Interpolated (log-log) time for `bytes` on a group of `group_size` GPUs
  // spanning `nodes` nodes; nullopt when the table has no curve for that shape.
  // Rows measured on the allocation alloc_nodes x alloc_gpus_per_node are
  // preferred, else those of the largest allocation measured (rows include the
  // contention of the allocation's concurrent groups).
  std::optional<double> time_s(CommOp op, int group_size, int nodes, double bytes, int alloc_nodes = 0,
                               int alloc_gpus_per_node = 0) const;
  bool empty() const { return m_curves.empty(); }
  // The allocations (nodes, GPUs per node) the rows say they were measured on.
  std::vector<std::pair<int, int>> allocations() const;

 private:
  struct Curve {
    CommOp op;
    int group_size, nodes;
    int alloc_nodes, alloc_gpn;
    std::vector<std::pair<double, double>> points;  // sorted by bytes
  };
  std::vector<Curve> m_curves;
};

// ---- cluster ----------------------------------------------------------------

struct Partition {
  std::string name;  // Slurm partition name
  std::string gpu;   // catalogue id
  int nodes = 0, gpus_per_node = 0;
  double intra_node_bw_gbs = 0;      // per GPU per direction
  double inter_node_bw_gbs = 0;      // per node per direction
  double inter_node_latency_us = 0;
  int nvlink_domain = 0;             // GPUs per NVLink domain; 0 = gpus_per_node
  int numa_nodes = 0;                // 0 = unknown
  std::string calibration;           // path as resolved, "" = none
  std::shared_ptr<const CommTable> comm;  // loaded calibration, may be null
};

struct Cluster {
  std::string path;  // the cluster file
  GpuCatalog gpus;
  ModelCatalog models;
  std::vector<Partition> partitions;
  // The framework of a job that names none (crius.toml(5), framework; crius-train when absent).
  Framework framework;
  // [launch] progress_interval_s: how often crius-launch writes a job's progress into its
  // Comment, one slurmctld RPC each (crius.toml(5)).
  static constexpr double kDefaultProgressIntervalS = 1200;
  double progress_interval_s = kDefaultProgressIntervalS;
  toml::table table;  // the whole parsed file ([job_submit], [spank], [criusd], [scheduler] live here)
  const Partition* find_partition(std::string_view name) const;
};

// `fallback_dir` is searched for gpus.toml / models.toml after the cluster
// file's own directory; "" means the built-in <sysconfdir>/crius.
Result<Cluster> load_cluster(const std::string& path, const std::string& fallback_dir = "");
// The keys a cluster file may hold at top level ([job_submit] and [criusd] belong to their
// components, [discover] to crius-discover, [launch] to crius-launch) and in each [[partition]]
// (crius.toml(5)).
const std::vector<std::string>& cluster_file_keys();
const std::vector<std::string>& partition_keys();
const std::vector<std::string>& launch_keys();  // [launch]
// The directory compiled in as <sysconfdir>/crius.
std::string default_config_dir();
// Where the plugins, criusd and the tools find crius.toml: $CRIUS_CONF, else crius.toml
// beside slurm.conf ($SLURM_CONF's directory, else `slurm_sysconfdir`).
std::string find_crius_conf(const std::string& slurm_sysconfdir);
// The cluster a tool estimates for without --cluster: the site's (find_crius_conf), where
// $CRIUS_CONF is set or that file exists, else the shipped example <sysconfdir>/crius/crius.toml.
std::string default_cluster_file(const std::string& slurm_sysconfdir);

// ---- requests and estimates (Cell and Plan: estimator/plan.h) ---------------

// A pin fixes one plan dimension; an unset pin lets the search choose.
struct Pins {
  std::optional<int> tp, dp, micro_batch_size, micro_batches;
  std::optional<int> cp;  // context parallelism (StagePlan::cp)
  std::optional<Schedule> schedule;
  std::optional<Recompute> recompute;
  std::optional<bool> sequence_parallel;
  std::optional<int> zero;  // ZeRO stage 0-3 (Plan::zero)
  std::optional<bool> expert_parallel;  // MoE only (Plan::expert_parallel)
};

struct Request {
  Model model;
  int global_batch = 0;  // samples (sequences or images) per optimizer step
  Runtime runtime = Runtime::megatron;
  Framework framework;  // what runs the plan: only plans it can express are searched (framework.h)
  Pins pins;
};

// Checks a request before any estimate: positive batch, pins in range and
// consistent with the runtime profile and the batch.  Error text names the
// option (e.g. "--micro-batches 7 does not divide --global-batch 512").
Result<void> validate_request(const Request& req);

struct CellFilter {
  std::optional<std::string> partition, gpu;
  std::optional<int> nodes, gpus_per_node, stages;
  std::optional<int> max_gpus;  // Cells of at most this many GPUs
};

// Every Cell the cluster can give the model: GPU counts as whole nodes or
// divisors of a node, stages from 1 to what the layers (and GPUs) allow and
// dividing the GPU count.  With both filter.nodes and filter.gpus_per_node set,
// that one allocation shape (e.g. 2 nodes x 2 of 4 GPUs) if a partition holds it.
std::vector<Cell> enumerate_cells(const Model& model, Runtime runtime, const Cluster& cluster,
                                  const CellFilter& filter);
struct WorkBudget;
// The Cells of enumerate_cells() in which the plan search has something to try: some tensor-
// parallel degree it allows (tp_allowed) leaves a data-parallel degree that splits the global
// batch (micro_batch_sizes). Found by walking stages x TP x DP, so the work does not grow with
// the partitions' node counts. With a budget, each (stages, TP, DP) looked at costs a layer
// visit and each Cell listed 64, and the walk ends when it runs out (job_submit's bound).
std::vector<Cell> usable_cells(const Request& req, const Cluster& cluster, const CellFilter& filter,
                               WorkBudget* budget = nullptr);

// Seconds per iteration on the critical path; they add up to iter_time_s.
struct Breakdown {
  double compute = 0, tp_comm = 0, dp_comm = 0, pp_comm = 0, moe_comm = 0, cp_comm = 0, bubble = 0,
         optimizer = 0;
};

// GiB per GPU on the most loaded stage.
struct MemoryBreakdown {
  double params = 0, grads = 0, optimizer = 0, activations = 0, workspace = 0;
  double total() const { return params + grads + optimizer + activations + workspace; }
};

struct Estimate {
  Cell cell;
  bool feasible = false;
  std::string why;  // when infeasible
  double iter_time_s = 0, samples_per_s = 0, memory_gib = 0;
  double gpu_memory_gib = 0;  // capacity per GPU
  Plan plan;
  Breakdown breakdown;
  MemoryBreakdown memory;
  double flops_per_iter = 0;    // model FLOPs incl. recompute
  std::int64_t plans_evaluated = 0;
  bool partial = false;         // the work budget ran out: the best plan found before that
};

// Tunable constants of the cost model, per GPU type and runtime profile: the
// generic defaults below, overridden by the GPU catalogue's fitted values.
struct CostConstants {
  double gemm_efficiency = 0.6;     // large fp16/bf16 GEMM fraction of dense peak
  double fp32_efficiency = 0.6;     // the same for fp32 math (GA10x's dual-issue peak is rarely reached)
  double gemm_half_gflop = 2.0;     // GEMM size (GFLOP per call) reaching half of it
  double memory_efficiency = 0.7;   // fraction of HBM bandwidth for memory-bound ops
  double attention_efficiency = 1.0;  // attention cores (QK^T, softmax, AV) at this fraction of the GEMM rate
  double fused_attention_efficiency = 1.0;  // a fused attention kernel's rate, as a fraction of the GEMM rate
  double comm_efficiency = 0.7;     // fraction of link bandwidth collectives reach
  double runtime_overhead = 1.0;    // multiplier on compute of the runtime profile
  double inter_node_factor = 1.0;   // multiplier on collectives that cross nodes (runtime profile)
  int tp_comm_splits = 0, tp_comm_sms = 0;  // the runtime profile's (RuntimeProfile)
  int sm_count = 0;                 // the GPU type's
  double workspace_gib = 1.5;       // CUDA context, library workspaces, fragmentation
  StackSwitches stack;              // the runtime profile's
  double memory_usable = 0.95;      // fraction of GPU memory a plan may use
};
CostConstants cost_constants(const GpuCatalog& catalog, const GpuType& gpu, Runtime runtime);
// Where a GPU type's efficiency constants come from: its own catalogue entry (calibrated),
// or, uncalibrated, the datasheet rule of crius.toml(5): the mean of the values (`from`) of the
// calibrated types nearest to it, for fp32 among the types of the same fp32 class: of the same
// memory technology where one has a value, then of the nearest generation (compute capability's
// major); a type that names neither takes all calibrated types. With none, the generic
// default of CostConstants.
struct ConstantSource {
  double value = 0;
  bool calibrated = false;
  std::vector<std::string> from;
};
struct ConstantSources {
  ConstantSource gemm, fp32, memory;
};
ConstantSources constant_sources(const GpuCatalog& catalog, const GpuType& gpu);
// "0.72 (calibrated)", "0.73 (uncalibrated: datasheet rule, the mean of a10, a40)".
std::string describe(const ConstantSource& s);
// The datasheet's fp32 peak is at least a fifth of its dense fp16 tensor peak: GA10x and
// AD10x count dual-issue fp32, a peak GEMMs rarely reach.
bool dual_issue_fp32(const GpuType& g);

// Options for tests and benchmarks; normal callers use the defaults.
// A bound on the work of one request, shared by all its Cells: counted in layer visits
// of the plan search, so that it is the same on every machine. When it runs out, the
// search keeps the best plan found so far (Estimate::partial) and Cells not reached are
// infeasible with that reason. job_submit bounds every submission this way.
struct WorkBudget {
  std::int64_t limit = 0;  // 0 = no bound
  std::int64_t used = 0;
  bool exhausted() const { return limit > 0 && used >= limit; }
};
inline constexpr const char* kBudgetOut = "not estimated: the request's work budget ran out";

inline constexpr const char* kNotFaster = "not searched to the end: no plan can beat the bound it was given";

struct SearchOptions {
  bool brute_force = false;                // every layer split, no pruning (slow)
  std::optional<CostConstants> constants;  // override cost_constants()
  WorkBudget* budget = nullptr;            // shared by the Cells of one request; null = unbounded
  // estimate_cell: look only for plans of at most this many seconds per iteration; a Cell with
  // none is infeasible with why kNotFaster (its plans are not searched to the end).
  double at_most_s = std::numeric_limits<double>::infinity();
  // rank_cells: the `top` fastest Cells (0: all), the others searched only until they cannot enter
  // them. Cells that turn out feasible on the way may be listed after the first `top`.
  std::size_t top = 0;
  // rank_cells: only the Cells a job can be given (the frontier): per partition, the fastest Cell
  // of each shape that is faster than every smaller shape's (fewer nodes, or one node with fewer
  // GPUs). A smaller shape fits wherever a larger one does, so a dominated shape is never the
  // fastest, the most efficient nor the smallest meeting a deadline among the Cells that fit.
  // Infeasible Cells (at most the 16 largest, to say why) are listed only where no Cell is
  // feasible.
  bool frontier = false;
};

// Best plan in the Cell, or infeasible with `why`.
Estimate estimate_cell(const Request& req, const Cell& cell, const Cluster& cluster,
                       const SearchOptions& opts = {});
// Cost of one fully specified plan (no search); infeasible if it does not fit
// or does not match the Cell.
Estimate estimate_plan(const Request& req, const Cell& cell, const Plan& plan,
                       const Cluster& cluster, const SearchOptions& opts = {});
// Every usable Cell passing the filter (usable_cells; where none is, the Cells of at most two
// nodes, to say why), estimated; feasible first by iteration time, then infeasible ones.
std::vector<Estimate> rank_cells(const Request& req, const Cluster& cluster,
                                 const CellFilter& filter, const SearchOptions& opts = {});
// Best Cell over stage counts for one allocation (the partition is the first
// one with this GPU type and enough nodes).
Estimate best_for_allocation(const Request& req, const Cluster& cluster, std::string gpu,
                             int nodes, int gpus_per_node, const SearchOptions& opts = {});

// The --json cell object of crius-estimate.
nlohmann::json to_json(const Estimate& e);

// ---- formulas, exposed for tests --------------------------------------------

// Model FLOPs per iteration (forward + backward, + recompute's extra forward).
double iteration_flops(const Model& m, int global_batch, Recompute recompute);
// Bytes per GPU of parameters + gradients + optimizer states for mixed-precision
// Adam (2 + 2 + 12 bytes per parameter) under ZeRO stage 0..3 on `dp` ranks.
double zero_model_state_bytes(double parameters, int dp, int zero_stage);

}  // namespace crius::estimator
