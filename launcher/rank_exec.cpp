// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-launch --rank-exec: the per-rank shim (launch.h).  It sets the rank's
// environment (rank_env.h), runs the program, forwards signals to it, and reports
// how it ended in the line run_and_watch reads.
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "common/util.h"
#include "job/record.h"
#include "launcher/launch.h"
#include "launcher/progress_scan.h"
#include "launcher/rank_env.h"

namespace crius::launcher {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::optional<int> env_int(const char* name) {
  auto v = env(name);
  if (!v) return std::nullopt;
  auto n = util::to_int(util::trim(*v));
  if (!n || *n < INT_MIN || *n > INT_MAX) return std::nullopt;
  return static_cast<int>(*n);
}

std::string hostname() {
  if (auto n = env("SLURMD_NODENAME")) return *n;
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string signal_name(int sig) {
  const char* d = sigabbrev_np(sig);
  return d ? std::string("SIG") + d : "signal " + std::to_string(sig);
}

namespace {

volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_terminating = 0;
// Requests (criusd's checkpoint signal, relayed by crius-launch) rather than orders to stop:
// passed on by the main loop as the job's checkpoint signal, and only to a program that handles
// it. The program starts with them ignored, so one that reaches it another way (Slurm signals
// every process of a step) cannot kill it either.
constexpr int kRequests[] = {SIGUSR1, SIGUSR2};
volatile sig_atomic_t g_requested[2] = {0, 0};

void forward_to_child(int sig) {
  for (int i = 0; i < 2; ++i)
    if (sig == kRequests[i]) {
      g_requested[i] = 1;
      return;
    }
  if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) g_terminating = 1;
  if (g_child > 0) kill(g_child, sig);
}

// Whether process `pid` has a handler for `sig` (the SigCgt mask of /proc/PID/status); false
// where that cannot be read.
bool handles(pid_t pid, int sig) {
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/status").c_str(), "r");
  if (!f) return false;
  char line[256];
  unsigned long long caught = 0;
  bool found = false;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "SigCgt: %llx", &caught) == 1) {
      found = true;
      break;
    }
  std::fclose(f);
  return found && (caught >> (sig - 1) & 1ULL);
}

}  // namespace

