// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-profile: measures this machine the way the estimator costs it, fits the estimator's
// constants for it, and writes a calibration: a GPU catalogue entry and a collective table
// (crius-profile(1)). CPU path: crius-train's own kernels and MPI.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/util.h"
#include "launcher/runtime.h"
#include "launcher/train/model.h"
#include "estimator/estimator.h"
#include "launcher/train/predict.h"
#include "launcher/train/profile_gpu.h"

namespace cl = crius::launcher;
namespace tr = crius::launcher::train;

namespace {

// A backend that counts the seconds spent in GEMMs.
struct TimingBackend : tr::Backend {
  explicit TimingBackend(tr::Backend& inner) : m_inner(inner) {}
  void gemm(bool ta, bool tb, int m, int n, int k, const double* a, const double* b, double beta, double* c) override {
    const double t0 = MPI_Wtime();
    m_inner.gemm(ta, tb, m, n, k, a, b, beta, c);
    gemm_s += MPI_Wtime() - t0;
  }
  void gemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float beta, float* c) override {
    const double t0 = MPI_Wtime();
    m_inner.gemm(ta, tb, m, n, k, a, b, beta, c);
    gemm_s += MPI_Wtime() - t0;
  }
  void allreduce(double* buf, size_t n, MPI_Comm comm, int group) override { m_inner.allreduce(buf, n, comm, group); }
  void allreduce(float* buf, size_t n, MPI_Comm comm, int group) override { m_inner.allreduce(buf, n, comm, group); }
  std::string name() const override { return m_inner.name(); }
  double gemm_s = 0;

 private:
  tr::Backend& m_inner;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct DtypeResult {
  std::string dtype;
  int samples = 0;
  tr::StepSplit split;
  tr::StepFit fit;
  tr::MachineProfile profile;
};

// Every rank runs a one-rank step of the model at the same time (so that ranks sharing cores
// see it), GEMMs and attention timed; the figures are the medians, averaged over ranks.
// The step measured and fitted: one stage of one rank, one micro-batch of `samples`.
cl::Plan one_rank_plan(int samples) {
  cl::Plan one;
  one.stages.push_back(cl::StagePlan{0, 0, 1, 1});
  one.micro_batches = 1;
  one.micro_batch_size = samples;
  one.schedule = crius::estimator::Schedule{crius::estimator::Schedule::Kind::gpipe, 1};
  return one;
}

crius::Result<DtypeResult> measure_dtype(const std::string& dtype, const tr::ModelConfig& mc, int samples, int steps) {
  const cl::Plan one = one_rank_plan(samples);
  auto rt = cl::Runtime::init(MPI_COMM_SELF, one);
  if (!rt) return crius::make_error(rt.error());
  auto cpu = tr::cpu_backend();
  TimingBackend timing(*cpu);
  auto trainer = tr::make_trainer(dtype, mc, **rt, samples, 1e-3, timing);
  if (!trainer) return crius::make_error(trainer.error());
  std::vector<double> rest, gemm, attention;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = -1; i < steps; ++i) {  // one warm-up step
    timing.gemm_s = 0;
    const tr::Trainer::StepTimes t = (*trainer)->timed_step(i + 1);
    if (i < 0) continue;
    gemm.push_back(timing.gemm_s);
    attention.push_back(t.attention_s);
    rest.push_back(std::max(0.0, t.total_s - timing.gemm_s - t.attention_s));
  }
  DtypeResult r;
  r.dtype = dtype;
  r.samples = samples;
  // Each part's median, the rest taken step by step: the medians of the totals and of the parts
  // came from different steps, and on a loaded machine the rest they left could be negative.
  r.split.gemm_s = tr::mean_over(MPI_COMM_WORLD, median(gemm));
  r.split.attention_s = tr::mean_over(MPI_COMM_WORLD, median(attention));
  r.split.total_s = r.split.gemm_s + r.split.attention_s + tr::mean_over(MPI_COMM_WORLD, median(rest));
  r.profile = tr::measure_profile(*cpu, dtype, mc, samples * mc.seq, 1, MPI_COMM_WORLD);
  tr::MachineProfile single = r.profile;  // the fit costs the one-rank step
  single.nodes = single.ranks_per_node = 1;
  auto fit = tr::fit_step(single, mc, dtype, one, samples, r.split);
  if (!fit) return crius::make_error(dtype + ": " + fit.error());
  r.fit = *fit;
  return r;
}

