// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-train's model: a small GPT-like decoder (token + position embedding,
// L blocks of causal multi-head attention and a GELU MLP with residuals, an
// untied LM head, next-token cross-entropy) trained with plain SGD under a
// crius plan: pipeline stages own layer ranges (embedding on the first stage,
// head on the last), Megatron-style tensor parallelism inside a stage (Q/K/V and
// MLP-in column-parallel by heads/columns, attention-out and MLP-out
// row-parallel, one TP all-reduce after each in forward and for the input
// gradient in backward), and data parallelism across a stage's replicas
// (gradients summed over the stage's DP group). Stages may have different TP
// and DP shapes: a micro-batch's samples are split over each stage's replicas
// and activations are redistributed between stages by sample range.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "estimator/result.h"
#include "launcher/runtime.h"

namespace crius::launcher::train {

struct ModelConfig {
  int vocab = 64;
  int hidden = 32;
  int heads = 8;
  int ffn = 64;
  int seq = 8;
  int layers = 4;
  unsigned seed = 1234;
};

// Matrix products and group all-reduces: CPU (loops + MPI) or GPU (cuBLAS + NCCL).
struct Backend {
  virtual ~Backend() = default;
  // Row-major C(m x n) = beta*C + op(A) op(B), op = transpose when ta/tb.
  virtual void gemm(bool ta, bool tb, int m, int n, int k, const double* a, const double* b, double beta, double* c) = 0;
  virtual void gemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float beta, float* c) = 0;
  virtual void allreduce(double* buf, size_t n, MPI_Comm comm, int group) = 0;  // group: 0 TP, 1 DP
  virtual void allreduce(float* buf, size_t n, MPI_Comm comm, int group) = 0;
  virtual std::string name() const = 0;
};
std::unique_ptr<Backend> cpu_backend();

class Trainer {
 public:
  virtual ~Trainer() = default;
  // One iteration: the plan's schedule over all micro-batches, DP gradient
  // all-reduce, SGD update. Returns the global mean loss (same on every rank).
  virtual double step(long long index) = 0;
  // Plan-independent checkpoint: full tensors gathered on rank 0, written by it.
  virtual Result<void> save(const std::string& path, long long next_step) = 0;
  // Every rank reads the file and keeps its slices; returns the step to run next.
  virtual Result<long long> load(const std::string& path) = 0;
  // Largest |mine - ref| / max(1, |ref|) over this rank's parameter slices,
  // where `ref` holds the full model (a one-rank trainer).
  virtual double max_param_diff(const Trainer& ref) const = 0;
  // L2 norm of the last step's gradient over the whole model (same on every rank).
  virtual double grad_norm() const = 0;
  virtual long long samples_per_step() const = 0;
  virtual size_t local_params() const = 0;
  // step() timed: its wall seconds and those of the attention cores (QK^T, softmax, AV and
  // their gradients), for crius-profile's calibration.
  struct StepTimes {
    double total_s = 0, attention_s = 0;
  };
  virtual StepTimes timed_step(long long index) = 0;
};

// dtype: "fp64" or "fp32". samples: samples per micro-batch (the whole pipeline's,
// split over each stage's DP replicas).
Result<std::unique_ptr<Trainer>> make_trainer(const std::string& dtype, const ModelConfig& model, const Runtime& rt,
                                              int samples, double lr, Backend& backend);

}  // namespace crius::launcher::train
