// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-launch: starts one rank per GPU for a plan (mpirun or srun), gives each
// rank the torchrun-style and CRIUS_* environment, and reports the first rank
// that failed (crius-launch(1)).  The same binary is the per-rank shim
// (`--rank-exec`, rank_exec.cpp); the watcher is watch.cpp.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <system_error>

#include <CLI/CLI.hpp>

#include "common/util.h"
#include "job/env.h"
#include "launcher/launch.h"
#include "launcher/layout.h"
#include "launcher/megatron.h"
#include "launcher/plan_source.h"
#include "launcher/progress_scan.h"
#include "launcher/rank_env.h"
#include "launcher/torchtitan.h"
#include "slurm_plugin/job_comment.h"
#include "slurm_plugin/load_record.h"

#ifndef CRIUS_MPIRUN
#define CRIUS_MPIRUN "mpirun"
#endif
#ifndef CRIUS_SLURM_SYSCONFDIR
#define CRIUS_SLURM_SYSCONFDIR "/etc/slurm"
#endif

namespace {

std::string self_path(const char* argv0) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) return std::string(buf, static_cast<size_t>(n));
  return argv0;
}

// `preferred` if no socket on this host holds it now, else a port the kernel says is free:
// another user's process on a shared node may hold the port a job id maps to.
int free_port(int preferred) {
  auto try_bind = [](int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    socklen_t len = sizeof a;
    int got = -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      got = ntohs(a.sin_port);
    ::close(fd);
    return got;
  };
  const int p = try_bind(preferred);
  if (p > 0) return p;
  const int any = try_bind(0);
  return any > 0 ? any : preferred;
}

// --rank-shim sh: each rank's environment from POSIX sh alone, for a container image that holds
// neither crius nor libslurm (crius-launch(1), CONTAINERS). The same values rank_env() gives a
// uniform plan in block placement (tests/mpi/launch_container.sh compares them); the checkpoint
// requests are ignored unless the program handles them, and there is no progress scan.
constexpr const char* kShellShim = R"SH(trap '' USR1 USR2
unset CRIUS_LAUNCH_SPEC
r=${SLURM_PROCID:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}}
[ -n "$r" ] || { echo "crius-launch: rank shim: no rank in the environment (SLURM_PROCID, OMPI_COMM_WORLD_RANK)" >&2; exit 2; }
g=$CRIUS_GPUS_PER_NODE node=$((r / g)) left=$((WORLD_SIZE - r / g * g))
[ "$left" -lt "$g" ] || left=$g
export RANK=$r LOCAL_RANK=$((r % g)) LOCAL_WORLD_SIZE=$left GROUP_RANK=$node
c=${CRIUS_CP_SIZE:-1}
export CRIUS_TP_RANK=$((r % CRIUS_TP_SIZE)) CRIUS_CP_RANK=$((r / CRIUS_TP_SIZE % c))
export CRIUS_DP_RANK=$((r / (CRIUS_TP_SIZE * c) % CRIUS_DP_SIZE)) CRIUS_PP_RANK=$((r / (CRIUS_TP_SIZE * c * CRIUS_DP_SIZE)))
i=0 ifs=$IFS IFS=,
for x in $CRIUS_NODELIST; do [ "$i" = "$node" ] && export CRIUS_HOST="$x"; i=$((i + 1)); done
i=0
for x in ${CRIUS_STAGE_LAYERS:-}; do [ "$i" = "$CRIUS_PP_RANK" ] && export CRIUS_LAYERS="$x"; i=$((i + 1)); done
IFS=$ifs
exec "$@")SH";

