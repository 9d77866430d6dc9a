// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-launch: runs the MPI launcher and watches the ranks' reports (launch.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "common/util.h"
#include "launcher/launch.h"

namespace crius::launcher {

namespace {

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

}  // namespace

int run_and_watch(const std::vector<std::string>& cmd, int kill_after_s, const ProgressSink& on_progress,
                  double progress_interval_s) {
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
  std::string line;        // the current line (its first 4 KiB), for the failure and progress lines
  std::size_t echoed = 0;  // how much of the current line is already echoed
  bool eof = false;
  int status = 0;
  bool exited = false;
  std::optional<job::Progress> progress, reported;
  bool progress_new = false;
  auto progress_due = std::chrono::steady_clock::now();
  // The launcher's stderr is echoed as it comes, but for progress lines, which are kept: only
  // the start of a line that may still become one waits for the rest of its line.
  const std::string_view progress_prefix = job::kProgressLine;
  auto may_be_progress = [&] {
    return echoed == 0 && line.size() <= 64 &&
           (progress_prefix.substr(0, line.size()) == line || line.rfind(progress_prefix, 0) == 0);
  };
  auto end_line = [&] {
    std::smatch m;
    if (echoed == 0) {
      if (auto p = job::parse_progress_line(line)) {
        progress = p;
        progress_new = true;
        line.clear();
        return;
      }
    }
    if (echoed < line.size()) (void)!write(2, line.data() + echoed, line.size() - echoed);
    (void)!write(2, "\n", 1);
    if (!first && std::regex_match(line, m, line_re)) {
      // Digits, but any number of them: a value out of int's range is no rank of ours.
      const auto rank = util::to_int(m[1].str()), status = util::to_int(m[4].str());
      if (rank && status && *rank <= INT_MAX && *status <= INT_MAX) {
        first = Failure{static_cast<int>(*rank), m[2], m[3], static_cast<int>(*status)};
        failed_at = std::chrono::steady_clock::now();
      }
    }
    line.clear();
    echoed = 0;
  };
  auto consume = [&](const char* data, std::size_t n) {
    for (std::size_t i = 0; i < n;) {
      const char* nl = static_cast<const char*>(std::memchr(data + i, '\n', n - i));
      const std::size_t take = (nl ? static_cast<std::size_t>(nl - data) : n) - i;
      const std::size_t keep = std::min(take, line.size() < 4096 ? 4096 - line.size() : 0);
      if (keep < take && echoed < line.size()) {  // too long to be ours: echo what is held
        (void)!write(2, line.data() + echoed, line.size() - echoed);
        echoed = line.size();
      }
      line.append(data + i, keep);
      if (keep < take) {
        (void)!write(2, data + i + keep, take - keep);
        echoed = line.size();
      }
      i += take;
      if (nl) {
        end_line();
        ++i;
      }
    }
    if (!line.empty() && !may_be_progress() && echoed < line.size()) {
      (void)!write(2, line.data() + echoed, line.size() - echoed);
      echoed = line.size();
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
          consume(tmp, static_cast<std::size_t>(got));
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
      while ((got = read(pfd[0], tmp, sizeof tmp)) > 0) consume(tmp, static_cast<std::size_t>(got));
      eof = true;
    }
    if (eof && !line.empty()) {  // a last line without its newline: echo what is held
      if (echoed < line.size()) (void)!write(2, line.data() + echoed, line.size() - echoed);
      line.clear();
      echoed = 0;
    }
    // A report only when the progress changed; the last iteration at once (criusd must not
    // requeue a job that finished).
    if (progress_new && reported && *reported == *progress) progress_new = false;
    if (on_progress && progress_new &&
        (std::chrono::steady_clock::now() >= progress_due || progress->done >= progress->total)) {
      on_progress(*progress);
      reported = progress;
      progress_new = false;
      progress_due = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(progress_interval_s));
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
  if (on_progress && progress_new && !(reported && *reported == *progress)) on_progress(*progress);
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

}  // namespace crius::launcher
