// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-train: the reference trainer. Runs the plan crius-launch gave it on a
// small GPT-like model, reports measured iteration time, checks itself against
// a one-rank run (--verify), and checkpoints on a signal so a moved job resumes.
#include <mpi.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "job/progress.h"
#include "launcher/runtime.h"
#include "launcher/train/model.h"
#include "launcher/train/predict.h"

namespace cl = crius::launcher;
namespace tr = crius::launcher::train;

#ifdef CRIUS_HAVE_CUDA
namespace crius::launcher::train {
std::unique_ptr<Backend> gpu_backend(const Runtime& rt, std::string* why);
}
#endif

namespace {

volatile sig_atomic_t g_checkpoint = 0;
void on_checkpoint_signal(int) { g_checkpoint = 1; }

// "crius-progress: DONE/TOTAL" on stderr, at most once a second and always for the last
// iteration: crius-launch passes it to Slurm for criusd (job/progress.h).
class ProgressReporter {
 public:
  ProgressReporter(bool on, long long total) : m_on(on), m_total(total) {}
  void done(long long iterations, bool force = false) {
    if (!m_on) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && iterations < m_total && now < m_next) return;
    m_next = now + std::chrono::seconds(1);
    std::fprintf(stderr, "%s\n", crius::job::progress_line({std::min(iterations, m_total), m_total}).c_str());
    std::fflush(stderr);
  }

 private:
  bool m_on;
  long long m_total;
  std::chrono::steady_clock::time_point m_next{};
};

int finish(int code) {
  MPI_Finalize();
  return code;
}