struct CommRow {
  std::string op;
  int group = 0, nodes_per_group = 1;
  double bytes = 0, time_s = 0;
};

// All-reduce, all-gather and reduce-scatter over groups of 2, 4, ... consecutive ranks (every
// group at once, as the estimator's tables are measured), and send between rank pairs, for
// message sizes from 8 bytes to `max_bytes`, x4 apart. Times are the slowest rank's.
std::vector<CommRow> measure_collectives(double max_bytes, int ranks_per_node, bool progress) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<CommRow> rows;
  std::vector<float> a(static_cast<size_t>(max_bytes / 4) + 16, 1.0f), b(a.size(), 0.0f);
  for (int g = 2; g <= size; g *= 2) {
    if (size % g != 0) continue;
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, rank / g, rank, &comm);
    const int nodes_per_group = std::max(1, (g + ranks_per_node - 1) / ranks_per_node);
    for (const char* op : {"all-reduce", "all-gather", "reduce-scatter", "send"}) {
      const bool send = std::string(op) == "send";
      if (send && g != 2) continue;
      if (progress) std::fprintf(stderr, "crius-profile: %s over groups of %d ranks\n", op, g);
      for (double bytes = 8; bytes <= max_bytes; bytes *= 4) {
        const int count = static_cast<int>(bytes / 4);
        const int part = std::max(1, count / g);
        auto run = [&] {
          if (std::string(op) == "all-reduce") {
            MPI_Allreduce(a.data(), b.data(), count, MPI_FLOAT, MPI_SUM, comm);
          } else if (std::string(op) == "all-gather") {
            MPI_Allgather(a.data(), part, MPI_FLOAT, b.data(), part, MPI_FLOAT, comm);
          } else if (std::string(op) == "reduce-scatter") {
            MPI_Reduce_scatter_block(a.data(), b.data(), part, MPI_FLOAT, MPI_SUM, comm);
          } else {
            int me = 0;
            MPI_Comm_rank(comm, &me);
            if (me == 0) MPI_Send(a.data(), count, MPI_FLOAT, 1, 7, comm);
            else MPI_Recv(b.data(), count, MPI_FLOAT, 0, 7, comm, MPI_STATUS_IGNORE);
          }
        };
        // Fixed counts: every rank makes the same calls. About 20 ms of data per size.
        const int reps = static_cast<int>(std::clamp(2e7 / bytes, 3.0, 200.0));
        run();
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < reps; ++i) run();
        double t = (MPI_Wtime() - t0) / reps;
        MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        const double recorded = send ? bytes : (std::string(op) == "all-reduce" ? bytes : static_cast<double>(part) * g * 4);
        rows.push_back({op, g, nodes_per_group, recorded, t});
      }
    }
    MPI_Comm_free(&comm);
  }
  return rows;
}

std::string host_name() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return buf;
}

