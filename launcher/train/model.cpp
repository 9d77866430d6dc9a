// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher/train/model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>

namespace crius::launcher::train {

namespace {

template <typename T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <>
MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }

template <typename T>
void cpu_gemm(bool ta, bool tb, int m, int n, int k, const T* a, const T* b, T beta, T* c) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) c[static_cast<size_t>(i) * n + j] *= beta;
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      T av = ta ? a[static_cast<size_t>(p) * m + i] : a[static_cast<size_t>(i) * k + p];
      if (av == T(0)) continue;
      T* crow = c + static_cast<size_t>(i) * n;
      if (!tb) {
        const T* brow = b + static_cast<size_t>(p) * n;
        for (int j = 0; j < n; ++j) crow[j] += av * brow[j];
      } else {
        for (int j = 0; j < n; ++j) crow[j] += av * b[static_cast<size_t>(j) * k + p];
      }
    }
}

struct CpuBackend : Backend {
  void gemm(bool ta, bool tb, int m, int n, int k, const double* a, const double* b, double beta, double* c) override {
    cpu_gemm(ta, tb, m, n, k, a, b, beta, c);
  }
  void gemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float beta, float* c) override {
    cpu_gemm(ta, tb, m, n, k, a, b, beta, c);
  }
  void allreduce(double* buf, size_t n, MPI_Comm comm, int) override {
    MPI_Allreduce(MPI_IN_PLACE, buf, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, comm);
  }
  void allreduce(float* buf, size_t n, MPI_Comm comm, int) override {
    MPI_Allreduce(MPI_IN_PLACE, buf, static_cast<int>(n), MPI_FLOAT, MPI_SUM, comm);
  }
  std::string name() const override { return "cpu"; }
};

// Deterministic value in [-1, 1) for element (i, j) of tensor `id`.
double init_value(unsigned seed, int id, long long i, long long j) {
  std::uint64_t x = (static_cast<std::uint64_t>(seed) << 40) ^ (static_cast<std::uint64_t>(id) << 52) ^
                    (static_cast<std::uint64_t>(i) << 20) ^ static_cast<std::uint64_t>(j);
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / static_cast<double>(1ull << 52) - 1.0;
}

// Training data: sequences that follow t' = (3t + 1) mod V from a pseudo-random start.
int token(unsigned seed, long long step, long long sample, int pos, int vocab) {
  int start = static_cast<int>((init_value(seed + 7, 999, step, sample) + 1.0) * 0.5 * vocab) % vocab;
  int t = start;
  for (int p = 0; p < pos; ++p) t = (3 * t + 1) % vocab;
  return t;
}

enum class Split { None, Col, Row };

template <typename T>
struct Param {
  int id = 0;
  std::string name;
  int rows = 0, cols = 0;  // full shape
  Split split = Split::None;
  int lr0 = 0, lc0 = 0, lrows = 0, lcols = 0;  // local slice
  std::vector<T> w, g;
};

// Global tensor ids: 0 embedding, 1 positions, 2 + kPerLayer * layer + k for a
// layer's tensors (k in LayerTensor), then the final layer norm's scale and
// shift, then the head.
constexpr int kPerLayer = 16;
enum LayerTensor { kWq, kBq, kWk, kBk, kWv, kBv, kWo, kBo, kW1, kB1, kW2, kB2, kLn1g, kLn1b, kLn2g, kLn2b };
constexpr int kEmbedSide = -1, kHeadSide = -2;

struct TensorSpec {
  int rows, cols;
  Split split;
  int layer;  // or kEmbedSide (first stage) / kHeadSide (last stage)
};

int tensor_count(const ModelConfig& mc) { return 5 + kPerLayer * mc.layers; }

TensorSpec tensor_spec(const ModelConfig& mc, int id) {
  const int h = mc.hidden, f = mc.ffn, top = 2 + kPerLayer * mc.layers;
  if (id == 0) return {mc.vocab, h, Split::None, kEmbedSide};
  if (id == 1) return {mc.seq, h, Split::None, kEmbedSide};
  if (id == top || id == top + 1) return {1, h, Split::None, kHeadSide};
  if (id == top + 2) return {h, mc.vocab, Split::None, kHeadSide};
  const int layer = (id - 2) / kPerLayer;
  switch ((id - 2) % kPerLayer) {
    case kWq: case kWk: case kWv: return {h, h, Split::Col, layer};
    case kBq: case kBk: case kBv: return {1, h, Split::Col, layer};
    case kWo: return {h, h, Split::Row, layer};
    case kW1: return {h, f, Split::Col, layer};
    case kB1: return {1, f, Split::Col, layer};
    case kW2: return {f, h, Split::Row, layer};
    default: return {1, h, Split::None, layer};  // kBo, kB2 and the layer norms
  }
}

template <typename T>
struct Layer {
  Param<T>*wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo, *w1, *b1, *w2, *b2, *ln1g, *ln1b, *ln2g, *ln2b;
};

template <typename T>
struct LayerCache {
  std::vector<T> xn, xh1, rs1, q, k, v, p, o, x1, x1n, xh2, rs2, a, h;
};