// --emulate: no model and no MPI; every rank sleeps through each iteration for the
// estimator's iteration time of the job's plan (or --iter-time) divided by the time scale,
// so that a replayed trace runs at the speed of the Cell each job really got, at almost no
// CPU cost. Rank 0 (RANK, set by crius-launch) keeps the checkpoint: the iteration count.
int emulate(long long steps, double iter_time_s, double time_scale, const std::string& checkpoint_dir,
            int checkpoint_every, bool resume, bool quiet) {
  const char* rank_env = std::getenv("RANK");
  const bool rank0 = !rank_env || std::atoi(rank_env) == 0;
  const std::string ckpt = checkpoint_dir.empty() ? "" : checkpoint_dir + "/crius-train.emulate";
  long long step = 0;
  if (resume && !ckpt.empty()) {
    std::ifstream in(ckpt);
    std::string word;
    long long at = 0;
    if (in >> word >> at && word == "step" && at >= 0) {
      step = at;
      if (rank0) std::cout << "crius-train: resumed from " << ckpt << " at step " << step << std::endl;
    }
  }
  auto save = [&](long long at) {
    if (!rank0) return true;
    mkdir(checkpoint_dir.c_str(), 0755);
    const std::string tmp = ckpt + ".tmp";
    { std::ofstream(tmp) << "step " << at << "\n"; }
    return std::rename(tmp.c_str(), ckpt.c_str()) == 0;
  };
  const auto wall_per_step = std::chrono::duration<double>(iter_time_s / time_scale);
  ProgressReporter progress(rank0, steps);
  progress.done(step, true);
  auto next = std::chrono::steady_clock::now();
  for (; step < steps; ++step) {
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(wall_per_step);
    while (!g_checkpoint && std::chrono::steady_clock::now() < next)
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(next - std::chrono::steady_clock::now(),
                                                                                 std::chrono::milliseconds(100)));
    if (g_checkpoint) break;  // the iteration in progress is lost, as in training
    if (rank0 && !quiet) std::printf("crius-train: step %lld (emulated, %.3f s)\n", step, iter_time_s);
    progress.done(step + 1);
    if (checkpoint_every > 0 && (step + 1) % checkpoint_every == 0 && !ckpt.empty()) {
      if (!save(step + 1)) {
        std::cerr << "crius-train: cannot write " << ckpt << ": " << std::strerror(errno) << "\n";
        return 1;
      }
    }
    std::fflush(stdout);
  }
  if (g_checkpoint) {
    if (ckpt.empty()) {
      if (rank0) std::cerr << "crius-train: checkpoint signal received but no --checkpoint-dir; stopping\n";
      return 1;
    }
    if (!save(step)) {
      std::cerr << "crius-train: cannot write " << ckpt << ": " << std::strerror(errno) << "\n";
      return 1;
    }
    if (rank0) std::printf("crius-train: checkpoint %s at step %lld\ncrius-train: stopped after the checkpoint signal at step %lld\n",
                           ckpt.c_str(), step, step);
    return 0;
  }
  if (rank0)
    std::printf("crius-train: emulated %lld iterations of %.6f s at time scale %g\n", steps, iter_time_s, time_scale);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"crius-train: reference GPT-like trainer that runs a crius plan (start it with crius-launch)",
               "crius-train"};
  int steps = 5, checkpoint_every = 0, samples = 0, warmup = 1;
  double lr = 0.05, tolerance = -1;
  std::string dtype = "fp64", checkpoint_dir, signal_name = "USR1", device = "cpu", report;
  bool verify = false, resume = false, quiet = false, no_estimate = false, emulate_only = false;
  double iter_time = 0, time_scale = 1;
  tr::ModelConfig mc;
  mc.layers = 0;
  app.add_option("--steps", steps, "iterations to run (total, counting resumed ones)")->check(CLI::Range(1, 1000000));
  app.add_option("--lr", lr, "SGD learning rate");
  app.add_option("--dtype", dtype, "fp64 or fp32")->check(CLI::IsMember({"fp64", "fp32"}));
  app.add_option("--device", device, "cpu, or gpu (cuBLAS + NCCL; needs a CUDA build)")
      ->check(CLI::IsMember({"cpu", "gpu"}));
  app.add_option("--layers", mc.layers, "transformer layers (default: the plan's, else 4)")->check(CLI::Range(1, 4096));
  app.add_option("--hidden", mc.hidden, "hidden size")->check(CLI::Range(1, 65536));
  app.add_option("--heads", mc.heads, "attention heads")->check(CLI::Range(1, 1024));
  app.add_option("--ffn", mc.ffn, "MLP hidden size")->check(CLI::Range(1, 262144));
  app.add_option("--seq", mc.seq, "sequence length")->check(CLI::Range(1, 65536));
  app.add_option("--vocab", mc.vocab, "vocabulary size")->check(CLI::Range(2, 1000000));
  app.add_option("--seed", mc.seed, "initialisation and data seed");
  app.add_option("--samples", samples, "samples per micro-batch (default: micro-batch size x DP of stage 0)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--warmup", warmup, "iterations left out of the timing")->check(CLI::Range(0, 1000000));
  app.add_flag("--verify", verify, "re-run the same steps on one rank and compare loss and parameters");
  app.add_option("--tolerance", tolerance, "--verify relative tolerance (default 1e-9 fp64, 1e-3 fp32)");
  app.add_option("--checkpoint-dir", checkpoint_dir, "directory of crius-train.ckpt (shared by all nodes)");
  app.add_option("--checkpoint-every", checkpoint_every, "also checkpoint every N iterations")->check(CLI::Range(0, 1000000));
  app.add_option("--checkpoint-signal", signal_name, "signal that asks for a checkpoint and exit")
      ->check(CLI::IsMember({"USR1", "USR2", "TERM", "INT", "HUP"}));
  app.add_flag("--resume", resume, "continue from the checkpoint in --checkpoint-dir when there is one");
  app.add_option("--report", report, "write a JSON report (rank 0)");
  app.add_flag("--no-estimate", no_estimate, "skip measuring this machine and the estimator's prediction");
  std::string calibration_file;
  app.add_option("--calibration", calibration_file,
                 "crius-profile's calibration of this machine (FILE.toml, and FILE.csv beside it): its "
                 "efficiencies and collectives apply to the estimate");
  app.add_flag("-q,--quiet", quiet, "no per-iteration lines");
  app.add_flag("--emulate", emulate_only, "run no model: each iteration lasts the job's estimated iteration time");
  app.add_option("--iter-time", iter_time, "--emulate: seconds per iteration (default: $CRIUS_EST_ITER_S)")
      ->check(CLI::Range(1e-6, 1e6));
  app.add_option("--time-scale", time_scale, "--emulate: emulated seconds per wall second (1)")->check(CLI::Range(1e-3, 1e6));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << "crius-train: " << e.what() << "\n";
    return 2;
  }
  if ((resume || checkpoint_every > 0) && checkpoint_dir.empty()) {
    std::cerr << "crius-train: --resume and --checkpoint-every need --checkpoint-dir\n";
    return 2;
  }
  int sig = SIGUSR1;
  if (signal_name == "USR2") sig = SIGUSR2;
  if (signal_name == "TERM") sig = SIGTERM;
  if (signal_name == "INT") sig = SIGINT;
  if (signal_name == "HUP") sig = SIGHUP;
  struct sigaction sa = {};
  sa.sa_handler = on_checkpoint_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, nullptr);

  if (emulate_only) {
    if (iter_time <= 0) {
      const char* e = std::getenv("CRIUS_EST_ITER_S");
      char* end = nullptr;
      iter_time = e ? std::strtod(e, &end) : 0;
      if (!e || end == e || *end || !(iter_time > 0 && iter_time < 1e6))
        return std::fputs("crius-train: --emulate: no iteration time: give --iter-time, or run in a crius job "
                          "(CRIUS_EST_ITER_S)\n", stderr), 2;
    }
    long long total = steps;
    if (app.count("--steps") == 0) {
      const char* e = std::getenv("CRIUS_ITERS");
      if (e && std::atoll(e) > 0) total = std::atoll(e);
    }
    return emulate(total, iter_time, time_scale, checkpoint_dir, checkpoint_every, resume, quiet);
  }

  MPI_Init(&argc, &argv);
  int wr = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  auto err = [&](const std::string& msg, int code) {
    if (wr == 0) std::fputs(("crius-train: " + msg + "\n").c_str(), stderr);
    return finish(code);
  };
  auto rt = cl::Runtime::init(MPI_COMM_WORLD);
  if (!rt) return err(rt.error(), 2);

  const cl::Plan& plan = (*rt)->plan();
  if (mc.layers == 0) mc.layers = plan.has_layers() ? plan.num_layers() : std::max(4, plan.pp());
  if (samples == 0) samples = plan.micro_batch_size * plan.stages[0].dp;

  std::unique_ptr<tr::Backend> backend;
  if (device == "gpu") {
#ifdef CRIUS_HAVE_CUDA
    std::string why;
    backend = tr::gpu_backend(**rt, &why);
    int ok = backend ? 1 : 0, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) return err("--device gpu: " + (why.empty() ? std::string("no usable GPU on another rank") : why), 1);
