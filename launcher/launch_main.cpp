// crius-launch: starts one rank per GPU for a plan (mpirun or srun), gives each
// rank the torchrun-style and CRIUS_* environment, and reports the first rank
// that failed. The same binary is the per-rank shim (`--rank-exec`): it sets the
// rank's environment, runs the program and reports how it ended.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "launcher/job_record.h"
#include "launcher/layout.h"

#ifndef CRIUS_MPIRUN
#define CRIUS_MPIRUN "mpirun"
#endif

namespace cl = crius::launcher;

namespace {

constexpr const char* kProg = "crius-launch";
constexpr int kExitUsage = 2;
constexpr int kExitFailure = 1;

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::optional<int> env_int(const char* name) {
  auto v = env(name);
  if (!v) return std::nullopt;
  try {
    size_t pos = 0;
    int n = std::stoi(*v, &pos);
    return n;
  } catch (...) {
    return std::nullopt;
  }
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

// ---------------------------------------------------------------- rank shim

volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_terminating = 0;

void forward_to_child(int sig) {
  if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) g_terminating = 1;
  if (g_child > 0) kill(g_child, sig);
}

void set_env(const std::string& k, const std::string& v, bool overwrite) { setenv(k.c_str(), v.c_str(), overwrite); }

int rank_exec(const std::vector<std::string>& command) {
  // Die with the process that started us (mpirun's daemon or slurmstepd), so a
  // killed launcher never leaves ranks behind.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto spec_text = env("CRIUS_LAUNCH_SPEC");
  if (!spec_text) {
    std::cerr << kProg << ": --rank-exec: CRIUS_LAUNCH_SPEC is not set (this mode is internal to crius-launch)\n";
    return kExitUsage;
  }
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(*spec_text);
  } catch (const std::exception& e) {
    std::cerr << kProg << ": --rank-exec: CRIUS_LAUNCH_SPEC: " << e.what() << "\n";
    return kExitUsage;
  }
  auto plan = cl::plan_from_json(spec.at("plan"), "CRIUS_LAUNCH_SPEC");
  if (!plan) {
    std::cerr << kProg << ": " << plan.error() << "\n";
    return kExitUsage;
  }
  auto layout = cl::Layout::make(*plan, spec.at("hosts").get<std::vector<std::string>>(), spec.at("gpus_per_node").get<int>());
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
  const cl::RankInfo& me = layout->rank(*rank);
  const cl::Plan& p = layout->plan();
  const auto& st = p.stages[me.stage];
  std::optional<int> local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK");
  if (!local_rank) local_rank = env_int("SLURM_LOCALID");
  std::optional<int> local_size = env_int("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (local_rank && *local_rank != me.local_rank)
    std::cerr << kProg << ": warning: rank " << me.rank << " was placed as local rank " << *local_rank
              << ", the layout expects " << me.local_rank << " (check --mpi-arg placement options)\n";

  // torchrun's contract: never overwrite what the user set.
  set_env("RANK", std::to_string(me.rank), false);
  set_env("LOCAL_RANK", std::to_string(local_rank.value_or(me.local_rank)), false);
  set_env("WORLD_SIZE", std::to_string(world), false);
  set_env("LOCAL_WORLD_SIZE", std::to_string(local_size.value_or(layout->ranks_on_node(me.node))), false);
  set_env("GROUP_RANK", std::to_string(me.node), false);
  set_env("MASTER_ADDR", spec.at("master_addr").get<std::string>(), false);
  set_env("MASTER_PORT", std::to_string(spec.at("master_port").get<int>()), false);
  // The plan crius-launch runs: always set, so every rank and the runtime agree.
  std::vector<int> tps, dps;
  for (const auto& s : p.stages) {
    tps.push_back(s.tp);
    dps.push_back(s.dp);
  }
  set_env("CRIUS_TP_SIZE", std::to_string(st.tp), true);
  set_env("CRIUS_TP_RANK", std::to_string(me.tp_rank), true);
  set_env("CRIUS_DP_SIZE", std::to_string(st.dp), true);
  set_env("CRIUS_DP_RANK", std::to_string(me.dp_rank), true);
  set_env("CRIUS_PP_SIZE", std::to_string(p.pp()), true);
  set_env("CRIUS_PP_RANK", std::to_string(me.stage), true);
  set_env("CRIUS_STAGE_TP", cl::format_int_list(tps), true);
  set_env("CRIUS_STAGE_DP", cl::format_int_list(dps), true);
  if (p.has_layers()) {
    set_env("CRIUS_STAGE_LAYERS", cl::format_layer_ranges(p), true);
    set_env("CRIUS_LAYERS", std::to_string(st.first_layer) + "-" + std::to_string(st.last_layer), true);
  }
  set_env("CRIUS_MICRO_BATCHES", std::to_string(p.micro_batches), true);
  set_env("CRIUS_MICRO_BATCH_SIZE", std::to_string(p.micro_batch_size), true);
  set_env("CRIUS_SCHEDULE", p.schedule, true);
  set_env("CRIUS_RECOMPUTE", p.recompute, true);
  set_env("CRIUS_RANK_ORDER", "tp-dp-pp", true);
  set_env("CRIUS_PLAN_JSON", cl::to_json(p).dump(), true);
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(cl::plan_hash(p)));
  set_env("CRIUS_PLAN_HASH", hash, true);
  set_env("CRIUS_HOST", me.host, true);
  {
    std::string nodes;
    for (const auto& h : layout->hosts()) nodes += (nodes.empty() ? "" : ",") + h;
    set_env("CRIUS_NODELIST", nodes, true);
    set_env("CRIUS_GPUS_PER_NODE", std::to_string(spec.at("gpus_per_node").get<int>()), true);
  }
  unsetenv("CRIUS_LAUNCH_SPEC");