// The plan handed to the framework that runs PROGRAM (crius-launch(1), FRAMEWORKS): the arguments
// to append to its command, or an error that stops the job before any rank starts.
crius::Result<std::vector<std::string>> hand_over(const crius::estimator::Plan& plan, const std::string& framework_arg,
                                                  const std::string& model_arg, const std::string& model_spec,
                                                  const std::string& cluster_file,
                                                  const std::vector<std::string>& command) {
  namespace est = crius::estimator;
  using crius::make_error;
  auto f = est::parse_framework(framework_arg);
  if (!f) return make_error("--framework: " + f.error());
  if (f->kind == est::Framework::Kind::crius_train) return std::vector<std::string>{};
  // A name alone ("megatron", "torchtitan"): the release the plan was made for.
  if (framework_arg.find(':') == std::string::npos && plan.framework.kind == f->kind) f = plan.framework;
  if (model_arg.empty())
    return make_error("--framework " + framework_arg + ": which model? The plan does not say; give --model (a catalogue "
                      "id or a model file)");
  auto cluster = est::load_cluster(cluster_file);
  if (!cluster) return make_error("--framework " + framework_arg + ": " + cluster.error());
  // A model file the job was submitted with travels as its spec (crius(7)); the file need not be here.
  auto model = model_spec.empty() ? cluster->models.resolve(model_arg) : est::parse_model_spec(model_spec, model_arg);
  if (!model) return make_error("--model: " + model.error());
  const est::StackSwitches stack = cluster->gpus.runtime(plan.runtime).stack;
  auto args = f->kind == est::Framework::Kind::torchtitan ? crius::launcher::torchtitan_args(plan, *model, stack, *f)
                                                          : crius::launcher::megatron_args(plan, *model, stack, *f);
  if (!args)
    return make_error("cannot hand the plan to " + est::to_string(*f) + ": " + args.error() +
                      (plan.framework == *f ? "" : " (the plan was made for " + est::to_string(plan.framework) +
                                                       ": submit with --crius-framework " + est::to_string(*f) + ")"));
  if (auto ok = crius::launcher::check_command(command, *args); !ok) return make_error(ok.error());
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace crius;
  using namespace crius::launcher;
  namespace est = crius::estimator;
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
  std::string rank_shim = "crius", mpi_type, framework, checkpoint_signal, progress_regex, model_arg, model_spec, cluster_file = crius::estimator::default_cluster_file(CRIUS_SLURM_SYSCONFDIR);
  std::string mpirun = env("CRIUS_MPIRUN").value_or(CRIUS_MPIRUN);
  int pp = 0, layers = 0, ntasks = 0, gpus_per_node = 0, micro_batches = 0, micro_batch_size = 0, master_port = 0;
  int kill_timeout = 10;
  int checkpoint_sig = 0;
  const bool slurm_here = slurm::slurm_config_reachable(CRIUS_SLURM_SYSCONFDIR);
  std::optional<std::pair<std::string, est::Plan>> prev;  // the Cell and plan its checkpoint was saved under
  std::string pre_resume;
  bool bind_cpus = false, dry_run = false, json = false, megatron = false, print_args = false, rank_exec_mode = false, verbose = false;
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
  app.add_option("--rank-shim", rank_shim,
                 "what starts each rank's program: crius (crius-launch --rank-exec, the default) or sh (POSIX sh "
                 "alone, for a container image without crius; uniform plans)");
  app.add_option("--mpi", mpi_type, "with --launcher srun: its --mpi (default: SLURM_MPI_TYPE, else pmix)");
  app.add_option("--mpi-arg", mpi_args, "extra argument for mpirun/srun (repeatable)");
  app.add_option("--master-addr", master_addr, "MASTER_ADDR (default: the first node's NodeAddr)");
  app.add_option("--master-port", master_port, "MASTER_PORT (default: from SLURM_JOB_ID)");
  app.add_option("--kill-timeout", kill_timeout, "seconds after a rank fails until every rank is stopped");
  app.add_flag("--dry-run", dry_run, "print the rank table and exit");
  app.add_flag("--json", json, "with --dry-run: print the rank table as JSON");
  app.add_option("--framework", framework,
                 "hand the plan to PROGRAM's framework: megatron[:VERSION] appends Megatron-LM's arguments, "
                 "torchtitan[:VERSION] torchtitan's, crius-train none");
  app.add_option("--checkpoint-signal", checkpoint_signal,
                 "the signal PROGRAM saves a checkpoint on (USR1, USR2, TERM, INT, HUP, URG or none; default: the "
                 "job's record, else the framework's)");
  app.add_option("--progress-regex", progress_regex,
                 "read progress from every rank's output: megatron, torchtitan or a regex (group 1 the steps "
                 "done, group 2 the total; default: --framework's)");
  app.add_option("--pre-resume", pre_resume,
                 "a shell command run once, before any rank starts, when the job resumes under another plan "
                 "than its checkpoint was saved under (CRIUS_PREV_PLAN_JSON, CRIUS_PREV_CELL)");
  app.add_option("--model", model_arg, "the model for --framework (default: the job's, or the --plan document's)");
  app.add_option("--cluster", cluster_file, "cluster file with the model and GPU catalogues (default " + cluster_file + ")");
  app.add_flag("--print-args", print_args, "print the arguments --framework appends for the plan and exit");
  app.add_flag("--print-megatron-args", megatron, "--print-args with --framework megatron (the default framework here)");
  app.add_flag("--bind-cpus", bind_cpus,
               "bind each rank to its own equal share of its node's CPUs (ranks standing in for GPUs)");
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
  if (command.empty() && !dry_run && !megatron && !print_args) {
    std::cerr << kProg << ": no program given (usage: crius-launch [OPTIONS] -- PROGRAM [ARGS...])\n";
    return kExitUsage;
  }
  if (kill_timeout < 1) {
    std::cerr << kProg << ": --kill-timeout: must be >= 1\n";
    return kExitUsage;
  }

  // ---- the plan: --plan, then flags, then the job's record (or CRIUS_PLAN_JSON), then -n ranks of DP
  est::Plan plan;
  LaunchSpec spec;
  int record_gpn = 0;  // the Cell's GPUs per node when the plan is the record's
  std::optional<slurm::JobSeen> job_seen;  // the job as its record's read saw it
  bool shape_flags = !tp.empty() || pp > 0 || !dp.empty() || !stage_layers.empty() || layers > 0;
  if (!plan_file.empty() && shape_flags) {
    std::cerr << kProg << ": --plan and --tp/--pp/--dp/--stage-layers exclude each other\n";
    return kExitUsage;
  }
  if (!plan_file.empty()) {
    auto text = util::read_file(plan_file);
    if (!text) {
      std::cerr << kProg << ": --plan: cannot read '" << plan_file << "': " << text.error() << "\n";
      return kExitUsage;
    }
    auto p = plan_from_document_text(*text, plan_file);
    if (!p) {
      std::cerr << kProg << ": " << p.error() << "\n";
      return kExitUsage;
    }
    plan = *p;
    // crius-estimate --json names the model it estimated.
    if (auto doc = nlohmann::json::parse(*text, nullptr, false); model_arg.empty() && doc.is_object() &&
                                                                  doc.contains("model") && doc["model"].is_string())
      model_arg = doc["model"].get<std::string>();
  } else if (shape_flags) {
    auto p = plan_from_shape(tp.empty() ? "1" : tp, pp > 0 ? pp : 1, dp.empty() ? "1" : dp, stage_layers, layers);
    if (!p) {
      std::cerr << kProg << ": " << p.error() << "\n";
      return kExitUsage;
    }
    plan = *p;
  } else {
    // In a crius job the record is the source of truth (it changes when criusd moves the
    // job; the job's environment does not): crius(7).
    std::optional<job::Record> rec;
    if (auto job_id = env("SLURM_JOB_ID"); job_id && !slurm_here) {
      // In a container without Slurm's configuration: the job's environment is all there is.
      if (!env("CRIUS_PLAN_JSON")) {
        std::cerr << kProg << ": no Slurm configuration here to read job " << util::printable(*job_id, 20)
                  << "'s record (SLURM_CONF, " << CRIUS_SLURM_SYSCONFDIR
                  << "/slurm.conf, SLURM_CONF_SERVER), and no CRIUS_PLAN_JSON\n";
        return kExitFailure;
      }
      std::cerr << kProg << ": warning: no Slurm configuration here; running the plan of the job's environment\n";
    } else if (job_id) {
      slurm::init_slurm_client();
      slurm::JobSeen seen;
      auto r = slurm::load_job_record(*job_id, &seen);
      if (r) {
        rec = std::move(*r);
        job_seen = std::move(seen);
      }
      else if (env("CRIUS_PLAN_JSON"))
        std::cerr << kProg << ": warning: " << r.error() << "; running the plan of the job's environment\n";
      else {
        std::cerr << kProg << ": " << r.error() << "\n";
        return kExitFailure;
      }
    }
    if (rec) {
      if (rec->by == "criusd")
        std::cerr << kProg << ": criusd moved this job to Cell " << est::describe(rec->cell)
                  << "; running the plan of its record\n";
      plan = rec->plan;
      spec.job_env = job::record_env(*rec);
      if (!model_arg.empty() && model_arg != rec->request.model) {
        std::cerr << kProg << ": --model " << util::printable(model_arg, 80) << ": the job was planned for model "
                  << util::printable(rec->request.model, 80) << "\n";
        return kExitUsage;
      }
      model_arg = rec->request.model;
      if (rec->request.model_file) model_spec = rec->request.model_spec;
      record_gpn = rec->cell.gpus_per_node;
      if (rec->saved_under) prev = std::pair{est::to_string(rec->saved_under->cell), rec->saved_under->plan};
    } else if (auto text = env("CRIUS_PLAN_JSON")) {
      if (model_arg.empty()) model_arg = env("CRIUS_MODEL").value_or("");
      auto p = est::plan_from_json_text(*text, "CRIUS_PLAN_JSON");
      if (!p) {
        std::cerr << kProg << ": " << p.error() << "\n";
        return kExitUsage;
      }
      plan = *p;
    } else {
      int n = ntasks;
      if (n <= 0) n = env_int("SLURM_NTASKS").value_or(0);
      if (n <= 0) {
        std::cerr << kProg << ": no plan: give --plan FILE, --tp/--pp/--dp, -n N, or run in a job submitted with crius "
                               "options (its record, or CRIUS_PLAN_JSON)\n";
        return kExitUsage;
      }
      plan = *plan_from_shape("1", 1, std::to_string(n), "", 0);
    }
  }
  // Outside a record, the plan a resumed job saved under may come as the job's environment did.
  if (!prev)
    if (auto text = env("CRIUS_PREV_PLAN_JSON")) {
      auto p = est::plan_from_json_text(*text, "CRIUS_PREV_PLAN_JSON");
      if (!p) {
        std::cerr << kProg << ": " << p.error() << "\n";
        return kExitUsage;
      }
      prev = std::pair{env("CRIUS_PREV_CELL").value_or(""), *p};
    }
  if (micro_batches > 0) plan.micro_batches = micro_batches;
  if (micro_batch_size > 0) plan.micro_batch_size = micro_batch_size;
  if (!schedule.empty()) {
    auto s = est::parse_schedule(schedule);
    if (!s) {
      std::cerr << kProg << ": --schedule: " << s.error() << "\n";
      return kExitUsage;
    }
    plan.schedule = *s;
  }
  if (!recompute.empty()) {
    auto r = est::parse_recompute(recompute);
    if (!r) {
      std::cerr << kProg << ": --recompute: " << r.error() << "\n";
      return kExitUsage;
    }
    plan.recompute = *r;
  }
  if (auto r = est::validate(plan, "plan"); !r) {
    std::cerr << kProg << ": " << r.error() << "\n";
    return kExitUsage;
  }
  const int world = plan.world_size();
  if (ntasks > 0 && ntasks != world) {
    std::cerr << kProg << ": -n " << ntasks << " does not match the plan's " << world << " ranks ("
              << est::plan_text(plan) << ")\n";
    return kExitUsage;
  }

  if (megatron && framework.empty()) framework = "megatron";
  print_args = print_args || megatron;
  if (rank_shim != "crius" && rank_shim != "sh") {
    std::cerr << kProg << ": --rank-shim: " << util::shown(rank_shim) << " is not crius or sh\n";
    return kExitUsage;
  }
  if (rank_shim == "sh" && !plan.uniform()) {
    std::cerr << kProg << ": --rank-shim sh: the plan has per-stage shapes; the sh shim runs uniform plans only\n";
    return kExitUsage;
  }
  if (print_args && framework.empty()) {
    std::cerr << kProg << ": --print-args: give --framework (megatron or torchtitan)\n";
    return kExitUsage;
  }
  // The signal the program saves on (crius-launch(1), CHECKPOINTS): each rank passes criusd's
  // checkpoint request on to its program as this one, and only to a program that handles it.
  {
    std::optional<std::string> name;
    std::string from = "--checkpoint-signal";
    if (!checkpoint_signal.empty()) name = checkpoint_signal;
    for (const auto& [k, v] : spec.job_env)
      if (!name && k == "CRIUS_CHECKPOINT_SIGNAL") name = v, from = "the job's record";
    if (!name && env("CRIUS_CHECKPOINT_SIGNAL")) name = env("CRIUS_CHECKPOINT_SIGNAL"), from = "CRIUS_CHECKPOINT_SIGNAL";
    int sig = 0;
    if (name) {
      auto n = job::parse_checkpoint_signal(*name);
      if (!n) {
        std::cerr << kProg << ": " << from << ": " << n.error() << "\n";
        return kExitUsage;
      }
      sig = *n;
    } else {
      auto f = framework.empty() ? Result<est::Framework>(plan.framework) : est::parse_framework(framework);
      sig = job::default_checkpoint_signal(f ? *f : plan.framework);
    }
    checkpoint_sig = sig;
    spec.job_env.emplace_back("CRIUS_CHECKPOINT_SIGNAL", job::checkpoint_signal_name(sig));
  }
  // Progress from the framework's own log lines (PROGRESS), checked here once for every rank.
  if (progress_regex.empty() && (framework.rfind("megatron", 0) == 0 || framework.rfind("torchtitan", 0) == 0))
    progress_regex = framework.substr(0, framework.find(':'));
  if (!progress_regex.empty()) {
    if (auto sc = ProgressScan::make(progress_regex, 1); !sc) {
      std::cerr << kProg << ": --progress-regex: " << sc.error() << "\n";
      return kExitUsage;
    }
    spec.job_env.emplace_back("CRIUS_PROGRESS_REGEX", progress_regex);
  }
  if (!framework.empty()) {
    // Before any rank starts: a plan the framework cannot run exactly stops here.
    auto a = hand_over(plan, framework, model_arg, model_spec, cluster_file, command);
    if (!a) {
      std::cerr << kProg << ": " << a.error() << "\n";
      return kExitFailure;
    }
    // Megatron-LM saves and exits on SIGTERM only with its signal handler on.
    if (checkpoint_sig == SIGTERM && framework.rfind("megatron", 0) == 0 &&
        std::find(command.begin(), command.end(), "--exit-signal-handler") == command.end())
      a->push_back("--exit-signal-handler");
    if (print_args) {
      std::string line;
      for (const auto& x : *a) line += (line.empty() ? "" : " ") + x;
      std::cout << line << "\n";
      return 0;
    }
    command.insert(command.end(), a->begin(), a->end());
    // Megatron-Core orders its kernels on one CUDA stream queue (it refuses to start otherwise);
    // Megatron-FSDP (ZeRO-2 and 3) refuses that one queue.
    if (!a->empty() && framework.rfind("megatron", 0) == 0 && plan.zero < 2)
      spec.job_env.emplace_back("CUDA_DEVICE_MAX_CONNECTIONS", env("CUDA_DEVICE_MAX_CONNECTIONS").value_or("1"));
  }

  // ---- hosts and placement
  const bool in_slurm = env("SLURM_JOB_ID").has_value() && env("SLURM_JOB_NODELIST").has_value();
  std::vector<std::string> hosts;
  if (in_slurm) {
    auto h = expand_hostlist(*env("SLURM_JOB_NODELIST"));
    if (!h) {
      std::cerr << kProg << ": SLURM_JOB_NODELIST: " << h.error() << "\n";
      return kExitFailure;
    }
    hosts = *h;
    if (gpus_per_node <= 0) gpus_per_node = record_gpn;
    if (gpus_per_node <= 0) gpus_per_node = env_int("SLURM_GPUS_ON_NODE").value_or(0);
    if (gpus_per_node <= 0) gpus_per_node = env_int("CRIUS_GPUS_PER_NODE").value_or(0);
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
  auto layout = Layout::make(plan, hosts, gpus_per_node);
  if (!layout) {
    std::cerr << kProg << ": " << layout.error() << "\n";
    return kExitFailure;
  }
  if (dry_run) {
    if (json) std::cout << layout->to_json().dump(2) << "\n";
    else std::cout << layout->table();
    return 0;
  }

  if (master_addr.empty()) master_addr = env("MASTER_ADDR").value_or("");
  if (master_addr.empty() && in_slurm && slurm_here) {
    // Where the first node is reached is Slurm's NodeAddr; its name need not resolve there.
    slurm::init_slurm_client();
    auto addr = slurm::node_address(hosts[0]);
    if (addr) master_addr = *addr;
    else {
      std::cerr << kProg << ": warning: " << addr.error() << "; MASTER_ADDR is the node's name\n";
      master_addr = hosts[0];
    }
  }
  if (master_addr.empty() && in_slurm) master_addr = hosts[0];  // no Slurm configuration to ask: the node's name
  if (master_addr.empty()) master_addr = "127.0.0.1";
  if (master_port <= 0) master_port = env_int("MASTER_PORT").value_or(0);
  if (master_port <= 0) {
    auto job = env_int("SLURM_JOB_ID");
    master_port = job ? 20000 + (*job % 20000) : 29500;
    // Rank 0 listens on the first node, where a batch script (and so crius-launch) runs.
    const auto here = env("SLURMD_NODENAME");
    if (!in_slurm || (here && *here == hosts[0])) master_port = free_port(master_port);
  }
  spec.plan = plan;
  spec.hosts = hosts;
  spec.gpus_per_node = gpus_per_node;
  spec.master_addr = master_addr;
  spec.master_port = master_port;
  spec.bind_cpus = bind_cpus;
  // A job resumed under another plan: the one its checkpoint was saved under, for every rank.
  if (prev) {
    spec.job_env.emplace_back("CRIUS_PREV_CELL", prev->first);
    spec.job_env.emplace_back("CRIUS_PREV_PLAN_JSON", est::plan_text(prev->second));
    spec.job_env.emplace_back("CRIUS_PREV_PLAN_HASH", util::hex64(est::plan_hash(prev->second)));
  }
  setenv("CRIUS_LAUNCH_SPEC", to_json(spec).dump().c_str(), 1);
  // A rank variable left in this environment (a batch shell's, an outer launcher's) reaches no rank.
  for (const char* v : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK"})
    if (auto x = env(v); x && !dry_run)
      std::cerr << kProg << ": note: " << v << "=" << util::printable(*x, 20)
                << " in this environment is replaced on every rank by the rank's own\n";

  const std::string self = self_path(argv[0]);
  std::vector<std::string> cmd;
  const int nodes_used = (world + gpus_per_node - 1) / gpus_per_node;
  if (launcher == "srun") {
    // The job's (SLURM_MPI_TYPE, as srun reads it) or --mpi's; pmix where neither says, which
    // Open MPI's ranks (crius-train) need.
    if (mpi_type.empty()) mpi_type = env("SLURM_MPI_TYPE").value_or("pmix");
    cmd = {"srun", "--mpi=" + mpi_type, "--export=ALL", "--kill-on-bad-exit=1", "--distribution=block", "--overcommit",
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
  if (rank_shim == "sh") {
    // What every rank shares, in the launcher's environment (srun --export=ALL; mpirun -x).
    std::vector<std::pair<std::string, std::string>> shared = spec.job_env;
    for (auto& kv : job::plan_env(plan)) shared.push_back(std::move(kv));
    const est::StagePlan& st = plan.stages[0];
    shared.insert(shared.end(), {{"WORLD_SIZE", std::to_string(world)}, {"MASTER_ADDR", master_addr},
                                 {"MASTER_PORT", std::to_string(master_port)}, {"CRIUS_TP_SIZE", std::to_string(st.tp)},
                                 {"CRIUS_DP_SIZE", std::to_string(st.dp)}, {"CRIUS_CP_SIZE", std::to_string(st.cp)},
                                 {"CRIUS_RANK_ORDER", st.cp > 1 ? "tp-cp-dp-pp" : "tp-dp-pp"},
                                 {"CRIUS_PLAN_HASH", util::hex64(est::plan_hash(plan))},
                                 {"CRIUS_NODELIST", util::join(hosts, ",")},
                                 {"CRIUS_GPUS_PER_NODE", std::to_string(gpus_per_node)}});
    for (const auto& [k, v] : shared) {
      setenv(k.c_str(), v.c_str(), 1);
      if (launcher != "srun") cmd.insert(cmd.end(), {"-x", k});
    }
    cmd.insert(cmd.end(), {"/bin/sh", "-c", kShellShim, "crius-rank"});
  } else {
    cmd.insert(cmd.end(), {self, "--rank-exec", "--"});
  }
  cmd.insert(cmd.end(), command.begin(), command.end());
  if (verbose) {
    std::string line;
    for (const auto& c : cmd) line += (line.empty() ? "" : " ") + c;
    std::cerr << kProg << ": " << line << "\n";
  }
  // The program's progress goes into the job's Comment, where criusd reads it (crius(7)): one
  // slurmctld RPC per report, at most once per the site's [launch] progress_interval_s.
  ProgressSink sink;
  double progress_interval = 0;
  if (auto job_id = env("SLURM_JOB_ID"); job_id && slurm_here && util::to_int(*job_id) && *util::to_int(*job_id) > 0) {
    if (auto v = env("CRIUS_PROGRESS_INTERVAL")) {
      auto d = util::to_double(*v);
      if (!d || *d < 1 || *d > 86400) {
        std::cerr << kProg << ": CRIUS_PROGRESS_INTERVAL '" << util::printable(*v, 40)
                  << "': want seconds from 1 to 86400\n";
        return kExitUsage;
      }
      progress_interval = *d;
    } else {
      progress_interval = est::Cluster::kDefaultProgressIntervalS;
      const std::string site = est::find_crius_conf(CRIUS_SLURM_SYSCONFDIR);
      if (std::error_code ec; std::filesystem::exists(site, ec)) {
        if (auto c = est::load_cluster(site)) progress_interval = c->progress_interval_s;
        else std::cerr << kProg << ": warning: " << c.error() << "; progress reported every " << progress_interval << " s\n";
      }
    }
    slurm::init_slurm_client();
    const auto id = static_cast<std::uint32_t>(*util::to_int(*job_id));
    sink = [reporter = slurm::ProgressReporter(id, job_seen ? &*job_seen : nullptr),
            warned = false](job::Progress p) mutable {
      p.at = std::time(nullptr);
      auto r = reporter.report(p);
      if (!r && !warned) {
        std::cerr << kProg << ": warning: " << r.error() << "\n";
        warned = true;
      }
    };
  }
  // The hook that converts the checkpoint where its framework cannot load it resharded.
  if (prev) {
    if (!pre_resume.empty() && est::plan_hash(prev->second) != est::plan_hash(plan)) {
      setenv("CRIUS_PREV_CELL", prev->first.c_str(), 1);
      setenv("CRIUS_PREV_PLAN_JSON", est::plan_text(prev->second).c_str(), 1);
      setenv("CRIUS_PLAN_JSON", est::plan_text(plan).c_str(), 1);
      std::cerr << kProg << ": resuming under another plan than the checkpoint's: running --pre-resume\n";
      const int rc = std::system(pre_resume.c_str());
      if (rc != 0) {
        std::cerr << kProg << ": --pre-resume failed ("
                  << (WIFEXITED(rc) ? "exit status " + std::to_string(WEXITSTATUS(rc)) : std::string("killed"))
                  << "); no rank started\n";
        return kExitFailure;
      }
    }
  }
  return run_and_watch(cmd, kill_timeout, sink, progress_interval);
}