#else
    return err("--device gpu: this crius-train was built without CUDA (HAVE_CUDA=0)", 1);
#endif
  } else {
    backend = tr::cpu_backend();
  }

  auto trainer = tr::make_trainer(dtype, mc, **rt, samples, lr, *backend);
  if (!trainer) return err(trainer.error(), 2);
  // The estimator's prediction for this plan on a profile of this machine,
  // measured now by all ranks at once (CPU backend only).
  std::optional<tr::MachineProfile> profile;
  std::optional<tr::Calibration> calibration;
  double uncalibrated_s = 0;  // the estimate without the calibration, for comparison
  crius::Result<crius::estimator::Estimate> predicted = crius::make_error("not computed");
  if (no_estimate) {
    predicted = crius::make_error("--no-estimate");
  } else if (device != "cpu") {
    predicted = crius::make_error("the prediction uses a CPU profile; this run used --device " + device);
  } else {
    const int rows = samples / plan.stages[0].dp * mc.seq;
    profile = tr::measure_profile(*backend, dtype, mc, rows, plan.stages[0].tp, MPI_COMM_WORLD);
    if (!calibration_file.empty()) {
      auto cal = tr::load_calibration(calibration_file);
      if (!cal) return err("--calibration: " + cal.error(), 2);
      calibration = std::move(*cal);
      // Ranks that share cores run at the rate of their count: a calibration of another
      // count still predicts, but the user should know.
      if (calibration->comm && wr == 0) {
        const auto measured = calibration->comm->allocations();
        const std::pair<int, int> here{profile->nodes, profile->ranks_per_node};
        if (!measured.empty() && std::find(measured.begin(), measured.end(), here) == measured.end())
          std::fprintf(stderr,
                       "crius-train: warning: --calibration %s was measured on %d node(s) x %d rank(s), this run "
                       "has %d x %d: ranks that share cores or links run at other rates (crius-profile(1))\n",
                       calibration_file.c_str(), measured.front().first, measured.front().second, here.first,
                       here.second);
      }
    }
    predicted = tr::predict(*profile, mc, dtype, plan, samples, calibration ? &*calibration : nullptr);
    if (calibration)
      if (auto plain = tr::predict(*profile, mc, dtype, plan, samples)) uncalibrated_s = plain->iter_time_s;
  }
  const std::string ckpt = checkpoint_dir.empty() ? "" : checkpoint_dir + "/crius-train.ckpt";
  if (!checkpoint_dir.empty() && wr == 0) mkdir(checkpoint_dir.c_str(), 0755);

  // The reference (one rank, the whole model) for --verify starts from the same state.
  std::unique_ptr<cl::Runtime> ref_rt;
  std::unique_ptr<tr::Trainer> ref;
  std::unique_ptr<tr::Backend> ref_backend = tr::cpu_backend();
  long long start = 0;
  struct stat st_buf;
  bool have_ckpt = resume && stat(ckpt.c_str(), &st_buf) == 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (have_ckpt) {
    auto s = (*trainer)->load(ckpt);
    auto agreed = cl::agree(MPI_COMM_WORLD, s ? crius::Result<void>() : crius::Result<void>(crius::make_error(s.error())));
    if (!agreed) return err(agreed.error(), 1);
    start = *s;
    if (wr == 0) std::cout << "crius-train: resumed from " << ckpt << " at step " << start << std::endl;
  }
  if (verify) {
    cl::Plan one;
    one.stages.push_back(cl::StagePlan{0, plan.has_layers() ? mc.layers : 0, 1, 1});
    one.micro_batches = plan.micro_batches;
    one.micro_batch_size = samples;
    one.schedule = crius::estimator::Schedule{crius::estimator::Schedule::Kind::gpipe, 1};
    auto r = cl::Runtime::init(MPI_COMM_SELF, one);
    if (!r) return err("--verify: " + r.error(), 1);
    ref_rt = std::move(*r);
    auto t = tr::make_trainer(dtype, mc, *ref_rt, samples, lr, *ref_backend);
    if (!t) return err("--verify: " + t.error(), 1);
    ref = std::move(*t);
    if (have_ckpt) {
      auto s = ref->load(ckpt);
      if (!s) return err("--verify: " + s.error(), 1);
    }
  }

  std::vector<double> losses, times, grad_norms;
  long long step = start;
  bool checkpointed_on_signal = false;
  ProgressReporter progress(wr == 0, steps);
  progress.done(start, true);
  for (; step < steps; ++step) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    double loss = (*trainer)->step(step);
    MPI_Barrier(MPI_COMM_WORLD);
    double dt = MPI_Wtime() - t0;
    losses.push_back(loss);
    grad_norms.push_back((*trainer)->grad_norm());
    if (step - start >= warmup) times.push_back(dt);
    progress.done(step + 1);
    if (wr == 0 && !quiet)
      std::printf("crius-train: step %lld loss %.12g grad-norm %.6g time %.3f ms\n", step, loss, grad_norms.back(),
                  dt * 1e3);
    std::fflush(stdout);
    int flag = g_checkpoint, any = 0;
    MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    bool periodic = checkpoint_every > 0 && (step + 1) % checkpoint_every == 0;
    if (any && ckpt.empty()) {
      if (wr == 0) std::cerr << "crius-train: checkpoint signal received but no --checkpoint-dir; stopping\n";
      return finish(1);
    }
    if (any || periodic) {
      auto s = (*trainer)->save(ckpt, step + 1);
      if (!s) return err(s.error(), 1);
      if (wr == 0) std::printf("crius-train: checkpoint %s at step %lld\n", ckpt.c_str(), step + 1);
      std::fflush(stdout);
    }
    if (any) {
      checkpointed_on_signal = true;
      ++step;
      break;
    }
  }

  const int world = (*rt)->world_size();
  if (wr == 0) {
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
    std::printf("crius-train: plan %s; %d ranks; %lld samples x %d tokens per iteration; %s %s\n",
                crius::estimator::plan_text(plan).c_str(), world, (*trainer)->samples_per_step(), mc.seq, dtype.c_str(),
                backend->name().c_str());
    if (median > 0)
      std::printf("crius-train: measured iteration time %.6f s (median of %zu), %.1f samples/s\n", median, sorted.size(),
                  (*trainer)->samples_per_step() / median);
    if (predicted && profile) {
      std::printf("crius-train: estimated iteration time %.6f s (crius estimator, this machine's profile: GEMM %.2f "
                  "GFLOP/s and memory %.2f GB/s per rank, all-reduce %.2f GB/s, latency %.1f us)",
                  predicted->iter_time_s, profile->gemm_gflops, profile->memory_gbs, profile->allreduce_gbs,
                  profile->latency_us);
      if (calibration)
        std::printf(" calibrated by %s (attention %.3g, memory %.3g%s)", calibration->source.c_str(),
                    calibration->attention_efficiency, calibration->memory_efficiency,
                    calibration->comm ? ", measured collectives" : "");
      if (calibration && uncalibrated_s > 0) std::printf(", %.6f s uncalibrated", uncalibrated_s);
      if (median > 0) std::printf("; measured/estimated %.2f", median / predicted->iter_time_s);
      std::printf("\n");
    } else if (!no_estimate) {
      std::printf("crius-train: no estimate: %s\n", predicted.error().c_str());
    }
    if (!report.empty()) {
      nlohmann::json j = {{"plan", crius::estimator::to_json(plan)},
                          {"ranks", world},
                          {"dtype", dtype},
                          {"device", backend->name()},
                          {"samples_per_iteration", (*trainer)->samples_per_step()},
                          {"first_step", start},
                          {"losses", losses},
                          {"grad_norms", grad_norms},
                          {"iteration_times_s", times},
                          {"median_iteration_time_s", median},
                          {"model", {{"vocab", mc.vocab}, {"hidden", mc.hidden}, {"heads", mc.heads}, {"ffn", mc.ffn},
                                     {"seq", mc.seq}, {"layers", mc.layers}}}};
      if (predicted && profile) {
        const auto& b = predicted->breakdown;
        j["estimate"] = {{"iter_time_s", predicted->iter_time_s},
                         {"breakdown", {{"compute", b.compute}, {"tp_comm", b.tp_comm}, {"dp_comm", b.dp_comm},
                                        {"pp_comm", b.pp_comm}, {"bubble", b.bubble}, {"optimizer", b.optimizer}}},
                         {"profile", {{"gemm_gflops", profile->gemm_gflops}, {"memory_gbs", profile->memory_gbs},
                                      {"allreduce_gbs", profile->allreduce_gbs}, {"latency_us", profile->latency_us},
                                      {"nodes", profile->nodes}, {"ranks_per_node", profile->ranks_per_node}}}};
        if (calibration)
          j["estimate"]["calibration"] = {{"file", calibration->source},
                                          {"attention_efficiency", calibration->attention_efficiency},
                                          {"memory_efficiency", calibration->memory_efficiency},
                                          {"collectives", calibration->comm != nullptr},
                                          {"uncalibrated_iter_time_s", uncalibrated_s}};
      } else {
        j["estimate_error"] = predicted ? std::string("no profile") : predicted.error();
      }
      std::ofstream(report) << j.dump(2) << "\n";
    }
  }
  if (checkpointed_on_signal) {
    // Which ranks the signal reached (a launcher that forwards it to some ranks only would go
    // unnoticed: one rank's flag stops them all). A rank still without it waits up to 2 s.
    for (int i = 0; i < 200 && !g_checkpoint; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    int got = g_checkpoint ? 1 : 0, reached = 0;
    MPI_Reduce(&got, &reached, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wr == 0)
      std::printf("crius-train: stopped after the checkpoint signal at step %lld (the signal reached %d of %d ranks)\n",
                  step, reached, (*rt)->world_size());
    return finish(0);
  }

  if (verify) {
    double loss_diff = 0;
    for (long long s = start; s < steps; ++s) {
      double l = ref->step(s);
      double mine = losses[static_cast<size_t>(s - start)];
      loss_diff = std::max(loss_diff, std::abs(mine - l) / std::max(1.0, std::abs(l)));
    }
    double param_diff = (*trainer)->max_param_diff(*ref);
    double worst[2] = {loss_diff, param_diff}, all[2] = {0, 0};
    MPI_Allreduce(worst, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double tol = tolerance > 0 ? tolerance : (dtype == "fp64" ? 1e-9 : 1e-3);
    bool pass = all[0] <= tol && all[1] <= tol && std::isfinite(all[0]) && std::isfinite(all[1]);
    if (wr == 0)
      std::printf("crius-train: verify %s: %lld steps, max relative loss difference %.3g, max relative parameter "
                  "difference %.3g (tolerance %.3g)\n",
                  pass ? "PASSED" : "FAILED", steps - start, all[0], all[1], tol);
    return finish(pass ? 0 : 1);
  }
  return finish(0);
}