  struct sigaction sa = {};
  sa.sa_handler = forward_to_child;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
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
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGALRM}) signal(sig, SIG_DFL);
    std::vector<char*> argv;
    for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "crius-launch: rank %d: cannot run '%s': %s\n", me.rank, argv[0], std::strerror(errno));
    _exit(127);
  }
  g_child = pid;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
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

// ---------------------------------------------------------------- launcher

volatile sig_atomic_t g_launcher_child = 0;
volatile sig_atomic_t g_got_term = 0;

void forward_to_launcher(int sig) {
  if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) g_got_term = sig;
  if (g_launcher_child > 0) kill(g_launcher_child, sig);
}

struct Failure {
  int rank = -1;
  std::string host, how;
  int status = 0;
};

int run_and_watch(const std::vector<std::string>& cmd, int kill_after_s) {
  int pfd[2];
  if (pipe(pfd) != 0) {
    std::perror("crius-launch: pipe");
    return kExitFailure;
  }
  struct sigaction sa = {};
  sa.sa_handler = forward_to_launcher;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT}) sigaction(sig, &sa, nullptr);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    std::perror("crius-launch: fork");
    return kExitFailure;
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(pfd[1], 2);
    close(pfd[0]);
    close(pfd[1]);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT}) signal(sig, SIG_DFL);
    std::vector<char*> argv;
    for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "crius-launch: cannot run '%s': %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  g_launcher_child = pid;
  close(pfd[1]);
  const std::regex line_re(R"(^crius-launch: rank (\d+) on host (\S+) failed: (.*) \[status (\d+)\]$)");
  std::optional<Failure> first;
  std::chrono::steady_clock::time_point failed_at;
  int escalation = 0;  // 0 none, 1 SIGTERM sent, 2 SIGKILL sent
  std::string buf;
  bool eof = false;
  int status = 0;
  bool exited = false;
  auto handle_line = [&](const std::string& line) {
    std::smatch m;
    if (!first && std::regex_match(line, m, line_re)) {
      first = Failure{std::stoi(m[1]), m[2], m[3], std::stoi(m[4])};
      failed_at = std::chrono::steady_clock::now();
    }
  };
  while (!eof || !exited) {
    if (!eof) {
      pollfd p = {pfd[0], POLLIN, 0};
      int n = poll(&p, 1, 200);
      if (n > 0) {
        char tmp[4096];
        ssize_t got = read(pfd[0], tmp, sizeof tmp);
        if (got > 0) {
          (void)!write(2, tmp, static_cast<size_t>(got));
          buf.append(tmp, static_cast<size_t>(got));
          size_t nl;
          while ((nl = buf.find('\n')) != std::string::npos) {
            handle_line(buf.substr(0, nl));
            buf.erase(0, nl + 1);
          }
        } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
          eof = true;
        }
      }
    } else {
      usleep(50000);
    }
    if (!exited) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        exited = true;
        g_launcher_child = 0;
        // Drain what is left without blocking on ranks' orphaned pipes.
        int fl = fcntl(pfd[0], F_GETFL);
        fcntl(pfd[0], F_SETFL, fl | O_NONBLOCK);
      }
    }
    if (exited && !eof) {
      char tmp[4096];
      ssize_t got;
      while ((got = read(pfd[0], tmp, sizeof tmp)) > 0) {
        (void)!write(2, tmp, static_cast<size_t>(got));
        buf.append(tmp, static_cast<size_t>(got));
      }
      size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        handle_line(buf.substr(0, nl));
        buf.erase(0, nl + 1);
      }
      eof = true;
    }
    // A rank failed: the MPI launcher should stop the rest; make sure it does.
    if (first && !exited) {
      double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - failed_at).count();
      if (escalation == 0 && since > kill_after_s * 0.5) {
        killpg(pid, SIGTERM);
        escalation = 1;
      } else if (escalation == 1 && since > kill_after_s * 0.8) {
        killpg(pid, SIGKILL);
        escalation = 2;
      }
    }
  }
  close(pfd[0]);
  if (first) {
    std::fprintf(stderr, "crius-launch: rank %d on host %s failed (%s); the job was stopped; exit status %d\n",
                 first->rank, first->host.c_str(), first->how.c_str(), first->status);
    return first->status;
  }
  if (g_got_term) return 128 + g_got_term;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) return kExitFailure;
  std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                      : "killed by " + signal_name(WTERMSIG(status));
  std::fprintf(stderr, "crius-launch: %s ended with %s and no rank reported a failure\n", cmd[0].c_str(), how.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read_file(const std::string& path, bool& ok) {
  std::ifstream in(path);
  ok = static_cast<bool>(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string self_path(const char* argv0) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
  return argv0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> left, command;
  bool seen_dashdash = false;
  for (int i = 1; i < argc; ++i) {
    if (!seen_dashdash && std::strcmp(argv[i], "--") == 0) {
      seen_dashdash = true;
      continue;
    }
    (seen_dashdash ? command : left).push_back(argv[i]);
  }

  CLI::App app{"crius-launch: start one rank per GPU for a crius plan and run PROGRAM on every rank", kProg};
  std::string plan_file, tp, dp, stage_layers, launcher = "mpirun", schedule, recompute, master_addr;
  std::string mpirun = env("CRIUS_MPIRUN").value_or(CRIUS_MPIRUN);
  int pp = 0, layers = 0, ntasks = 0, gpus_per_node = 0, micro_batches = 0, micro_batch_size = 0, master_port = 0;
  int kill_timeout = 10;
  bool dry_run = false, json = false, megatron = false, rank_exec_mode = false, verbose = false;
  std::vector<std::string> mpi_args;
  app.add_option("--plan", plan_file, "plan JSON (crius-estimate --json output, a cell or a plan object)");
  app.add_option("--tp", tp, "TP size, or a comma list per stage");
  app.add_option("--pp", pp, "pipeline stages");
  app.add_option("--dp", dp, "DP size, or a comma list per stage");
  app.add_option("--stage-layers", stage_layers, "layer range per stage, e.g. 0-11,12-23");
  app.add_option("--layers", layers, "total layers (split evenly over stages)");
  app.add_option("--micro-batches", micro_batches, "micro-batches per iteration (overrides the plan)");
  app.add_option("--micro-batch-size", micro_batch_size, "samples per micro-batch (overrides the plan)");
  app.add_option("--schedule", schedule, "gpipe, 1f1b or interleaved:V (overrides the plan)");
  app.add_option("--recompute", recompute, "none, selective or full (overrides the plan)");
  app.add_option("-n,--ntasks", ntasks, "number of ranks (outside Slurm; default: the plan's world size)");
  app.add_option("--gpus-per-node", gpus_per_node, "ranks per node (block placement)");
  app.add_option("--launcher", launcher, "mpirun or srun")->check(CLI::IsMember({"mpirun", "srun"}));
  app.add_option("--mpirun", mpirun, "the mpirun program");
  app.add_option("--mpi-arg", mpi_args, "extra argument for mpirun/srun (repeatable)");
  app.add_option("--master-addr", master_addr, "MASTER_ADDR (default: first node)");
  app.add_option("--master-port", master_port, "MASTER_PORT (default: from SLURM_JOB_ID)");
  app.add_option("--kill-timeout", kill_timeout, "seconds after a rank fails until every rank is stopped");
  app.add_flag("--dry-run", dry_run, "print the rank table and exit");
  app.add_flag("--json", json, "with --dry-run: print the rank table as JSON");
  app.add_flag("--print-megatron-args", megatron, "print the Megatron-LM flags for the plan and exit");
  app.add_flag("-v,--verbose", verbose, "print the launch command");
  app.add_flag("--rank-exec", rank_exec_mode, "internal: per-rank shim run by mpirun/srun");
  try {
    std::vector<std::string> rev(left.rbegin(), left.rend());
    app.parse(rev);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::cerr << kProg << ": " << e.what() << "\n";
    return kExitUsage;
  }
  if (rank_exec_mode) {
    if (command.empty()) {
      std::cerr << kProg << ": --rank-exec needs -- PROGRAM\n";
      return kExitUsage;
    }
    return rank_exec(command);
  }
  if (json) dry_run = true;
  if (command.empty() && !dry_run && !megatron) {
    std::cerr << kProg << ": no program given (usage: crius-launch [OPTIONS] -- PROGRAM [ARGS...])\n";
    return kExitUsage;
  }
  if (kill_timeout < 1) {
    std::cerr << kProg << ": --kill-timeout: must be >= 1\n";
    return kExitUsage;
  }

  // ---- the plan: --plan, then flags, then the CRIUS_* job environment, then -n ranks of pure DP
  cl::Plan plan;
  bool shape_flags = !tp.empty() || pp > 0 || !dp.empty() || !stage_layers.empty() || layers > 0;
  if (!plan_file.empty() && shape_flags) {
    std::cerr << kProg << ": --plan and --tp/--pp/--dp/--stage-layers exclude each other\n";
    return kExitUsage;
  }
  if (!plan_file.empty()) {
    bool ok = false;
    std::string text = read_file(plan_file, ok);
    if (!ok) {
      std::cerr << kProg << ": --plan: cannot read '" << plan_file << "': " << std::strerror(errno) << "\n";
      return kExitUsage;
    }
    auto p = cl::plan_from_json_text(text, plan_file);
    if (!p) {
      std::cerr << kProg << ": " << p.error() << "\n";
      return kExitUsage;
    }
    plan = *p;
  } else if (shape_flags) {
    auto p = cl::plan_from_shape(tp.empty() ? "1" : tp, pp > 0 ? pp : 1, dp.empty() ? "1" : dp, stage_layers, layers);
    if (!p) {
      std::cerr << kProg << ": " << p.error() << "\n";
      return kExitUsage;
    }
    plan = *p;
  } else {
    // A job criusd moved after submission: its record has the plan of the new Cell.
    std::string moved_cell;
    std::optional<std::string> moved;
    if (const char* job = std::getenv("SLURM_JOB_ID"); job && std::getenv("CRIUS_PLAN_JSON"))
      moved = crius::launcher::moved_plan_json(job, &moved_cell);
    if (moved) {
      std::cerr << kProg << ": criusd moved this job to Cell " << moved_cell
                << "; running its plan from the job record, not the CRIUS_* environment\n";
      setenv("CRIUS_PLAN_JSON", moved->c_str(), 1);
    }
    auto p = cl::plan_from_env(cl::process_env());
    if (!p) {
      std::cerr << kProg << ": " << p.error() << "\n";
      return kExitUsage;
    }
    if (p->has_value()) {
      plan = **p;
    } else {
      int n = ntasks;
      if (n <= 0) n = env_int("SLURM_NTASKS").value_or(0);
      if (n <= 0) {
        std::cerr << kProg << ": no plan: give --plan FILE, --tp/--pp/--dp, -n N, or run in a job submitted with crius "
                               "options (CRIUS_PP_SIZE, CRIUS_STAGE_TP, ... in the environment)\n";
        return kExitUsage;
      }
      auto q = cl::plan_from_shape("1", 1, std::to_string(n), "", 0);
      plan = *q;
    }
  }
  if (micro_batches > 0) plan.micro_batches = micro_batches;
  if (micro_batch_size > 0) plan.micro_batch_size = micro_batch_size;
  if (!schedule.empty()) plan.schedule = schedule;
  if (!recompute.empty()) plan.recompute = recompute;
  if (auto r = cl::validate(plan, "plan"); !r) {
    std::cerr << kProg << ": " << r.error() << "\n";
    return kExitUsage;
  }
  const int world = plan.world_size();
  if (ntasks > 0 && ntasks != world) {
    std::cerr << kProg << ": -n " << ntasks << " does not match the plan's " << world << " ranks ("
              << cl::canonical(plan) << ")\n";
    return kExitUsage;
  }

  if (megatron) {
    auto a = cl::megatron_args(plan);
    if (!a) {
      std::cerr << kProg << ": " << a.error() << "\n";
      return kExitFailure;
    }
    std::string line;
    for (const auto& x : *a) line += (line.empty() ? "" : " ") + x;
    std::cout << line << "\n";
    return 0;
  }

  // ---- hosts and placement
  const bool in_slurm = env("SLURM_JOB_ID").has_value() && env("SLURM_JOB_NODELIST").has_value();
  std::vector<std::string> hosts;
  if (in_slurm) {
    auto h = cl::expand_hostlist(*env("SLURM_JOB_NODELIST"));
    if (!h) {
      std::cerr << kProg << ": SLURM_JOB_NODELIST: " << h.error() << "\n";
      return kExitFailure;
    }
    hosts = *h;
    if (gpus_per_node <= 0) gpus_per_node = env_int("CRIUS_CELL_GPUS_PER_NODE").value_or(0);
    if (gpus_per_node <= 0) gpus_per_node = env_int("SLURM_GPUS_ON_NODE").value_or(0);
    if (gpus_per_node <= 0 && env("SLURM_GPUS_PER_NODE")) {
      std::string g = *env("SLURM_GPUS_PER_NODE");  // "8" or "a100:8"
      auto c = g.rfind(':');
      try {
        gpus_per_node = std::stoi(c == std::string::npos ? g : g.substr(c + 1));
      } catch (...) {
      }
    }
    if (gpus_per_node <= 0) gpus_per_node = (world + static_cast<int>(hosts.size()) - 1) / static_cast<int>(hosts.size());
  } else {
    hosts = {hostname()};
    if (gpus_per_node <= 0) gpus_per_node = world;
    else hosts.resize((world + gpus_per_node - 1) / gpus_per_node, hosts[0]);
  }
  auto layout = cl::Layout::make(plan, hosts, gpus_per_node);
  if (!layout) {
    std::cerr << kProg << ": " << layout.error() << "\n";
    return kExitFailure;
  }
  if (dry_run) {
    if (json) std::cout << layout->to_json().dump(2) << "\n";
    else std::cout << layout->table();
    return 0;
  }

  if (master_addr.empty()) master_addr = env("MASTER_ADDR").value_or(in_slurm ? hosts[0] : "127.0.0.1");
  if (master_port <= 0) master_port = env_int("MASTER_PORT").value_or(0);
  if (master_port <= 0) {
    auto job = env_int("SLURM_JOB_ID");
    master_port = job ? 20000 + (*job % 20000) : 29500;
  }
  nlohmann::json spec = {{"plan", cl::to_json(plan)},
                         {"hosts", hosts},
                         {"gpus_per_node", gpus_per_node},
                         {"master_addr", master_addr},
                         {"master_port", master_port}};
  setenv("CRIUS_LAUNCH_SPEC", spec.dump().c_str(), 1);

  const std::string self = self_path(argv[0]);
  std::vector<std::string> cmd;
  const int nodes_used = (world + gpus_per_node - 1) / gpus_per_node;
  if (launcher == "srun") {
    cmd = {"srun", "--mpi=pmix", "--export=ALL", "--kill-on-bad-exit=1", "--distribution=block", "--overcommit",
           "-N", std::to_string(nodes_used), "-n", std::to_string(world),
           "--ntasks-per-node=" + std::to_string(std::min(gpus_per_node, world))};
  } else {
    cmd = {mpirun, "-np", std::to_string(world)};
    if (geteuid() == 0) cmd.push_back("--allow-run-as-root");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    // Slurm's slot count is its task count, not the GPU count: always oversubscribe there.
    if (in_slurm || world > cores) cmd.push_back("--oversubscribe");
    // Busy-polling ranks on shared cores slow each other down by 10x and more.
    if (world > cores && !env("OMPI_MCA_mpi_yield_when_idle"))
      cmd.insert(cmd.end(), {"--mca", "mpi_yield_when_idle", "1"});
    cmd.insert(cmd.end(), {"--bind-to", "none"});
    if (in_slurm) cmd.insert(cmd.end(), {"--map-by", "ppr:" + std::to_string(gpus_per_node) + ":node"});
    cmd.insert(cmd.end(), {"-x", "CRIUS_LAUNCH_SPEC"});
  }
  cmd.insert(cmd.end(), mpi_args.begin(), mpi_args.end());
  cmd.insert(cmd.end(), {self, "--rank-exec", "--"});
  cmd.insert(cmd.end(), command.begin(), command.end());
  if (verbose) {
    std::string line;
    for (const auto& c : cmd) line += (line.empty() ? "" : " ") + c;
    std::cerr << kProg << ": " << line << "\n";
  }
  return run_and_watch(cmd, kill_timeout);
}
