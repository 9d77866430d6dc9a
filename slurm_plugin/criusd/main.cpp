// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// criusd: re-decides the Cells of all crius jobs every round through Slurm.
// See criusd(8).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <cstdlib>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include <CLI/CLI.hpp>

#include "common/util.h"
#include "estimator/estimator.h"
#include "job/record.h"
#include "slurm_plugin/criusd/controller.h"
#include "slurm_plugin/criusd/description.h"
#include "slurm_plugin/criusd/failover.h"
#include "slurm_plugin/criusd/metrics.h"
#include "slurm_plugin/criusd/slurm_client.h"

namespace {

using namespace crius;
using namespace crius::slurm;

std::atomic<bool> g_stop{false}, g_reload{false}, g_drain{false};
void on_signal(int) { g_stop = true; }
void on_hangup(int) { g_reload = true; }
void on_drain(int) { g_drain = true; }

// crius.toml's modification time (0: cannot be read): a change is reloaded at the next round.
long long mtime_ns(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
}

// Log lines on standard error, each with its level: under systemd (JOURNAL_STREAM set) as the
// "<N>" prefix journald turns into the entry's priority (journalctl -p warning), else after a
// timestamp, with "error:" or "warning:" spelled out.
enum class Level { error = 3, warning = 4, notice = 5, info = 6 };
// How often a criusd that stands by looks again whether its slurmctld took control.
constexpr int kStandbyCheckS = 5;
const bool g_journal = std::getenv("JOURNAL_STREAM") != nullptr;
std::string timestamp();
std::ostream& log(Level level) {
  if (g_journal) return std::cerr << '<' << static_cast<int>(level) << ">criusd: ";
  std::cerr << timestamp() << " criusd: ";
  if (level == Level::error) std::cerr << "error: ";
  if (level == Level::warning) std::cerr << "warning: ";
  return std::cerr;
}

std::string timestamp() {
  char buf[32];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  return buf;
}


// --die-after STEP: exit abruptly (as if killed with SIGKILL) right after that step of the
// first move step applied, for the fault-injection tests (criusd(8)).
std::string g_die_after;
void step_done(const char* step) {
  if (g_die_after == step) {
    std::fprintf(stderr, "%s criusd: --die-after %s: exiting\n", timestamp().c_str(), step);
    std::fflush(nullptr);
    _exit(137);
  }
}

// A step that failed for good: the move dropped, the reason kept in the record.
std::string abandoned(const std::string& abandon, const std::string& why) {
  auto rec = job::parse_record(abandon);
  if (!rec || !*rec) return abandon;
  rec->value().unmovable = util::printable(why, 200);
  if (auto& h = rec->value().history; !h.empty() && h.back().outcome.rfind("abandoned", 0) == 0)
    h.back().outcome = util::printable("abandoned: " + why, job::kMaxHistoryText - 3);  // Slurm's own words
  return job::to_text(rec->value());
}

// One action, each step in the order criusd(8) gives: a criusd killed between two steps,
// restarted, continues from the record and ends in the same state.
Result<void> apply(SlurmClient& slurm, const ControllerOptions& o, const Action& a) {
  // the record, written beside the other lines of the job's AdminComment
  auto set_record = [&](const std::string& record, bool release) {
    return slurm.set_record(a.slurm_id, job::with_record(a.admin_comment, record), release);
  };
  switch (a.kind) {
    case Action::Kind::update_pending:
      if (!(a.to == a.from) || a.nodes || a.time_limit_min > 0) {
        if (auto r = slurm.update_cell(a.slurm_id, a.to, a.cpus_per_task, a.other_gres, false, a.nodes ? &*a.nodes : nullptr,
                                       a.time_limit_min);
            !r) {
          (void)slurm.update_cell(a.slurm_id, a.from, a.cpus_per_task, a.other_gres, false);  // Slurm may have applied part of it
          return r;
        }
        step_done("update");
      }
      return set_record(a.after, false);
    case Action::Kind::checkpoint:
      if (auto r = set_record(a.before, false); !r) return r;
      step_done("record");
      if (auto r = slurm.signal(a.slurm_id, o.checkpoint_signal); !r) {
        (void)set_record(a.abandon, false);
        return r;
      }
      step_done("signal");
      return set_record(a.after, false);
    case Action::Kind::requeue:
      if (!a.before.empty()) {  // empty for a job that already ended: Slurm keeps its record as is
        if (auto r = set_record(a.before, false); !r) return r;
        step_done("record");
      }
      if (auto r = slurm.requeue_held(a.slurm_id); !r) {
        (void)set_record(abandoned(a.abandon, r.error()), false);
        return make_error(r.error() + "; the move is dropped and the job stays where it runs");
      }
      step_done("requeue");
      return set_record(a.after, false);
    case Action::Kind::finish_move:
      if (auto r = slurm.update_cell(a.slurm_id, a.to, a.cpus_per_task, a.other_gres, true, a.nodes ? &*a.nodes : nullptr,
                                     a.time_limit_min);
          !r) {
        (void)slurm.update_cell(a.slurm_id, a.from, a.cpus_per_task, a.other_gres, true);
        (void)set_record(a.abandon, a.release);  // it runs again, in its old Cell
        return make_error(r.error() + "; it stays in its old Cell");
      }
      step_done("update");
      return set_record(a.after, a.release);
  }
  return {};
}

// One criusd at a time: an exclusive lock held for the process's life.
Result<int> take_lock(const std::string& path) {
  // Never through a symbolic link: criusd runs as SlurmUser or root, the link's target would be
  // truncated.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error("cannot open the lock file " + path + ": " +
                      (errno == ELOOP ? std::string("it is a symbolic link") : std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    return make_error("another criusd runs (it holds " + path + (n > 0 ? ", pid " + std::string(util::trim(buf)) : std::string()) +
                      ")");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  (void)!::ftruncate(fd, 0);
  (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  return fd;
}

// Whether criusd acts this round: beside the slurmctld in control, or wherever it runs when
// slurm.conf names one controller (failover.h).
Role current_role(SlurmClient& slurm) {
  auto c = slurm.controllers();
  if (!c) return {false, "cannot read Slurm: " + c.error(), false, true};
  char name[256] = {};
  (void)::gethostname(name, sizeof name - 1);
  const std::string full = name, short_name = full.substr(0, full.find('.'));
  const int self = controller_index(c->hosts, short_name, full);
  std::optional<Heartbeat> heartbeat;
  std::string error;
  bool answers = false;
  if (c->hosts.size() >= 2 && self >= 0) {
    const std::string path = c->state_save_location + "/heartbeat";
    for (int attempt = 0; attempt < 3 && !heartbeat; ++attempt) {  // slurmctld replaces it by unlink, link
      if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) {
        error = path + ": " + std::strerror(errno);
        continue;
      }
      char buf[16];
      const ssize_t n = ::read(fd, buf, sizeof buf);
      ::close(fd);
      heartbeat = parse_heartbeat(std::string_view(buf, n > 0 ? static_cast<std::size_t>(n) : 0));
      if (!heartbeat) error = path + ": not a heartbeat (16 bytes)";
    }
    answers = heartbeat && slurm.ping(self);
  }
  return controller_role(c->hosts, self, heartbeat, error, answers, std::time(nullptr), c->timeout_s);
}

// criusd --drain: signal the criusd that holds the lock to drain, and wait until it exits.
int drain_running(const std::string& path, double timeout_s) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    std::cerr << "criusd --drain: no criusd runs (" << path << ": " << std::strerror(errno) << ")\n";
    return 0;
  }
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::close(fd);
    std::cerr << "criusd --drain: no criusd runs (nothing holds " << path << ")\n";
    return 0;
  }
  char buf[32] = {};
  (void)!::pread(fd, buf, sizeof buf - 1, 0);
  const long pid = std::strtol(buf, nullptr, 10);
  if (pid <= 1 || ::kill(static_cast<pid_t>(pid), SIGUSR2) != 0) {
    ::close(fd);
    std::cerr << "criusd --drain: cannot signal the criusd of " << path << " (pid '" << util::trim(buf)
              << "'): " << std::strerror(errno) << "\n";
    return 1;
  }
  std::cerr << "criusd --drain: criusd " << pid << " finishes the moves in flight, then exits\n";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::close(fd);
      std::cerr << "criusd --drain: criusd " << pid << " still runs after " << timeout_s << " s\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::close(fd);
  return 0;
}