int rank_exec(const std::vector<std::string>& command) {
  // Die with the process that started us (mpirun's daemon or slurmstepd), so a
  // killed launcher never leaves ranks behind.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto spec_text = env("CRIUS_LAUNCH_SPEC");
  if (!spec_text) {
    std::cerr << kProg << ": --rank-exec: CRIUS_LAUNCH_SPEC is not set (this mode is internal to crius-launch)\n";
    return kExitUsage;
  }
  auto spec_json = nlohmann::json::parse(*spec_text, nullptr, false);
  auto spec = spec_json.is_discarded() ? Result<LaunchSpec>(make_error("CRIUS_LAUNCH_SPEC: not valid JSON"))
                                       : launch_spec_from_json(spec_json, "CRIUS_LAUNCH_SPEC");
  if (!spec) {
    std::cerr << kProg << ": --rank-exec: " << spec.error() << "\n";
    return kExitUsage;
  }
  auto layout = Layout::make(spec->plan, spec->hosts, spec->gpus_per_node);
  if (!layout) {
    std::cerr << kProg << ": " << layout.error() << "\n";
    return kExitUsage;
  }
  std::optional<int> rank;
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "PMI_RANK"})
    if (!rank) rank = env_int(v);
  std::optional<int> size;
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "PMI_SIZE"})
    if (!size) size = env_int(v);
  if (!rank) {
    std::cerr << kProg << ": --rank-exec: no rank in the environment (OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID)\n";
    return kExitUsage;
  }
  const int world = layout->world_size();
  if (*rank < 0 || *rank >= world || (size && *size != world)) {
    std::cerr << kProg << ": --rank-exec: rank " << *rank << " of " << size.value_or(-1)
              << " does not fit the plan's " << world << " ranks\n";
    return kExitUsage;
  }
  const RankInfo& me = layout->rank(*rank);
  std::optional<int> local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK");
  if (!local_rank) local_rank = env_int("SLURM_LOCALID");
  std::optional<int> local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (local_rank && *local_rank != me.local_rank)
    std::cerr << kProg << ": warning: rank " << me.rank << " was placed as local rank " << *local_rank
              << ", the layout expects " << me.local_rank << " (check --mpi-arg placement options)\n";
  const RankEnv renv = rank_env(*layout, *spec, *rank, local_rank, local_size);
  // torchrun's contract, always the layout's: a RANK left in the batch shell must not reach every rank.
  for (const auto& [k, v] : renv.torchrun) setenv(k.c_str(), v.c_str(), 1);
  for (const auto& [k, v] : renv.crius) setenv(k.c_str(), v.c_str(), 1);
  // mpirun's ranks inherit the batch shell's Slurm rank (task 0 of the batch step): give them
  // their own, as srun would.
  if (env("OMPI_COMM_WORLD_RANK") && env("SLURM_JOB_ID")) {
    setenv("SLURM_PROCID", std::to_string(me.rank).c_str(), 1);
    setenv("SLURM_LOCALID", std::to_string(local_rank.value_or(me.local_rank)).c_str(), 1);
    setenv("SLURM_NODEID", std::to_string(me.node).c_str(), 1);
    setenv("SLURM_NTASKS", std::to_string(world).c_str(), 1);
  }
  unsetenv("CRIUS_LAUNCH_SPEC");
  if (spec->bind_cpus) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
      std::perror("crius-launch: --bind-cpus: sched_getaffinity");
      return kExitFailure;
    }
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
    cpu_set_t mine;
    CPU_ZERO(&mine);
    for (int c : cpu_share(cpus, me.local_rank, layout->ranks_on_node(me.node))) CPU_SET(c, &mine);
    if (sched_setaffinity(0, sizeof mine, &mine) != 0) {
      std::perror("crius-launch: --bind-cpus: sched_setaffinity");
      return kExitFailure;
    }
  }

  // The job's checkpoint signal: a name (USR1, TERM, ...) or none; unset, the request's own.
  std::optional<int> checkpoint;
  if (auto c = env("CRIUS_CHECKPOINT_SIGNAL")) {
    auto n = job::parse_checkpoint_signal(*c);
    if (!n) {
      std::cerr << kProg << ": CRIUS_CHECKPOINT_SIGNAL: " << n.error() << "\n";
      return kExitUsage;
    }
    checkpoint = *n;
  }
  // The framework's own progress lines (CRIUS_PROGRESS_REGEX, crius-launch --progress-regex): the
  // program's output passes through here and each new step count goes on as crius's line.
  std::optional<ProgressScan> scan;
  if (auto re = env("CRIUS_PROGRESS_REGEX")) {
    std::optional<long long> total;
    if (auto it = env("CRIUS_ITERS")) total = util::to_int(*it);
    auto sc = ProgressScan::make(*re, total);
    if (!sc) {
      std::cerr << kProg << ": CRIUS_PROGRESS_REGEX: " << sc.error() << "\n";
      return kExitUsage;
    }
    scan = std::move(*sc);
  }
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (scan && (pipe(out_pipe) != 0 || pipe(err_pipe) != 0)) {
    std::perror("crius-launch: pipe");
    return kExitFailure;
  }
  struct sigaction sa = {};
  sa.sa_handler = forward_to_child;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // a request interrupts waitpid below, which passes it on
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGALRM})
    sigaction(sig, &sa, nullptr);

  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("crius-launch: fork");
    return kExitFailure;
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCONT, SIGALRM}) signal(sig, SIG_DFL);
    for (int sig : kRequests) signal(sig, SIG_IGN);  // a handler the program installs replaces it
    if (scan) {
      dup2(out_pipe[1], 1);
      dup2(err_pipe[1], 2);
      for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    }
    std::vector<char*> argv;
    for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "crius-launch: rank %d: cannot run '%s': %s\n", me.rank, argv[0], std::strerror(errno));
    _exit(127);
  }
  g_child = pid;
  int status = 0;
  bool told = false;
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  if (scan) close(out_pipe[1]), close(err_pipe[1]);
  bool reaped = false;
  // Copies what the program wrote to where it would have gone; false once both streams ended
  // (or the program ended and what it left behind, a process holding the pipes, stays quiet).
  auto relay = [&]() -> bool {
    if (fds[0].fd < 0 && fds[1].fd < 0) return false;
    const int ready = poll(fds, 2, 500);
    if (ready < 0) return true;  // a signal: the loop passes it on
    if (ready == 0) {
      if (!reaped && waitpid(pid, &status, WNOHANG) == pid) reaped = true;
      if (reaped)
        for (auto& f : fds)
          if (f.fd >= 0) close(f.fd), f.fd = -1;
      return true;
    }
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        if (n < 0 && errno == EINTR) continue;
        close(fds[i].fd);
        fds[i].fd = -1;
        continue;
      }
      for (ssize_t w = 0; w < n;) {
        const ssize_t k = write(i + 1, buf + w, static_cast<std::size_t>(n - w));
        if (k <= 0 && errno != EINTR) break;
        if (k > 0) w += k;
      }
      if (auto p = scan->feed(std::string_view(buf, static_cast<std::size_t>(n)))) {
        const std::string line = job::progress_line(*p) + "\n";
        (void)!write(2, line.data(), line.size());
      }
    }
    return true;
  };
  for (;;) {
    for (int i = 0; i < 2; ++i) {
      if (!g_requested[i]) continue;
      g_requested[i] = 0;
      // The job's own checkpoint signal (crius-launch --checkpoint-signal), else the one that came.
      const int want = checkpoint.value_or(kRequests[i]);
      if (want == 0) continue;  // "none": the job saves on its own schedule
      if (handles(pid, want)) {
        kill(pid, want);
      } else if (!told) {
        told = true;
        std::fprintf(stderr,
                     "crius-launch: rank %d: checkpoint request not passed on as %s: '%s' has no handler for it "
                     "and would die of it (crius-launch(1), CHECKPOINTS)\n",
                     me.rank, signal_name(want).c_str(), command[0].c_str());
      }
    }
    if (scan && relay()) continue;
    if (reaped || waitpid(pid, &status, 0) >= 0 || errno != EINTR) break;
  }
  const std::string host = hostname();
  int code = 0;
  std::string how;
  if (WIFEXITED(status)) {
    code = WEXITSTATUS(status);
    how = "exit status " + std::to_string(code);
  } else if (WIFSIGNALED(status)) {
    code = 128 + WTERMSIG(status);
    how = "killed by " + signal_name(WTERMSIG(status));
  }
  if (code != 0) {
    // The launcher parses this line: keep its shape.
    std::fprintf(stderr, "crius-launch: rank %d on host %s %s: %s [status %d]\n", me.rank, host.c_str(),
                 g_terminating ? "stopped" : "failed", how.c_str(), code);
    std::fflush(stderr);
  }
  return code;
}

}  // namespace crius::launcher