// The GPU path: this rank's GPU measured with cuBLAS, the collectives with NCCL; the entry
// keeps the catalogue's datasheet figures where the device is a known type and sets the
// efficiencies to what was measured against them, else holds the measured rates.
int profile_gpu(const std::vector<std::string>& dtypes, const std::vector<int>& hidden, int tokens, double max_bytes,
                const std::string& out, const std::string& gpu_id_opt, const std::string& catalog_path, bool progress,
                int rank) {
  if (progress) std::fprintf(stderr, "crius-profile: [1/2] GEMMs and memory on each rank's GPU\n");
  auto m = tr::measure_gpu(dtypes, hidden, tokens, MPI_COMM_WORLD);
  if (!m) {
    if (rank == 0) std::fprintf(stderr, "crius-profile: --device gpu: %s\n", m.error().c_str());
    return 1;
  }
  if (progress) std::fprintf(stderr, "crius-profile: [2/2] NCCL collectives\n");
  auto comm = tr::measure_gpu_collectives(max_bytes, MPI_COMM_WORLD);
  if (!comm && progress) std::fprintf(stderr, "crius-profile: no collective table: %s\n", comm.error().c_str());
  if (rank != 0) return 0;
  auto best = [&](const std::string& d) {
    double r = 0;
    for (const auto& p : m->gemm)
      if (p.dtype == d) r = std::max(r, p.tflops);
    return r;
  };
  const crius::estimator::GpuType* known = nullptr;
  auto catalog = crius::estimator::GpuCatalog::load(catalog_path);
  if (!catalog)
    std::fprintf(stderr, "crius-profile: no catalogue to match the device to (%s): the entry holds the measured rates\n",
                 catalog.error().c_str());
  else if (auto id = catalog->match_name(m->device))
    known = catalog->find(*id);
  const std::string id = !gpu_id_opt.empty() ? gpu_id_opt : known ? known->id : "gpu";
  std::ostringstream t;
  t << "# Calibration written by crius-profile on " << host_name() << " at " << utc_now() << ": device '" << m->device
    << "', " << (known ? "catalogue type " + known->id + " of " + catalog_path : std::string("not in the catalogue"))
    << " (crius-profile(1)).\n";
  for (const auto& p : m->gemm)
    t << "# GEMM " << p.dtype << " " << p.m << " x " << p.n << " x " << p.k << ": " << crius::util::fmt(p.tflops)
      << " TFLOP/s\n";
  t << "# device-to-device copy: " << crius::util::fmt(m->memory_gbs) << " GB/s\n"
    << "[gpu." << id << "]\n";
  if (known) {
    auto eff = [](double measured, double peak) { return peak > 0 ? std::clamp(measured / peak, 0.01, 1.0) : 1.0; };
    const double half = std::max(best("fp16"), best("bf16"));
    t << "name = \"" << known->name << "\"\nmemory_gib = " << crius::util::fmt(known->memory_gib, 6)
      << "\nmemory_bw_gbs = " << crius::util::fmt(known->memory_bw_gbs, 6) << "\ntflops = { fp16 = "
      << crius::util::fmt(known->tflops_fp16, 6) << ", fp32 = " << crius::util::fmt(known->tflops_fp32, 6);
    if (known->tflops_bf16 > 0) t << ", bf16 = " << crius::util::fmt(known->tflops_bf16, 6);
    if (known->tflops_tf32 > 0) t << ", tf32 = " << crius::util::fmt(known->tflops_tf32, 6);
    if (known->tflops_fp64 > 0) t << ", fp64 = " << crius::util::fmt(known->tflops_fp64, 6);
    t << " }\n";
    if (half > 0) t << "gemm_efficiency = " << crius::util::fmt(eff(half, known->tflops_fp16), 4) << "\n";
    if (best("fp32") > 0) t << "fp32_efficiency = " << crius::util::fmt(eff(best("fp32"), known->tflops_fp32), 4) << "\n";
    t << "memory_efficiency = " << crius::util::fmt(eff(m->memory_gbs, known->memory_bw_gbs), 4) << "\n";
  } else {
    const double fp32 = best("fp32"), half = std::max(best("fp16"), best("bf16"));
    t << "name = \"" << m->device << " (crius-profile)\"\nmemory_gib = " << crius::util::fmt(m->memory_gib, 6)
      << "\nmemory_bw_gbs = " << crius::util::fmt(m->memory_gbs, 6) << "\ntflops = { fp16 = "
      << crius::util::fmt(half > 0 ? half : fp32, 6) << ", fp32 = " << crius::util::fmt(fp32 > 0 ? fp32 : half, 6)
      << " }\ngemm_efficiency = 1.0\nfp32_efficiency = 1.0\nmemory_efficiency = 1.0\n";
  }
  std::ofstream f(out);
  f << t.str();
  if (!f) {
    std::fprintf(stderr, "crius-profile: %s: cannot write\n", out.c_str());
    return 1;
  }
  const std::string csv = tr::calibration_table_path(out);
  const bool table = comm && !comm->points.empty();
  if (table) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int per_node = comm->ranks_per_node;
    std::ofstream c(csv);
    c << "op,nodes,gpus_per_node,group_size,nodes_per_group,bytes,time_s\n";
    for (const auto& r : comm->points)
      c << r.op << ',' << std::max(1, size / per_node) << ',' << per_node << ',' << r.group << ','
        << r.nodes_per_group << ',' << crius::util::fmt(r.bytes, 12) << ',' << crius::util::fmt(r.time_s, 6) << "\n";
  }
  std::printf("crius-profile: wrote %s%s\n", out.c_str(), table ? (" and " + csv).c_str() : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"crius-profile: measure this machine for the crius estimator and write a calibration "
               "(crius-profile(1))"};
  std::string out = "crius-calibration.toml", gpu_id = "cpu", name;
  std::vector<std::string> dtypes;
  std::string device = "cpu", catalog_path = crius::estimator::default_config_dir() + "/gpus.toml";
  std::vector<int> gpu_hidden = {1024, 2048, 4096, 8192};
  int tokens = 4096;
  tr::ModelConfig mc;
  mc.hidden = 128;
  mc.ffn = 512;
  mc.heads = 8;
  mc.seq = 64;
  mc.layers = 4;
  std::vector<int> samples = {2, 8};
  int steps = 5;
  double max_mib = 16;
  bool quiet = false, check = false;
  app.add_option("--out", out, "the calibration to write: a GPU catalogue entry (TOML) and, with more than one "
                               "rank, its collective table beside it (.csv for .toml)");
  app.add_option("--gpu-type", gpu_id, "the catalogue id of the entry (default cpu)");
  app.add_option("--name", name, "its display name (default: this host, as measured)");
  app.add_option("--device", device, "cpu (crius-train's kernels, MPI; the default) or gpu (cuBLAS, NCCL)")
      ->check(CLI::IsMember({"cpu", "gpu"}));
  app.add_option("--dtype", dtypes, "math types to measure: cpu fp64,fp32 (default both); gpu fp16,bf16,fp32 (default all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"fp64", "fp32", "fp16", "bf16"}));
  app.add_option("--gpu-hidden", gpu_hidden, "gpu: transformer widths whose GEMMs are timed (1024,2048,4096,8192)")
      ->delimiter(',')
      ->check(CLI::Range(64, 65536));
  app.add_option("--tokens", tokens, "gpu: tokens per GEMM (4096)")->check(CLI::Range(64, 1 << 20));
  auto* catalog_opt = app.add_option("--catalog", catalog_path,
                                     "gpu: the GPU catalogue whose datasheet figures the device is matched to");
  app.add_option("--hidden", mc.hidden, "the model measured: hidden size (128)")->check(CLI::Range(8, 1 << 16));
  app.add_option("--ffn", mc.ffn, "MLP size (512)")->check(CLI::Range(8, 1 << 18));
  app.add_option("--heads", mc.heads, "attention heads (8)")->check(CLI::Range(1, 1024));
  app.add_option("--seq", mc.seq, "sequence length (64)")->check(CLI::Range(2, 1 << 16));
  app.add_option("--layers", mc.layers, "layers (4)")->check(CLI::Range(1, 1024));
  app.add_option("--samples", samples, "samples per step, one fit per size, the constants their geometric mean (2,8)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--steps", steps, "timed steps per math type, after one warm-up (5)")->check(CLI::Range(1, 1000));
  app.add_option("--max-mib", max_mib, "largest collective message, MiB (16)")->check(CLI::Range(0.001, 1024.0));
  app.add_flag("--check", check, "print the measured step next to the estimate before and after calibration");
  app.add_flag("-q,--quiet", quiet, "no progress lines");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "crius-profile: %s\n", e.what());
    return 2;
  }
  if (dtypes.empty()) dtypes = device == "gpu" ? std::vector<std::string>{"fp16", "bf16", "fp32"}
                                               : std::vector<std::string>{"fp64", "fp32"};
  for (const std::string& d : dtypes)
    if (device == "cpu" ? d != "fp64" && d != "fp32" : d == "fp64") {
      std::fprintf(stderr, "crius-profile: --dtype %s is not measured on --device %s (cpu: fp64, fp32; gpu: fp16, "
                   "bf16, fp32)\n", d.c_str(), device.c_str());
      return 2;
    }
  // A catalogue named on the command line must load; the default one may be absent.
  if (device == "gpu" && catalog_opt->count() > 0)
    if (auto c = crius::estimator::GpuCatalog::load(catalog_path); !c) {
      std::fprintf(stderr, "crius-profile: --catalog: %s\n", c.error().c_str());
      return 2;
    }
  if (device == "gpu" && !tr::gpu_path_built()) {
    std::fprintf(stderr, "crius-profile: --device gpu: this crius-profile was built without CUDA (HAVE_CUDA=0)\n");
    return 1;
  }
  if (mc.hidden % mc.heads != 0) {
    std::fprintf(stderr, "crius-profile: --hidden %d is not a multiple of --heads %d\n", mc.hidden, mc.heads);
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // Rank 0 writes: it finds out now, not after the measurements, whether it can.
  int writable = 1;
  if (rank == 0) {
    const bool existed = access(out.c_str(), F_OK) == 0;
    writable = static_cast<bool>(std::ofstream(out, std::ios::app));
    if (writable && !existed) unlink(out.c_str());
    if (!writable) std::fprintf(stderr, "crius-profile: --out %s: cannot write\n", out.c_str());
  }
  MPI_Bcast(&writable, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!writable) {
    MPI_Finalize();
    return 1;
  }
  const bool progress = rank == 0 && !quiet;
  if (device == "gpu") {
    int rc = profile_gpu(dtypes, gpu_hidden, tokens, max_mib * 1024 * 1024, out, gpu_id == "cpu" ? "" : gpu_id,
                         catalog_path, progress, rank);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
  }
  std::vector<DtypeResult> results;
  for (size_t i = 0; i < dtypes.size(); ++i)
    for (int n : samples) {
      if (progress)
        std::fprintf(stderr, "crius-profile: [%zu/%zu] %s: %d one-rank steps of %d samples on each of %d ranks at once\n",
                     i + 1, dtypes.size() + (size > 1), dtypes[i].c_str(), steps, n, size);
      auto r = measure_dtype(dtypes[i], mc, n, steps);
      if (!r) {
        if (rank == 0) std::fprintf(stderr, "crius-profile: %s\n", r.error().c_str());
        MPI_Finalize();
        return 1;
      }
      results.push_back(std::move(*r));
    }
  std::vector<CommRow> comm;
  const tr::MachineProfile& prof = results.front().profile;
  if (size > 1) {
    if (progress)
      std::fprintf(stderr, "crius-profile: [%zu/%zu] collectives over %d ranks (%d per node), up to %g MiB\n",
                   dtypes.size() + 1, dtypes.size() + 1, size, prof.ranks_per_node, max_mib);
    comm = measure_collectives(max_mib * 1024 * 1024, prof.ranks_per_node, progress);
  }

  int rc = 0;
  if (rank == 0) {
    // One set of constants for every size measured: the geometric mean of each size's fit
    // (least squares on the logarithms), so no size is favoured over another.
    auto geomean = [&](auto&& value, const std::string& dtype) {
      double sum = 0;
      int n = 0;
      for (const auto& r : results)
        if (dtype.empty() || r.dtype == dtype) sum += std::log(value(r)), ++n;
      return n > 0 ? std::exp(sum / n) : 0.0;
    };
    auto rate = [&](const std::string& d) {
      const double tf = geomean([](const DtypeResult& r) { return r.fit.gemm_gflops / 1e3; }, d);
      return tf > 0 ? tf : geomean([](const DtypeResult& r) { return r.fit.gemm_gflops / 1e3; }, "");
    };
    const double ae = geomean([](const DtypeResult& r) { return r.fit.attention_efficiency; }, "");
    const double me = geomean([](const DtypeResult& r) { return r.fit.memory_efficiency; }, "");
    const double triad = geomean([](const DtypeResult& r) { return r.profile.memory_gbs; }, "");
    std::vector<std::string> size_list;
    for (int n : samples) size_list.push_back(std::to_string(n));
    const std::string sizes = crius::util::join(size_list, ", ");
    std::ostringstream t;
    t << "# Calibration written by crius-profile on " << host_name() << " at " << utc_now() << ":\n"
      << "# " << size << " ranks (" << prof.ranks_per_node << " per node) measured at once, crius-train's model with "
      << "hidden " << mc.hidden << ", ffn " << mc.ffn << ", heads " << mc.heads << ", seq " << mc.seq << ", "
      << mc.layers << " layers, steps of " << sizes << " samples (crius-profile(1)).\n";
    for (const auto& r : results) {
      const auto& s = r.split;
      t << "# " << r.dtype << ", " << r.samples << " samples: step " << crius::util::fmt(s.total_s)
        << " s (GEMMs " << crius::util::fmt(s.gemm_s) << ", attention " << crius::util::fmt(s.attention_s) << ", other "
        << crius::util::fmt(s.total_s - s.gemm_s - s.attention_s) << "); estimated "
        << crius::util::fmt(r.fit.estimated_before_s) << " s on the measured rates alone; fitted GEMM "
        << crius::util::fmt(r.fit.gemm_gflops) << " GFLOP/s (the layer's GEMMs alone: "
        << crius::util::fmt(r.profile.gemm_gflops) << "), attention efficiency "
        << crius::util::fmt(r.fit.attention_efficiency, 3) << ", memory efficiency "
        << crius::util::fmt(r.fit.memory_efficiency, 3) << "\n";
    }
    t << "# The constants below are the geometric means of these fits.\n"
      << "# There is no half-precision math on the CPU path: fp16 repeats the fp32 rate.\n"
      << "[gpu." << gpu_id << "]\n"
      << "name = \"" << (name.empty() ? host_name() + " (crius-profile)" : name) << "\"\n"
      << "memory_gib = " << crius::util::fmt(prof.memory_gib, 6) << "\n"
      << "memory_bw_gbs = " << crius::util::fmt(triad, 6) << "\n"
      << "tflops = { fp16 = " << crius::util::fmt(rate("fp32"), 6) << ", fp32 = " << crius::util::fmt(rate("fp32"), 6)
      << ", fp64 = " << crius::util::fmt(rate("fp64"), 6) << " }\n"
      << "gemm_efficiency = 1.0\nfp32_efficiency = 1.0\ngemm_half_gflop = 0.0\n"
      << "attention_efficiency = " << crius::util::fmt(ae, 4) << "\n"
      << "memory_efficiency = " << crius::util::fmt(me, 4) << "\n";
    std::ofstream f(out);
    f << t.str();
    if (!f) {
      std::fprintf(stderr, "crius-profile: %s: cannot write\n", out.c_str());
      rc = 1;
    }
    const std::string csv = tr::calibration_table_path(out);
    if (!comm.empty() && rc == 0) {
      std::ofstream c(csv);
      c << "op,nodes,gpus_per_node,group_size,nodes_per_group,bytes,time_s\n";
      std::stable_sort(comm.begin(), comm.end(), [](const CommRow& a, const CommRow& b) {
        return std::tie(a.op, a.group, a.nodes_per_group, a.bytes) < std::tie(b.op, b.group, b.nodes_per_group, b.bytes);
      });
      for (const auto& r : comm)
        c << r.op << ',' << prof.nodes << ',' << prof.ranks_per_node << ',' << r.group << ',' << r.nodes_per_group << ','
          << crius::util::fmt(r.bytes, 12) << ',' << crius::util::fmt(r.time_s, 6) << "\n";
      if (!c) {
        std::fprintf(stderr, "crius-profile: %s: cannot write\n", csv.c_str());
        rc = 1;
      }
    }
    if (rc == 0) {
      std::printf("crius-profile: wrote %s%s\n", out.c_str(), comm.empty() ? "" : (" and " + csv).c_str());
      if (check)
        for (const auto& r : results) {
          // After: as crius-train predicts with this calibration, on the rates it measures.
          tr::MachineProfile single = r.profile;
          single.nodes = single.ranks_per_node = 1;
          tr::Calibration cal;
          cal.attention_efficiency = ae;
          cal.memory_efficiency = me;
          cal.memory_gbs = triad;
          auto after = tr::predict(single, mc, r.dtype, one_rank_plan(r.samples), r.samples, &cal);
          const double after_s = after ? after->iter_time_s : 0;
          std::printf("crius-profile: %s one-rank step of %d samples: measured %.6f s; estimated %.6f s before "
                      "calibration (measured/estimated %.2f), %.6f s after (%.2f)\n",
                      r.dtype.c_str(), r.samples, r.split.total_s, r.fit.estimated_before_s,
                      r.split.total_s / r.fit.estimated_before_s, after_s, after_s > 0 ? r.split.total_s / after_s : 0);
        }
    }
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