// Layer norm of each row of x (n x h): y = g * xhat + b, xhat = (x - mean) * rstd.
template <typename T>
void layer_norm(const std::vector<T>& x, const Param<T>& g, const Param<T>& b, int n, int h, std::vector<T>& xhat,
                std::vector<T>& rstd, std::vector<T>& y) {
  xhat.resize(static_cast<size_t>(n) * h);
  y.resize(xhat.size());
  rstd.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const T* r = &x[static_cast<size_t>(i) * h];
    double mean = 0, var = 0;
    for (int d = 0; d < h; ++d) mean += r[d];
    mean /= h;
    for (int d = 0; d < h; ++d) var += (r[d] - mean) * (r[d] - mean);
    const T rs = static_cast<T>(1.0 / std::sqrt(var / h + 1e-5));
    rstd[i] = rs;
    for (int d = 0; d < h; ++d) {
      const size_t k = static_cast<size_t>(i) * h + d;
      xhat[k] = static_cast<T>(r[d] - mean) * rs;
      y[k] = g.w[d] * xhat[k] + b.w[d];
    }
  }
}

// dy -> gradients of g and b (accumulated) and dx (assigned).
template <typename T>
void layer_norm_backward(const std::vector<T>& dy, Param<T>& g, Param<T>& b, const std::vector<T>& xhat,
                         const std::vector<T>& rstd, int n, int h, std::vector<T>& dx) {
  dx.resize(dy.size());
  for (int i = 0; i < n; ++i) {
    double mean_d = 0, mean_dx = 0;
    for (int d = 0; d < h; ++d) {
      const size_t k = static_cast<size_t>(i) * h + d;
      g.g[d] += dy[k] * xhat[k];
      b.g[d] += dy[k];
      const double dxh = static_cast<double>(dy[k]) * g.w[d];
      mean_d += dxh;
      mean_dx += dxh * xhat[k];
    }
    mean_d /= h;
    mean_dx /= h;
    for (int d = 0; d < h; ++d) {
      const size_t k = static_cast<size_t>(i) * h + d;
      dx[k] = static_cast<T>(rstd[i] * (static_cast<double>(dy[k]) * g.w[d] - mean_d - xhat[k] * mean_dx));
    }
  }
}

template <typename T>
struct MicroState {
  std::vector<T> input;                 // stage input activations (n x hidden)
  std::vector<int> tokens, targets;     // first/last stage
  std::vector<LayerCache<T>> layers;    // per local layer (empty after full recompute drop)
  std::vector<T> out;                   // stage output (last stage: after the final layer norm)
  std::vector<T> out_hat, out_rstd;     // the final layer norm's saved statistics
};

template <typename T>
class Engine : public Trainer {
 public:
  Engine(const ModelConfig& mc, const Runtime& rt, int samples, double lr, Backend& be)
      : m_mc(mc), m_rt(rt), m_samples(samples), m_lr(static_cast<T>(lr)), m_be(be) {}

  Result<void> setup();
  double step(long long index) override;
  StepTimes timed_step(long long index) override {
    m_attention_s = 0;
    m_time_attention = true;
    const double t0 = MPI_Wtime();
    step(index);
    const StepTimes t{MPI_Wtime() - t0, m_attention_s};
    m_time_attention = false;
    return t;
  }
  Result<void> save(const std::string& path, long long next_step) override;
  Result<long long> load(const std::string& path) override;
  double max_param_diff(const Trainer& ref) const override;
  long long samples_per_step() const override {
    return static_cast<long long>(m_samples) * m_rt.plan().micro_batches;
  }
  double grad_norm() const override { return m_grad_norm; }
  size_t local_params() const override {
    size_t n = 0;
    for (const auto& p : m_params) n += p.w.size();
    return n;
  }

 private:
  // --- parameters
  Param<T>* add(int id, const std::string& name, double scale, double offset = 0);
  void init_param(Param<T>& p, double scale, double offset);
  // --- compute
  void forward(int mb, MicroState<T>& st, long long step);
  void backward(int mb, MicroState<T>& st, long long step);
  void layer_forward(const Layer<T>& L, const std::vector<T>& x, LayerCache<T>& c, std::vector<T>& out);
  void layer_backward(const Layer<T>& L, LayerCache<T>& c, std::vector<T>& dx);
  // --- pipeline p2p (by sample range)
  std::pair<int, int> range(int stage, int replica) const {
    int dp = m_rt.plan().stages[stage].dp;
    return {static_cast<int>(static_cast<long long>(replica) * m_samples / dp),
            static_cast<int>(static_cast<long long>(replica + 1) * m_samples / dp)};
  }
  void send_acts(int to_stage, int mb, int dir, const std::vector<T>& data);
  void recv_acts(int from_stage, int mb, int dir, std::vector<T>& data);
  void wait_sends();

  ModelConfig m_mc;
  const Runtime& m_rt;
  int m_samples;
  T m_lr;
  double m_grad_norm = 0;
  Backend& m_be;
  int m_stage = 0, m_tp = 1, m_tpr = 0, m_first = 0, m_last = -1;
  int m_lo = 0, m_hi = 0;  // this replica's sample range
  bool m_is_first = false, m_is_last = false;
  std::deque<Param<T>> m_params;
  std::map<int, Param<T>*> m_by_id;
  Param<T>*m_emb = nullptr, *m_pos = nullptr, *m_lnf_g = nullptr, *m_lnf_b = nullptr, *m_out = nullptr;
  std::vector<Layer<T>> m_layers;
  std::deque<std::vector<T>> m_send_bufs;
  std::vector<MPI_Request> m_send_reqs;
  double m_loss_sum = 0;
  bool m_time_attention = false;
  double m_attention_s = 0;
  double clock() const { return m_time_attention ? MPI_Wtime() : 0; }
  void add_attention(double t0) {
    if (m_time_attention) m_attention_s += MPI_Wtime() - t0;
  }
};

