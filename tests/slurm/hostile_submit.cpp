// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// A libslurm client that bypasses the SPANK plugin: it submits batch jobs whose
// spank_job_env it writes itself, as any user's program can, to test what
// job_submit/crius does with requests no sbatch would send.
// Usage: crius-hostile-submit [-p PARTITIONS] [-n REPEATS] < ENTRIES
//   ENTRIES: spank_job_env entries, one per line ("\n" inside an entry is written "\\n",
//   "\e" an ESC). Each submission is held (priority 0) and printed as one line:
//   "rc=<errno> job=<id> seconds=<wall> msg=<the job_submit message, escaped>"
// Exit status: 0 (whatever slurmctld answered), 2 usage error.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "slurm_plugin/slurm_compat.h"

namespace {

std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == 'n') out += '\n', ++i;
    else if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == 'e') out += '\x1b', ++i;
    else out += s[i];
  }
  return out;
}

std::string escape(const char* s) {
  std::string out;
  for (; s && *s; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string partitions;
  int repeats = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-p") && i + 1 < argc) partitions = unescape(argv[++i]);
    else if (!std::strcmp(argv[i], "-n") && i + 1 < argc) repeats = std::atoi(argv[++i]);
    else {
      std::cerr << "usage: crius-hostile-submit [-p PARTITIONS] [-n REPEATS] < ENTRIES\n";
      return 2;
    }
  }
  std::vector<std::string> entries;
  for (std::string line; std::getline(std::cin, line);) entries.push_back(unescape(line));
  slurm_init(nullptr);
  for (int r = 0; r < repeats; ++r) {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.name = const_cast<char*>("hostile");
    d.script = const_cast<char*>("#!/bin/sh\ntrue\n");
    d.priority = 0;  // held: nothing runs
    d.min_nodes = 1;
    d.user_id = getuid();
    d.group_id = getgid();
    char cwd[4096];
    d.work_dir = getcwd(cwd, sizeof cwd);
    char* env[] = {const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
    d.environment = env;
    d.env_size = 1;
    if (!partitions.empty()) d.partition = partitions.data();
    std::vector<char*> spank;
    for (auto& e : entries) spank.push_back(e.data());
    spank.push_back(nullptr);
    d.spank_job_env = spank.data();
    d.spank_job_env_size = static_cast<uint32_t>(entries.size());
    submit_response_msg_t* resp = nullptr;
    auto t0 = std::chrono::steady_clock::now();
    int rc = slurm_submit_batch_job(&d, &resp);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    int err = rc == SLURM_SUCCESS ? 0 : errno;  // libslurm sets errno (slurm_get_errno is gone in 24.11)
    std::printf("rc=%d job=%u seconds=%.4f msg=%s%s\n", err, resp ? crius::slurm::compat::submitted_job_id(*resp) : 0, s,
                resp && resp->job_submit_user_msg ? escape(resp->job_submit_user_msg).c_str() : "",
                err ? (" error=" + escape(slurm_strerror(err))).c_str() : "");
    std::fflush(stdout);
    if (resp) slurm_free_submit_response_response_msg(resp);
  }
  slurm_fini();
  return 0;
}