void print_status(const Round& r) {
  std::printf("%-8s %-10s %-18s %6s  %-28s %12s %10s %12s  %s\n", "JOBID", "STATE", "MODEL", "BATCH", "CELL",
              "EST_ITER_S", "DONE", "REMAIN_S", "CONSIDERED / MOVE");
  for (const auto& s : r.jobs) {
    std::string extra = s.considered.empty() ? s.problem : s.considered;
    if (!s.move.empty()) extra += " (" + s.move + ")";
    const std::string done = s.done_iterations < 0 ? "-" : util::fixed(s.done_iterations, 0);
    std::printf("%-8u %-10s %-18s %6d  %-28s %12.3f %10s %12.0f  %s\n", s.job, s.state.c_str(),
                util::printable(s.model, 18).c_str(), s.global_batch, estimator::describe(s.cell).c_str(),
                s.est_iter_time_s, done.c_str(), s.remaining_s, util::printable(extra, 200).c_str());
  }
}

// A snapshot saved by --save-state (--state).
Result<Snapshot> read_state(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error("cannot open --state " + path);
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return make_error(path + ": not JSON");
  return snapshot_from_json(j, path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"criusd: re-decides the Cells of crius jobs every round through Slurm"};
  std::string config, slurm_conf, state_file, save_state, policy, lock_file;
  double interval = 0;
  int max_moves = -1, repeat = 1;
  double drain_timeout = 0;
  bool rollback = false, check_description_flag = false;
  bool once = false, dry_run = false, json = false, status = false;
  app.add_option("--config", config, "crius.toml (default: $CRIUS_CONF, else beside slurm.conf)");
  app.add_option("--slurm-conf", slurm_conf, "slurm.conf of the cluster (default: $SLURM_CONF)");
  app.add_option("--interval", interval, "seconds between rounds (overrides [criusd] interval_s)")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--policy", policy, "scheduling policy (default: crius)");
  app.add_option("--max-moves", max_moves, "running jobs moved per round at most")->check(CLI::Range(0, 10000));
  app.add_flag("--once", once, "run one round, then exit");
  app.add_flag("--dry-run", dry_run, "decide and print, change nothing");
  app.add_flag("--json", json, "print each round's decisions as JSON");
  app.add_flag("--status", status, "print each crius job's Cell and estimate, then exit");
  app.add_flag("--rollback", rollback,
               "undo what a stopped criusd left: clear crius's node pins, drop moves in flight, release "
               "the jobs they hold (with --dry-run: print only), then exit");
  app.add_flag("--check-description", check_description_flag,
               "compare crius.toml's partitions with Slurm's nodes (GPU type and count, node count), "
               "print what differs and exit (1 if anything does)");
  app.add_option("--state", state_file, "decide on a saved snapshot instead of Slurm (implies --once --dry-run)");
  app.add_option("--repeat", repeat, "with --state: decide N times, as N rounds of a running criusd (timing)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--save-state", save_state, "write the snapshot read from Slurm to FILE");
  app.add_option("--lock", lock_file, "the lock file that keeps a second criusd from running (overrides [criusd] lock_file)");
  app.add_option("--drain", drain_timeout,
                 "make the running criusd finish its moves in flight and exit; wait up to SECONDS for it")
      ->check(CLI::Range(1.0, 86400.0));
  app.add_option("--die-after", g_die_after, "testing: exit as if killed right after STEP of the first move step")
      ->check(CLI::IsMember({"record", "signal", "requeue", "update"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  // Draining another criusd needs only its lock file (no crius.toml: a broken edit must not
  // keep systemd from stopping criusd cleanly).
  if (drain_timeout > 0 && !lock_file.empty()) return drain_running(lock_file, drain_timeout);

  // crius.toml: --config, else found as the plugins find it ($CRIUS_CONF, beside slurm.conf).
  if (!slurm_conf.empty()) setenv("SLURM_CONF", slurm_conf.c_str(), 1);
  std::string path = config.empty() ? estimator::find_crius_conf(CRIUS_SLURM_SYSCONFDIR) : config;
  // The cluster and the controller deciding on it; replaced whole by a reload that reads.
  std::unique_ptr<estimator::Cluster> cluster;
  std::unique_ptr<Controller> controller_ptr;
  long long loaded_mtime = 0;
  auto load = [&]() -> Result<void> {
    const long long seen = mtime_ns(path);
    auto c = estimator::load_cluster(path);
    if (!c) return make_error(c.error());
    auto o = load_controller_options(*c);
    if (!o) return make_error(o.error());
    if (interval > 0) o->interval_s = interval;
    if (!policy.empty()) o->policy = policy;
    if (max_moves >= 0) o->max_moves_per_round = max_moves;
    auto fresh = std::make_unique<estimator::Cluster>(std::move(*c));
    auto decider = std::make_unique<Controller>(*fresh, *o);
    controller_ptr = std::move(decider);
    cluster = std::move(fresh);
    loaded_mtime = seen;
    return {};
  };
  if (auto r = load(); !r) {
    std::cerr << "criusd: " << r.error() << "\n";
    return 2;
  }
  const ControllerOptions* options = &controller_ptr->options();

  // One description of the cluster: crius.toml against Slurm (or a saved snapshot), then exit.
  if (check_description_flag) {
    auto snap = state_file.empty() ? SlurmClient(slurm_conf).snapshot() : read_state(state_file);
    if (!snap) {
      std::cerr << "criusd --check-description: " << snap.error() << "\n";
      return 2;
    }
    bool all_agree = true;
    for (const DescriptionCheck& c : check_description(*cluster, *snap)) {
      all_agree = all_agree && c.agrees();
      std::cout << (c.agrees() ? "partition " + c.partition + ": agrees (" + c.described + ")"
                               : c.text(SIZE_MAX) + (c.usable() ? "" : "; criusd places nothing there"))
                << "\n";
    }
    return all_agree ? 0 : 1;
  }

  if (!state_file.empty()) {
    auto snap = read_state(state_file);
    if (!snap) {
      std::cerr << "criusd: " << snap.error() << "\n";
      return 2;
    }
    auto round = controller_ptr->decide(*snap);
    if (!round) {
      std::cerr << "criusd: " << round.error() << "\n";
      return 1;
    }
    for (int i = 1; i < repeat; ++i) {  // later rounds reuse the daemon's estimate cache
      auto again = controller_ptr->decide(*snap);
      if (!again) {
        std::cerr << "criusd: " << again.error() << "\n";
        return 1;
      }
      std::cerr << "criusd: round " << i + 1 << " decided in " << again->decide_ms << " ms\n";
    }
    if (json) std::cout << to_json(*round).dump(2) << "\n";
    else if (status) print_status(*round);
    else
      for (const auto& a : round->actions)
        std::cout << "job " << a.job << ": " << to_string(a.kind) << " " << estimator::describe(a.from) << " -> "
                  << estimator::describe(a.to) << " (" << a.reason << ")\n";
    std::cerr << "criusd: decided in " << round->decide_ms << " ms\n";
    return 0;
  }

  if (drain_timeout > 0) return drain_running(lock_file.empty() ? options->lock_file : lock_file, drain_timeout);

  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGHUP, on_hangup);
  std::signal(SIGUSR2, on_drain);
  if (status) once = dry_run = true;
  if (!dry_run) {  // only one criusd changes jobs at a time
    auto lock = take_lock(lock_file.empty() ? options->lock_file : lock_file);
    if (!lock) {
      std::cerr << "criusd: " << lock.error() << "\n";
      return 1;
    }
  }
  SlurmClient slurm(slurm_conf);
  if (rollback) {  // with the lock held: no criusd acts meanwhile
    auto snap = slurm.snapshot();
    if (!snap) {
      std::cerr << "criusd --rollback: " << snap.error() << "\n";
      return 1;
    }
    int failed = 0;
    const std::vector<Action> actions = rollback_actions(*snap);
    for (const Action& a : actions) {
      std::cout << "job " << a.slurm_id << ": " << to_string(a.kind) << " in " << estimator::describe(a.to) << " ("
                << a.reason << ")" << (dry_run ? " [dry run]" : "") << "\n";
      if (dry_run) continue;
      if (auto r = apply(slurm, *options, a); !r) {
        std::cerr << "criusd --rollback: job " << a.slurm_id << ": " << r.error() << "\n";
        ++failed;
      }
    }
    std::cerr << "criusd --rollback: " << actions.size() << " actions, " << failed << " failed\n";
    return failed ? 1 : 0;
  }
  int failures = 0;
  Metrics metrics;
  std::map<std::uint32_t, std::string> last_considered;
  // The policy decides every interval_s. A move in flight does not wait that long for its next
  // step: a follow-up round continues it once the checkpoint grace is over (requeue), and
  // right after the requeue (the new Cell and the release).
  using Clock = std::chrono::steady_clock;
  bool follow_up = false;
  auto next_full = Clock::now();
  std::string role_said;  // the role's reason last logged
  bool drain_said = false;
  do {
    // SIGHUP or an edit of crius.toml: the new configuration from the next round on; one that
    // does not load is logged and the last good one stays (the lock stays as taken at start).
    if (g_reload.exchange(false) || mtime_ns(path) != loaded_mtime) {
      const long long now_mtime = mtime_ns(path);
      if (auto r = load(); r) {
        options = &controller_ptr->options();
        log(Level::notice) << "reloaded " << path << "\n";
      } else {
        loaded_mtime = now_mtime;  // tried: again at the next edit or SIGHUP
        log(Level::error) << "reload failed, keeping the configuration in use: " << r.error() << "\n";
      }
    }
    const auto round_start = Clock::now();
    // Draining (SIGUSR2, criusd --drain): only the steps of moves in flight, until none is left.
    const bool draining = g_drain;
    if (draining && !drain_said) {
      log(Level::notice) << "draining: finishing the moves in flight, starting none\n";
      drain_said = true;
    }
    if (draining) follow_up = true;
    if (!follow_up) next_full = round_start + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(options->interval_s));
    double soon = -1;  // seconds to a follow-up round, -1: none needed
    // Nothing from Slurm may stop the daemon: a round that throws is logged and the next one runs.
    bool settled = false;  // no move of criusd's in flight (or another criusd acts)
    bool standing_by = false;
    try {
    Role role{true, ""};
    if (!dry_run) {
      role = current_role(slurm);
      if (!role.unreadable) {
        metrics.acting(role.act);
        if (role.why != role_said)
          log(Level::notice) << (role.act ? "acting: " : "standing by: ") << util::printable(role.why, 512) << "\n";
        role_said = role.why;
      }
    }
    if (role.unreadable) {
      log(Level::error) << util::printable(role.why, 512) << "\n";
      ++failures;
      metrics.round_failed();
    } else if (!role.act) {
      settled = standing_by = true;  // another criusd acts, or none may: nothing changed, nothing reported
    } else if (auto snap = slurm.snapshot(); !snap) {
      log(Level::error) << "cannot read Slurm: " << snap.error() << "\n";
      ++failures;
      metrics.round_failed();
    } else {
      // Other users' jobs (their comments included): for root's eyes only.
      if (!save_state.empty()) {
        auto w = util::write_private_file(
            save_state, to_json(*snap).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
        if (!w) log(Level::warning) << "--save-state: " << w.error() << "\n";
      }
      auto round = controller_ptr->decide(*snap, follow_up);
      if (!round) {
        log(Level::error) << round.error() << "\n";
        ++failures;
        metrics.round_failed();
      } else if (status) {
        print_status(*round);
      } else {
        metrics.round_decided(*round, round->decide_ms / 1000);
        if (json) std::cout << to_json(*round).dump() << std::endl;
        for (const auto& note : round->notes) log(Level::info) << note << "\n";
        std::map<std::uint32_t, std::string> considered;  // logged when it changes
        for (const auto& st : round->jobs) {
          considered[st.job] = st.considered;
          auto was = last_considered.find(st.job);
          if (st.considered.rfind("no: ", 0) == 0 && (was == last_considered.end() || was->second != st.considered))
            log(Level::info) << "job " << st.job << " not considered: "
                      << util::printable(st.considered.substr(4), 256) << "\n";
        }
        last_considered = std::move(considered);
        settled = round->actions.empty() && round->moves_ending == 0 &&
                  std::none_of(round->jobs.begin(), round->jobs.end(), [](const JobStatus& st) { return !st.move.empty(); });
        // The controller in control may have changed while this round read Slurm and decided
        // (a failover takes seconds): its steps are applied only if criusd still acts.
        if (!dry_run && !round->actions.empty() && role.failover) {
          if (Role now = current_role(slurm); !now.act) {
            log(Level::warning) << "standing by: " << util::printable(now.why, 512) << "; the round's "
                      << round->actions.size() << " steps are dropped\n";
            role_said = now.why;
            metrics.acting(false);
            round->actions.clear();
          }
        }
        for (const auto& a : round->actions) {
          char speeds[112] = "";
          if (a.from_samples_per_s > 0 || a.to_samples_per_s > 0)  // 0: a move in flight continues
            std::snprintf(speeds, sizeof speeds, "; estimated %.2f -> %.2f samples/s", a.from_samples_per_s,
                          a.to_samples_per_s);
          log(Level::notice) << (dry_run ? "would " : "") << to_string(a.kind)
                    << " job " << a.job << " " << estimator::describe(a.from) << " -> " << estimator::describe(a.to)
                    << (a.nodes ? " on nodes [" + util::join(*a.nodes, ",") + "]" : std::string())
                    << (a.time_limit_min > 0 ? ", time limit " + std::to_string(a.time_limit_min) + " min" : std::string())
                    << " (" << a.reason << speeds << ")\n";
          if (dry_run) continue;
          if (auto r = apply(slurm, *options, a); !r) {
            log(Level::error) << "job " << a.job << ": " << util::printable(r.error(), 512) << "\n";
            ++failures;
            metrics.action(a.kind, false);
            continue;
          }
          metrics.action(a.kind, true);
          const double next_step = a.kind == Action::Kind::checkpoint ? a.grace_s + 0.5
                                   : a.kind == Action::Kind::requeue  ? 1.0
                                                                      : -1;
          if (next_step >= 0 && (soon < 0 || next_step < soon)) soon = next_step;
        }
        if (!dry_run && !follow_up && !options->free_gpus_file.empty())
          if (auto w = write_free_gpus(options->free_gpus_file, round->free); !w) {
            log(Level::warning) << w.error() << "\n";
            ++failures;
          }
      }
    }
    } catch (const std::exception& e) {
      log(Level::error) << "round failed: " << util::printable(e.what(), 512) << "\n";
      ++failures;
      metrics.round_failed();
    }
    if (!dry_run && !options->metrics_file.empty())
      if (auto w = metrics.write(options->metrics_file); !w) log(Level::warning) << w.error() << "\n";
    if (once) break;
    if (draining && settled) {
      log(Level::notice) << "drained: no move in flight; exiting\n";
      break;
    }
    auto next = next_full;
    follow_up = false;
    if (soon >= 0) {
      auto step = round_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(soon));
      if (step < next_full) {
        next = step;
        follow_up = true;
      }
    }
    if (draining) next = std::min(next, round_start + std::chrono::seconds(1));
    // Standing by: a failover is noticed within seconds, not at the next interval.
    if (standing_by) next = std::min(next, round_start + std::chrono::seconds(kStandbyCheckS));
    while (Clock::now() < next && !g_stop && !g_reload && g_drain == draining) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (!g_stop);
  return once && failures ? 1 : 0;
}