template <typename T>
Param<T>* Engine<T>::add(int id, const std::string& name, double scale, double offset) {
  const TensorSpec spec = tensor_spec(m_mc, id);
  Param<T> p;
  p.id = id;
  p.name = name;
  p.rows = p.lrows = spec.rows;
  p.cols = p.lcols = spec.cols;
  p.split = spec.split;
  if (p.split == Split::Col) {
    p.lcols = p.cols / m_tp;
    p.lc0 = m_tpr * p.lcols;
  } else if (p.split == Split::Row) {
    p.lrows = p.rows / m_tp;
    p.lr0 = m_tpr * p.lrows;
  }
  m_params.push_back(std::move(p));
  Param<T>* q = &m_params.back();
  init_param(*q, scale, offset);
  m_by_id[id] = q;
  return q;
}

template <typename T>
void Engine<T>::init_param(Param<T>& p, double scale, double offset) {
  p.w.assign(static_cast<size_t>(p.lrows) * p.lcols, T(0));
  p.g.assign(p.w.size(), T(0));
  for (int i = 0; i < p.lrows; ++i)
    for (int j = 0; j < p.lcols; ++j)
      p.w[static_cast<size_t>(i) * p.lcols + j] =
          static_cast<T>(offset + scale * init_value(m_mc.seed, p.id, p.lr0 + i, p.lc0 + j));
}

template <typename T>
Result<void> Engine<T>::setup() {
  const Plan& plan = m_rt.plan();
  const RankInfo& me = m_rt.me();
  m_stage = me.stage;
  m_tp = plan.stages[m_stage].tp;
  m_tpr = me.tp_rank;
  if (m_mc.heads % m_tp != 0)
    return make_error("stage " + std::to_string(m_stage) + ": tp=" + std::to_string(m_tp) + " does not divide the " +
                      std::to_string(m_mc.heads) + " attention heads (--heads)");
  if (m_mc.ffn % m_tp != 0)
    return make_error("stage " + std::to_string(m_stage) + ": tp=" + std::to_string(m_tp) + " does not divide ffn=" +
                      std::to_string(m_mc.ffn) + " (--ffn)");
  if (m_mc.hidden % m_mc.heads != 0) return make_error("--hidden must be a multiple of --heads");
  for (int s = 0; s < plan.pp(); ++s)
    if (plan.stages[s].dp > m_samples)
      return make_error("stage " + std::to_string(s) + " has dp=" + std::to_string(plan.stages[s].dp) + " but a micro-batch has only " +
                        std::to_string(m_samples) + " samples");
  if (plan.has_layers()) {
    if (plan.num_layers() != m_mc.layers)
      return make_error("the plan's stages cover " + std::to_string(plan.num_layers()) + " layers but the model has " +
                        std::to_string(m_mc.layers) + " (--layers)");
    m_first = plan.stages[m_stage].layer_begin;
    m_last = plan.stages[m_stage].layer_end - 1;
  } else {
    if (m_mc.layers < plan.pp())
      return make_error(std::to_string(m_mc.layers) + " layers cannot fill " + std::to_string(plan.pp()) + " stages");
    m_first = static_cast<int>(static_cast<long long>(m_stage) * m_mc.layers / plan.pp());
    m_last = static_cast<int>(static_cast<long long>(m_stage + 1) * m_mc.layers / plan.pp()) - 1;
  }
  if (plan.schedule.kind == estimator::Schedule::Kind::interleaved)
    return make_error("schedule '" + estimator::to_string(plan.schedule) +
                      "' is not implemented by crius-train (gpipe, 1f1b)");
  m_is_first = m_stage == 0;
  m_is_last = m_stage == plan.pp() - 1;
  std::tie(m_lo, m_hi) = range(m_stage, me.dp_rank);
  const int h = m_mc.hidden, f = m_mc.ffn;
  const double sh = 1.0 / std::sqrt(static_cast<double>(h)), sf = 1.0 / std::sqrt(static_cast<double>(f));
  if (m_is_first) {
    m_emb = add(0, "embedding", 0.5);
    m_pos = add(1, "positions", 0.1);
  }
  for (int l = m_first; l <= m_last; ++l) {
    const int b = 2 + kPerLayer * l;
    const std::string n = "layer" + std::to_string(l) + ".";
    Layer<T> L;
    L.wq = add(b + kWq, n + "wq", sh);
    L.bq = add(b + kBq, n + "bq", 0.01);
    L.wk = add(b + kWk, n + "wk", sh);
    L.bk = add(b + kBk, n + "bk", 0.01);
    L.wv = add(b + kWv, n + "wv", sh);
    L.bv = add(b + kBv, n + "bv", 0.01);
    L.wo = add(b + kWo, n + "wo", sh);
    L.bo = add(b + kBo, n + "bo", 0.01);
    L.w1 = add(b + kW1, n + "w1", sh);
    L.b1 = add(b + kB1, n + "b1", 0.01);
    L.w2 = add(b + kW2, n + "w2", sf);
    L.b2 = add(b + kB2, n + "b2", 0.01);
    L.ln1g = add(b + kLn1g, n + "ln1.scale", 0.1, 1.0);
    L.ln1b = add(b + kLn1b, n + "ln1.shift", 0.01);
    L.ln2g = add(b + kLn2g, n + "ln2.scale", 0.1, 1.0);
    L.ln2b = add(b + kLn2b, n + "ln2.shift", 0.01);
    m_layers.push_back(L);
  }
  if (m_is_last) {
    const int top = 2 + kPerLayer * m_mc.layers;
    m_lnf_g = add(top, "final_ln.scale", 0.1, 1.0);
    m_lnf_b = add(top + 1, "final_ln.shift", 0.01);
    m_out = add(top + 2, "head", sh);
  }
  return {};
}

