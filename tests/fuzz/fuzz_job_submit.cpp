// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target: job_submit/crius as slurmctld calls it, C glue included
// (slurm_plugin/job_submit_crius.cpp), on a thread with slurmctld's 1 MiB RPC stack.
// Input: newline-separated spank_job_env entries (what any libslurm client can send);
// a line "PARTITION=..." sets the job's -p list, "BATCH" makes it a batch job.
// slurmctld's allocator and log functions are provided here with the same contract
// (a size header before every block, NULL-terminated arrays); everything else is the
// plugin itself. Invariants: no crash, leak or UB (ASan/UBSan); the job description
// stays well formed; a rewritten job has a record that reads back; err_msg and the
// record hold no control characters.
#include <pthread.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "job/record.h"

extern "C" {
int init(void);
void fini(void);
int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg);

// slurmctld's side of the contract (libslurmfull).
void slurm_info(const char*, ...) {}
void slurm_error(const char*, ...) {}
void slurm_debug(const char*, ...) {}
void* slurm_xrecalloc(void** item, size_t count, size_t size, bool clear, bool, const char*, int, const char*) {
  const size_t want = count * size;
  size_t* old = *item ? static_cast<size_t*>(*item) - 2 : nullptr;
  const size_t had = old ? old[1] : 0;
  size_t* p = static_cast<size_t*>(std::realloc(old, want + 2 * sizeof(size_t)));
  if (!p) std::abort();
  p[0] = 0x42424242;
  p[1] = want;
  if (clear && want > had) std::memset(reinterpret_cast<char*>(p + 2) + had, 0, want - had);
  *item = p + 2;
  return *item;
}
char* slurm_xstrdup(const char* s) {
  if (!s) return nullptr;
  void* p = nullptr;
  slurm_xrecalloc(&p, std::strlen(s) + 1, 1, false, false, "", 0, "");
  std::memcpy(p, s, std::strlen(s) + 1);
  return static_cast<char*>(p);
}
void slurm_xfree(void** item) {
  if (!item || !*item) return;
  size_t* p = static_cast<size_t*>(*item) - 2;
  if (p[0] != 0x42424242) std::abort();  // not from this allocator: slurmctld would crash
  std::free(p);
  *item = nullptr;
}
}

namespace {

struct Call {
  job_desc_msg_t* desc;
  char* err = nullptr;
  int rc = 0;
};

void* run(void* arg) {
  auto* c = static_cast<Call*>(arg);
  c->rc = job_submit(c->desc, 1000, &c->err);
  return nullptr;
}

void free_array(char** a, uint32_t n) {
  for (uint32_t i = 0; a && i < n; ++i)
    if (a[i]) slurm_xfree(reinterpret_cast<void**>(&a[i]));
  slurm_xfree(reinterpret_cast<void**>(&a));
}

bool printable(const char* s) {
  for (; s && *s; ++s)
    if (static_cast<unsigned char>(*s) < 0x20 || static_cast<unsigned char>(*s) >= 0x7f) return false;
  return true;
}

// NULL-terminated and exactly `n` entries long.
void check_array(char** a, uint32_t n) {
  if (n == 0) return;
  if (!a) std::abort();
  for (uint32_t i = 0; i < n; ++i)
    if (!a[i]) std::abort();
  if (a[n]) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (!std::getenv("CRIUS_CONF")) setenv("CRIUS_CONF", "etc/crius/crius.toml", 1);
  init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  job_desc_msg_t desc;
  std::memset(&desc, 0, sizeof desc);
  desc.min_nodes = desc.max_nodes = desc.num_tasks = NO_VAL;
  std::vector<std::string> lines;
  for (std::size_t start = 0; start <= in.size();) {
    std::size_t nl = in.find('\n', start);
    if (nl == std::string_view::npos) nl = in.size();
    lines.emplace_back(in.substr(start, nl - start));
    start = nl + 1;
  }
  for (const auto& l : lines) {
    if (l.rfind("PARTITION=", 0) == 0) {
      slurm_xfree(reinterpret_cast<void**>(&desc.partition));
      desc.partition = slurm_xstrdup(l.c_str() + 10);
    } else if (l == "BATCH") {
      slurm_xfree(reinterpret_cast<void**>(&desc.script));
      desc.script = slurm_xstrdup("#!/bin/sh\ntrue\n");
    }
    else {
      slurm_xrecalloc(reinterpret_cast<void**>(&desc.spank_job_env), desc.spank_job_env_size + 2, sizeof(char*),
                      true, false, "", 0, "");
      desc.spank_job_env[desc.spank_job_env_size++] = slurm_xstrdup(l.c_str());
    }
  }
  if (desc.script) {  // a batch job's environment, with options as sbatch exports them
    slurm_xrecalloc(reinterpret_cast<void**>(&desc.environment), 3, sizeof(char*), true, false, "", 0, "");
    desc.environment[0] = slurm_xstrdup("PATH=/usr/bin");
    desc.environment[1] = slurm_xstrdup("_SLURM_SPANK_OPTION_crius_crius_model=bert__1.3B");
    desc.env_size = 2;
  }

  // slurmctld's RPC threads have 1 MiB stacks.
  Call call{&desc};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_t t;
  if (pthread_create(&t, &attr, run, &call) != 0) std::abort();
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);

  check_array(desc.spank_job_env, desc.spank_job_env_size);
  check_array(desc.environment, desc.env_size);
  if (call.err && !printable(call.err)) std::abort();
  if (call.rc == SLURM_SUCCESS && desc.admin_comment) {
    auto rec = crius::job::parse_record(desc.admin_comment);
    if (!rec || !*rec) std::abort();
    if (std::strlen(desc.admin_comment) > 4096) std::abort();
    if (!printable(desc.admin_comment)) std::abort();
  }
  free_array(desc.spank_job_env, desc.spank_job_env_size);
  free_array(desc.environment, desc.env_size);
  for (char** f : {&desc.partition, &desc.script, &desc.admin_comment, &desc.tres_per_node, &desc.features,
                   &desc.tres_per_job, &desc.tres_per_socket, &desc.tres_per_task})
    slurm_xfree(reinterpret_cast<void**>(f));
  if (call.err) slurm_xfree(reinterpret_cast<void**>(&call.err));
  return 0;
}