template <typename T>
T gelu(T x) {
  const T c = static_cast<T>(0.7978845608028654);
  return static_cast<T>(0.5) * x * (T(1) + std::tanh(c * (x + static_cast<T>(0.044715) * x * x * x)));
}
template <typename T>
T gelu_grad(T x) {
  const T c = static_cast<T>(0.7978845608028654);
  T u = c * (x + static_cast<T>(0.044715) * x * x * x);
  T t = std::tanh(u);
  T du = c * (T(1) + static_cast<T>(3 * 0.044715) * x * x);
  return static_cast<T>(0.5) * (T(1) + t) + static_cast<T>(0.5) * x * (T(1) - t * t) * du;
}

template <typename T>
void add_bias(std::vector<T>& y, const std::vector<T>& b, int n, int cols) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < cols; ++j) y[static_cast<size_t>(i) * cols + j] += b[j];
}
template <typename T>
void col_sum(const std::vector<T>& d, int n, int cols, std::vector<T>& g) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < cols; ++j) g[j] += d[static_cast<size_t>(i) * cols + j];
}

template <typename T>
void Engine<T>::layer_forward(const Layer<T>& L, const std::vector<T>& x, LayerCache<T>& c, std::vector<T>& out) {
  const int n = (m_hi - m_lo) * m_mc.seq, h = m_mc.hidden, hl = h / m_tp, fl = m_mc.ffn / m_tp, T_ = m_mc.seq;
  const int hd = h / m_mc.heads, nhl = m_mc.heads / m_tp, ns = m_hi - m_lo;
  layer_norm(x, *L.ln1g, *L.ln1b, n, h, c.xh1, c.rs1, c.xn);
  for (auto [w, b, dst] : {std::tuple{L.wq, L.bq, &c.q}, std::tuple{L.wk, L.bk, &c.k}, std::tuple{L.wv, L.bv, &c.v}}) {
    dst->assign(static_cast<size_t>(n) * hl, T(0));
    m_be.gemm(false, false, n, hl, h, c.xn.data(), w->w.data(), T(0), dst->data());
    add_bias(*dst, b->w, n, hl);
  }
  c.p.assign(static_cast<size_t>(ns) * nhl * T_ * T_, T(0));
  c.o.assign(static_cast<size_t>(n) * hl, T(0));
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
  const double t_attn = clock();
  for (int s = 0; s < ns; ++s)
    for (int j = 0; j < nhl; ++j) {
      T* P = &c.p[(static_cast<size_t>(s) * nhl + j) * T_ * T_];
      for (int t = 0; t < T_; ++t) {
        T mx = -1e30f;
        for (int u = 0; u <= t; ++u) {
          T acc = 0;
          for (int d = 0; d < hd; ++d)
            acc += c.q[static_cast<size_t>(s * T_ + t) * hl + j * hd + d] * c.k[static_cast<size_t>(s * T_ + u) * hl + j * hd + d];
          P[t * T_ + u] = acc * scale;
          mx = std::max(mx, P[t * T_ + u]);
        }
        T sum = 0;
        for (int u = 0; u <= t; ++u) sum += (P[t * T_ + u] = std::exp(P[t * T_ + u] - mx));
        for (int u = 0; u <= t; ++u) P[t * T_ + u] /= sum;
        for (int d = 0; d < hd; ++d) {
          T acc = 0;
          for (int u = 0; u <= t; ++u) acc += P[t * T_ + u] * c.v[static_cast<size_t>(s * T_ + u) * hl + j * hd + d];
          c.o[static_cast<size_t>(s * T_ + t) * hl + j * hd + d] = acc;
        }
      }
    }
  add_attention(t_attn);
  std::vector<T> y(static_cast<size_t>(n) * h, T(0));
  m_be.gemm(false, false, n, h, hl, c.o.data(), L.wo->w.data(), T(0), y.data());
  if (m_tp > 1) m_be.allreduce(y.data(), y.size(), m_rt.tp_comm(), 0);
  add_bias(y, L.bo->w, n, h);
  c.x1 = x;
  for (size_t i = 0; i < y.size(); ++i) c.x1[i] += y[i];
  layer_norm(c.x1, *L.ln2g, *L.ln2b, n, h, c.xh2, c.rs2, c.x1n);
  c.a.assign(static_cast<size_t>(n) * fl, T(0));
  m_be.gemm(false, false, n, fl, h, c.x1n.data(), L.w1->w.data(), T(0), c.a.data());
  add_bias(c.a, L.b1->w, n, fl);
  c.h.resize(c.a.size());
  for (size_t i = 0; i < c.a.size(); ++i) c.h[i] = gelu(c.a[i]);
  std::vector<T> z(static_cast<size_t>(n) * h, T(0));
  m_be.gemm(false, false, n, h, fl, c.h.data(), L.w2->w.data(), T(0), z.data());
  if (m_tp > 1) m_be.allreduce(z.data(), z.size(), m_rt.tp_comm(), 0);
  add_bias(z, L.b2->w, n, h);
  out = c.x1;
  for (size_t i = 0; i < z.size(); ++i) out[i] += z[i];
}

template <typename T>
void Engine<T>::layer_backward(const Layer<T>& L, LayerCache<T>& c, std::vector<T>& dx) {
  // dx: in = gradient w.r.t. the layer output; out = gradient w.r.t. its input.
  const int n = (m_hi - m_lo) * m_mc.seq, h = m_mc.hidden, hl = h / m_tp, fl = m_mc.ffn / m_tp, T_ = m_mc.seq;
  const int hd = h / m_mc.heads, nhl = m_mc.heads / m_tp, ns = m_hi - m_lo;
  const std::vector<T>& dz = dx;
  col_sum(dz, n, h, L.b2->g);
  m_be.gemm(true, false, fl, h, n, c.h.data(), dz.data(), T(1), L.w2->g.data());
  std::vector<T> da(static_cast<size_t>(n) * fl, T(0));
  m_be.gemm(false, true, n, fl, h, dz.data(), L.w2->w.data(), T(0), da.data());
  for (size_t i = 0; i < da.size(); ++i) da[i] *= gelu_grad(c.a[i]);
  m_be.gemm(true, false, h, fl, n, c.x1n.data(), da.data(), T(1), L.w1->g.data());
  col_sum(da, n, fl, L.b1->g);
  std::vector<T> dx1n(static_cast<size_t>(n) * h, T(0)), dx1;
  m_be.gemm(false, true, n, h, fl, da.data(), L.w1->w.data(), T(0), dx1n.data());
  if (m_tp > 1) m_be.allreduce(dx1n.data(), dx1n.size(), m_rt.tp_comm(), 0);
  layer_norm_backward(dx1n, *L.ln2g, *L.ln2b, c.xh2, c.rs2, n, h, dx1);
  for (size_t i = 0; i < dx1.size(); ++i) dx1[i] += dx[i];
  // attention
  col_sum(dx1, n, h, L.bo->g);
  m_be.gemm(true, false, hl, h, n, c.o.data(), dx1.data(), T(1), L.wo->g.data());
  std::vector<T> dO(static_cast<size_t>(n) * hl, T(0));
  m_be.gemm(false, true, n, hl, h, dx1.data(), L.wo->w.data(), T(0), dO.data());
  std::vector<T> dq(dO.size(), T(0)), dk(dO.size(), T(0)), dv(dO.size(), T(0));
  const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(hd)));
  std::vector<T> dP(static_cast<size_t>(T_) * T_);
  const double t_attn = clock();
  for (int s = 0; s < ns; ++s)
    for (int j = 0; j < nhl; ++j) {
      const T* P = &c.p[(static_cast<size_t>(s) * nhl + j) * T_ * T_];
      auto at = [&](const std::vector<T>& m, int t, int d) -> T { return m[static_cast<size_t>(s * T_ + t) * hl + j * hd + d]; };
      auto ref = [&](std::vector<T>& m, int t, int d) -> T& { return m[static_cast<size_t>(s * T_ + t) * hl + j * hd + d]; };
      for (int t = 0; t < T_; ++t) {
        T rowdot = 0;
        for (int u = 0; u <= t; ++u) {
          T acc = 0;
          for (int d = 0; d < hd; ++d) acc += at(dO, t, d) * at(c.v, u, d);
          dP[t * T_ + u] = acc;
          rowdot += acc * P[t * T_ + u];
          for (int d = 0; d < hd; ++d) ref(dv, u, d) += P[t * T_ + u] * at(dO, t, d);
        }
        for (int u = 0; u <= t; ++u) {
          T ds = P[t * T_ + u] * (dP[t * T_ + u] - rowdot) * scale;
          for (int d = 0; d < hd; ++d) {
            ref(dq, t, d) += ds * at(c.k, u, d);
            ref(dk, u, d) += ds * at(c.q, t, d);
          }
        }
      }
    }
  add_attention(t_attn);
  std::vector<T> dxa(static_cast<size_t>(n) * h, T(0));
  for (auto [w, b, d] : {std::tuple{L.wq, L.bq, &dq}, std::tuple{L.wk, L.bk, &dk}, std::tuple{L.wv, L.bv, &dv}}) {
    m_be.gemm(true, false, h, hl, n, c.xn.data(), d->data(), T(1), w->g.data());
    col_sum(*d, n, hl, b->g);
    m_be.gemm(false, true, n, h, hl, d->data(), w->w.data(), T(1), dxa.data());
  }
  if (m_tp > 1) m_be.allreduce(dxa.data(), dxa.size(), m_rt.tp_comm(), 0);
  layer_norm_backward(dxa, *L.ln1g, *L.ln1b, c.xh1, c.rs1, n, h, dx);
  for (size_t i = 0; i < dx.size(); ++i) dx[i] += dx1[i];
}

template <typename T>
void Engine<T>::send_acts(int to_stage, int mb, int dir, const std::vector<T>& data) {
  // Only TP rank 0 of a replica sends; every TP rank of an overlapping replica receives.
  if (m_tpr != 0) return;
  const Plan& plan = m_rt.plan();
  const int row = m_mc.seq * m_mc.hidden;
  for (int d = 0; d < plan.stages[to_stage].dp; ++d) {
    auto [lo, hi] = range(to_stage, d);
    int a = std::max(lo, m_lo), b = std::min(hi, m_hi);
    if (a >= b) continue;
    for (int t = 0; t < plan.stages[to_stage].tp; ++t) {
      m_send_bufs.emplace_back(data.begin() + static_cast<long>(a - m_lo) * row, data.begin() + static_cast<long>(b - m_lo) * row);
      m_send_reqs.emplace_back();
      MPI_Isend(m_send_bufs.back().data(), static_cast<int>(m_send_bufs.back().size()), mpi_type<T>(),
                m_rt.layout().rank_of(to_stage, d, t), mb * 2 + dir, m_rt.world(), &m_send_reqs.back());
    }
  }
}

template <typename T>
void Engine<T>::recv_acts(int from_stage, int mb, int dir, std::vector<T>& data) {
  const Plan& plan = m_rt.plan();
  const int row = m_mc.seq * m_mc.hidden;
  data.assign(static_cast<size_t>(m_hi - m_lo) * row, T(0));
  for (int d = 0; d < plan.stages[from_stage].dp; ++d) {
    auto [lo, hi] = range(from_stage, d);
    int a = std::max(lo, m_lo), b = std::min(hi, m_hi);
    if (a >= b) continue;
    MPI_Recv(data.data() + static_cast<long>(a - m_lo) * row, (b - a) * row, mpi_type<T>(),
             m_rt.layout().rank_of(from_stage, d, 0), mb * 2 + dir, m_rt.world(), MPI_STATUS_IGNORE);
  }
}

template <typename T>
void Engine<T>::wait_sends() {
  if (!m_send_reqs.empty()) MPI_Waitall(static_cast<int>(m_send_reqs.size()), m_send_reqs.data(), MPI_STATUSES_IGNORE);
  m_send_reqs.clear();
  m_send_bufs.clear();
}

template <typename T>
void Engine<T>::forward(int mb, MicroState<T>& st, long long step) {
  const int ns = m_hi - m_lo, T_ = m_mc.seq, h = m_mc.hidden;
  if (m_is_first) {
    st.input.assign(static_cast<size_t>(ns) * T_ * h, T(0));
    st.tokens.resize(static_cast<size_t>(ns) * T_);
    for (int s = 0; s < ns; ++s)
      for (int t = 0; t < T_; ++t) {
        int tok = token(m_mc.seed, step, static_cast<long long>(mb) * m_samples + m_lo + s, t, m_mc.vocab);
        st.tokens[static_cast<size_t>(s) * T_ + t] = tok;
        for (int d = 0; d < h; ++d)
          st.input[(static_cast<size_t>(s) * T_ + t) * h + d] = m_emb->w[static_cast<size_t>(tok) * h + d] + m_pos->w[static_cast<size_t>(t) * h + d];
      }
  } else {
    recv_acts(m_stage - 1, mb, 0, st.input);
  }
  st.layers.resize(m_layers.size());
  std::vector<T> x = st.input, y;
  for (size_t i = 0; i < m_layers.size(); ++i) {
    layer_forward(m_layers[i], x, st.layers[i], y);
    x.swap(y);
  }
  if (m_rt.plan().recompute == estimator::Recompute::full) st.layers.clear();  // recomputed in backward
  if (m_is_last) {
    layer_norm(x, *m_lnf_g, *m_lnf_b, ns * T_, h, st.out_hat, st.out_rstd, st.out);
  } else {
    send_acts(m_stage + 1, mb, 0, x);
  }
}

template <typename T>
void Engine<T>::backward(int mb, MicroState<T>& st, long long step) {
  const int ns = m_hi - m_lo, T_ = m_mc.seq, h = m_mc.hidden, V = m_mc.vocab;
  const int n = ns * T_;
  if (st.layers.empty() && !m_layers.empty()) {  // full recompute
    st.layers.resize(m_layers.size());
    std::vector<T> x = st.input, y;
    for (size_t i = 0; i < m_layers.size(); ++i) {
      layer_forward(m_layers[i], x, st.layers[i], y);
      x.swap(y);
    }
  }
  std::vector<T> dx;
  if (m_is_last) {
    // logits, loss and its gradient: mean over every token of the global batch
    std::vector<T> logits(static_cast<size_t>(n) * V, T(0));
    m_be.gemm(false, false, n, V, h, st.out.data(), m_out->w.data(), T(0), logits.data());
    const double denom = static_cast<double>(samples_per_step()) * T_;
    for (int s = 0; s < ns; ++s)
      for (int t = 0; t < T_; ++t) {
        int target = token(m_mc.seed, step, static_cast<long long>(mb) * m_samples + m_lo + s, t + 1, V);
        T* row = &logits[(static_cast<size_t>(s) * T_ + t) * V];
        T mx = *std::max_element(row, row + V);
        T sum = 0;
        for (int v = 0; v < V; ++v) sum += std::exp(row[v] - mx);
        double loss = -(static_cast<double>(row[target]) - mx - std::log(static_cast<double>(sum)));
        if (m_tpr == 0) m_loss_sum += loss / denom;
        for (int v = 0; v < V; ++v) row[v] = static_cast<T>((std::exp(row[v] - mx) / sum - (v == target ? 1.0 : 0.0)) / denom);
      }
    m_be.gemm(true, false, h, V, n, st.out.data(), logits.data(), T(1), m_out->g.data());
    std::vector<T> dout(static_cast<size_t>(n) * h, T(0));
    m_be.gemm(false, true, n, h, V, logits.data(), m_out->w.data(), T(0), dout.data());
    layer_norm_backward(dout, *m_lnf_g, *m_lnf_b, st.out_hat, st.out_rstd, n, h, dx);
  } else {
    recv_acts(m_stage + 1, mb, 1, dx);
  }
  for (size_t i = m_layers.size(); i-- > 0;) layer_backward(m_layers[i], st.layers[i], dx);
  if (m_is_first) {
    for (int s = 0; s < ns; ++s)
      for (int t = 0; t < T_; ++t) {
        int tok = st.tokens[static_cast<size_t>(s) * T_ + t];
        for (int d = 0; d < h; ++d) {
          T g = dx[(static_cast<size_t>(s) * T_ + t) * h + d];
          m_emb->g[static_cast<size_t>(tok) * h + d] += g;
          m_pos->g[static_cast<size_t>(t) * h + d] += g;
        }
      }
  } else {
    send_acts(m_stage - 1, mb, 1, dx);
  }
  st = MicroState<T>();
}

template <typename T>
double Engine<T>::step(long long index) {
  const Plan& plan = m_rt.plan();
  const int M = plan.micro_batches, P = plan.pp();
  for (auto& p : m_params) std::fill(p.g.begin(), p.g.end(), T(0));
  m_loss_sum = 0;
  std::vector<MicroState<T>> states(static_cast<size_t>(M));
  if (plan.schedule.kind == estimator::Schedule::Kind::gpipe) {
    for (int m = 0; m < M; ++m) forward(m, states[m], index);
    for (int m = 0; m < M; ++m) backward(m, states[m], index);
  } else {  // 1f1b: warm-up forwards, steady one-forward-one-backward, cool-down backwards
    int warm = std::min(P - m_stage - 1, M);
    int f = 0, b = 0;
    for (; f < warm; ++f) forward(f, states[f], index);
    while (f < M) {
      forward(f, states[f], index);
      ++f;
      backward(b, states[b], index);
      ++b;
    }
    for (; b < M; ++b) backward(b, states[b], index);
  }
  wait_sends();
  // Each gradient element counts once: DP replicas hold equal copies, and so do
  // the TP ranks of an unsplit tensor.
  double sq = 0;
  for (auto& p : m_params) {
    if (plan.stages[m_stage].dp > 1) m_be.allreduce(p.g.data(), p.g.size(), m_rt.dp_comm(), 1);
    if (m_rt.me().dp_rank == 0 && (p.split != Split::None || m_tpr == 0))
      for (T g : p.g) sq += static_cast<double>(g) * static_cast<double>(g);
    for (size_t i = 0; i < p.w.size(); ++i) p.w[i] -= m_lr * p.g[i];
  }
  MPI_Allreduce(&sq, &m_grad_norm, 1, MPI_DOUBLE, MPI_SUM, m_rt.world());
  m_grad_norm = std::sqrt(m_grad_norm);
  double total = 0;
  MPI_Allreduce(&m_loss_sum, &total, 1, MPI_DOUBLE, MPI_SUM, m_rt.world());
  return total;
}

// ---- checkpoints: "CRIUSCK2", next step, model config, then every tensor (id, rows, cols, doubles) by id.
// (CRIUSCK1 was the model without layer norms.)
constexpr char kMagic[8] = {'C', 'R', 'I', 'U', 'S', 'C', 'K', '2'};

template <typename T>
Result<void> Engine<T>::save(const std::string& path, long long next_step) {
  const Plan& plan = m_rt.plan();
  const Layout& lay = m_rt.layout();
  const int rank = m_rt.rank();
  const int ntensors = tensor_count(m_mc);
  // Owner stage of each tensor id.
  auto stage_of = [&](int id) {
    const int layer = tensor_spec(m_mc, id).layer;
    if (layer == kEmbedSide) return 0;
    if (layer == kHeadSide) return plan.pp() - 1;
    for (int s = 0; s < plan.pp(); ++s) {
      int first = plan.has_layers() ? plan.stages[s].layer_begin
                                    : static_cast<int>(static_cast<long long>(s) * m_mc.layers / plan.pp());
      int last = plan.has_layers() ? plan.stages[s].layer_end - 1
                                   : static_cast<int>(static_cast<long long>(s + 1) * m_mc.layers / plan.pp()) - 1;
      if (layer >= first && layer <= last) return s;
    }
    return -1;
  };
  const RankInfo& me = m_rt.me();
  // Senders: DP replica 0; TP rank 0 for replicated tensors, every TP rank for split ones.
  if (rank != 0 && me.dp_rank == 0) {
    for (auto& p : m_params) {
      if (p.split == Split::None && me.tp_rank != 0) continue;
      std::vector<double> buf(p.w.begin(), p.w.end());
      MPI_Send(buf.data(), static_cast<int>(buf.size()), MPI_DOUBLE, 0, p.id, m_rt.world());
    }
  }
  Result<void> result;
  if (rank == 0) {
    std::string tmp = path + ".tmp";
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    auto put64 = [&](long long v) { out.write(reinterpret_cast<const char*>(&v), sizeof v); };
    out.write(kMagic, 8);
    put64(next_step);
    for (int v : {m_mc.vocab, m_mc.hidden, m_mc.heads, m_mc.ffn, m_mc.seq, m_mc.layers, static_cast<int>(m_mc.seed)}) put64(v);
    put64(ntensors);
    for (int id = 0; id < ntensors; ++id) {
      int s = stage_of(id);
      const int tp = plan.stages[s].tp;
      const TensorSpec spec = tensor_spec(m_mc, id);
      const int rows = spec.rows, cols = spec.cols;
      std::vector<double> full(static_cast<size_t>(rows) * cols, 0.0);
      const Split sp = spec.split;
      int parts = sp == Split::None ? 1 : tp;
      for (int t = 0; t < parts; ++t) {
        int lr0 = 0, lc0 = 0, lrows = rows, lcols = cols;
        if (sp == Split::Col) { lcols = cols / tp; lc0 = t * lcols; }
        if (sp == Split::Row) { lrows = rows / tp; lr0 = t * lrows; }
        std::vector<double> part(static_cast<size_t>(lrows) * lcols);
        int src = lay.rank_of(s, 0, t);
        if (src == 0) {
          const Param<T>* p = m_by_id.at(id);
          std::copy(p->w.begin(), p->w.end(), part.begin());
        } else {
          MPI_Recv(part.data(), static_cast<int>(part.size()), MPI_DOUBLE, src, id, m_rt.world(), MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < lrows; ++i)
          for (int j = 0; j < lcols; ++j) full[static_cast<size_t>(lr0 + i) * cols + lc0 + j] = part[static_cast<size_t>(i) * lcols + j];
      }
      put64(id);
      put64(rows);
      put64(cols);
      out.write(reinterpret_cast<const char*>(full.data()), static_cast<std::streamsize>(full.size() * sizeof(double)));
    }
    out.close();
    if (!out) result = make_error("cannot write checkpoint '" + tmp + "'");
    else if (std::rename(tmp.c_str(), path.c_str()) != 0) result = make_error("cannot rename '" + tmp + "' to '" + path + "'");
  }
  return agree(m_rt.world(), result);
}

template <typename T>
Result<long long> Engine<T>::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read checkpoint '" + path + "'");
  auto get64 = [&]() {
    long long v = 0;
    in.read(reinterpret_cast<char*>(&v), sizeof v);
    return v;
  };
  char magic[8] = {};
  in.read(magic, 8);
  if (std::memcmp(magic, "CRIUSCK1", 8) == 0)
    return make_error(path + ": written by an older crius-train (a model without layer norms); start without --resume");
  if (std::memcmp(magic, kMagic, 8) != 0) return make_error(path + ": not a crius-train checkpoint");
  long long next = get64();
  std::vector<long long> cfg;
  for (int i = 0; i < 7; ++i) cfg.push_back(get64());
  std::vector<long long> want = {m_mc.vocab, m_mc.hidden, m_mc.heads, m_mc.ffn, m_mc.seq, m_mc.layers, static_cast<long long>(m_mc.seed)};
  if (cfg != want) return make_error(path + ": the checkpoint is of a different model (vocab/hidden/heads/ffn/seq/layers/seed)");
  long long n = get64();
  for (long long k = 0; k < n; ++k) {
    long long id = get64(), rows = get64(), cols = get64();
    if (!in || rows <= 0 || cols <= 0 || rows * cols > (1ll << 31)) return make_error(path + ": truncated or corrupt");
    std::vector<double> full(static_cast<size_t>(rows * cols));
    in.read(reinterpret_cast<char*>(full.data()), static_cast<std::streamsize>(full.size() * sizeof(double)));
    if (!in) return make_error(path + ": truncated");
    auto it = m_by_id.find(static_cast<int>(id));
    if (it == m_by_id.end()) continue;
    Param<T>& p = *it->second;
    if (p.rows != rows || p.cols != cols) return make_error(path + ": tensor " + p.name + " has another shape");
    for (int i = 0; i < p.lrows; ++i)
      for (int j = 0; j < p.lcols; ++j)
        p.w[static_cast<size_t>(i) * p.lcols + j] = static_cast<T>(full[static_cast<size_t>(p.lr0 + i) * cols + p.lc0 + j]);
  }
  return next;
}

template <typename T>
double Engine<T>::max_param_diff(const Trainer& ref_base) const {
  const auto& ref = dynamic_cast<const Engine<T>&>(ref_base);
  double worst = 0;
  for (const auto& p : m_params) {
    const Param<T>& q = *ref.m_by_id.at(p.id);
    for (int i = 0; i < p.lrows; ++i)
      for (int j = 0; j < p.lcols; ++j) {
        double a = p.w[static_cast<size_t>(i) * p.lcols + j];
        double b = q.w[static_cast<size_t>(p.lr0 + i) * q.lcols + p.lc0 + j];
        worst = std::max(worst, std::abs(a - b) / std::max(1.0, std::abs(b)));
      }
  }
  return worst;
}

}  // namespace

std::unique_ptr<Backend> cpu_backend() { return std::make_unique<CpuBackend>(); }

Result<std::unique_ptr<Trainer>> make_trainer(const std::string& dtype, const ModelConfig& model, const Runtime& rt,
                                              int samples, double lr, Backend& backend) {
  std::unique_ptr<Trainer> t;
  Result<void> r;
  if (dtype == "fp64") {
    auto e = std::make_unique<Engine<double>>(model, rt, samples, lr, backend);
    r = e->setup();
    t = std::move(e);
  } else if (dtype == "fp32") {
    auto e = std::make_unique<Engine<float>>(model, rt, samples, lr, backend);
    r = e->setup();
    t = std::move(e);
  } else {
    return make_error("--dtype: '" + dtype + "' is not fp64 or fp32");
  }
  if (!r) return make_error(r.error());
  return t;
}

}  // namespace crius::launcher::train
