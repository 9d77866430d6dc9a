// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// job_submit/crius: the Slurm side of the submission path (job_submit_crius(8)).
//
// A thin shim: everything Slurm-specific is here, the decision is in submit.cpp.
// Rules (notes/slurm-22.05.md): no exception crosses into slurmctld, strings in
// job_desc only through slurm_xstrdup/slurm_xfree/slurm_xrecalloc, char** arrays
// stay NULL-terminated, no RPC back into slurmctld.  Everything that reaches this
// file comes from a possibly hostile client: it is parsed by the flat request
// parser, its work is bounded (the estimator's work budget, a cache of recent
// answers), and every string it logs or returns is made printable.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "common/util.h"
#include "estimator/toml_util.h"
#include "job/record.h"
#include "slurm_plugin/apply_cell.h"
#include "slurm_plugin/request.h"
#include "slurm_plugin/slurm_compat.h"
#include "slurm_plugin/submit.h"

#ifndef CRIUS_SLURM_SYSCONFDIR
#define CRIUS_SLURM_SYSCONFDIR "/etc/slurm"
#endif

extern "C" {
// From slurmctld's libslurmfull (not in the installed headers).
void slurm_info(const char*, ...) __attribute__((format(printf, 1, 2)));
void slurm_error(const char*, ...) __attribute__((format(printf, 1, 2)));
void slurm_debug(const char*, ...) __attribute__((format(printf, 1, 2)));
char* slurm_xstrdup(const char*);
void slurm_xfree(void**);
void* slurm_xrecalloc(void**, size_t, size_t, bool, bool, const char*, int, const char*);

struct job_record;

extern const char plugin_name[] = "crius job_submit plugin";
extern const char plugin_type[] = "job_submit/crius";
extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;

int init(void);
void fini(void);
int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg);
#if CRIUS_JOB_MODIFY_HAS_ERR_MSG
int job_modify(job_desc_msg_t* job_desc, struct job_record* job_ptr, uint32_t submit_uid, char** err_msg);
#else
int job_modify(job_desc_msg_t* job_desc, struct job_record* job_ptr, uint32_t submit_uid);
#endif
}

namespace {

using crius::util::printable;
using crius::slurm::Loaded;
using crius::slurm::OnError;

// How often job_submit looks whether crius.toml changed (seconds).
constexpr std::time_t kReloadCheckS = 10;

struct FileStamp {
  std::time_t mtime = 0;
  off_t size = -1;
  ino_t inode = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp stamp_of(const std::string& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {st.st_mtime, st.st_size, st.st_ino};
}

struct State {
  std::string path;
  std::unique_ptr<Loaded> conf;  // null while no configuration ever loaded
  std::string error;             // why, then
  OnError on_error = OnError::accept;
  std::unique_ptr<crius::slurm::DecisionCache> cache;
  FileStamp stamp;
  std::time_t checked = 0;
  // criusd's report of the free GPUs, less what job_submit gave since it was written.
  std::optional<crius::slurm::FreeGpus> free;
  FileStamp free_stamp;
  crius::slurm::SubmitCounters counters;
  std::time_t metrics_written = 0;
};
State* g_state = nullptr;

void set_str(char** field, const std::string& value) {
  slurm_xfree(reinterpret_cast<void**>(field));
  *field = slurm_xstrdup(value.c_str());
}

// Sets NAME=value in a NULL-terminated, xmalloc'd env array: replaces an entry
// of the same name, else appends (keeping room for the NULL: count + 2).
void env_set(char*** env, uint32_t* count, const std::string& entry) {
  std::string_view name(entry.data(), entry.find('='));
  for (uint32_t i = 0; *env && i < *count && (*env)[i]; ++i) {
    const char* e = (*env)[i];
    if (std::strncmp(e, name.data(), name.size()) == 0 && e[name.size()] == '=') {
      slurm_xfree(reinterpret_cast<void**>(&(*env)[i]));
      (*env)[i] = slurm_xstrdup(entry.c_str());
      return;
    }
  }
  uint32_t n = 0;
  while (*env && n < *count && (*env)[n]) ++n;
  slurm_xrecalloc(reinterpret_cast<void**>(env), n + 2, sizeof(char*), true, false, __FILE__, __LINE__,
                  __func__);
  (*env)[n] = slurm_xstrdup(entry.c_str());
  (*env)[n + 1] = nullptr;
  *count = n + 1;
}

// Removes every entry whose name starts with one of `prefixes`, keeping the array
// NULL-terminated and compact.
void env_remove(char** env, uint32_t* count, std::initializer_list<std::string_view> prefixes) {
  if (!env) return;
  uint32_t out = 0;
  for (uint32_t i = 0; i < *count && env[i]; ++i) {
    bool drop = false;
    for (auto p : prefixes) drop = drop || std::strncmp(env[i], p.data(), p.size()) == 0;
    if (drop) slurm_xfree(reinterpret_cast<void**>(&env[i]));
    else env[out++] = env[i];
  }
  for (uint32_t i = out; i < *count; ++i) env[i] = nullptr;
  *count = out;
}

std::vector<std::string_view> env_view(char** env, uint32_t n) {
  std::vector<std::string_view> out;
  for (uint32_t i = 0; env && i < n && env[i]; ++i) out.emplace_back(env[i]);
  return out;
}

// The Slurm error code for a rejection: sbatch prints its text after the crius message.
int slurm_code(int reject) {
  using crius::slurm::Reject;
  switch (static_cast<Reject>(reject)) {
    case Reject::bad_request: return EINVAL;  // "Invalid argument"
    case Reject::no_partition: return ESLURM_INVALID_PARTITION_NAME;
    case Reject::no_cell: return ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE;
    case Reject::deadline: return ESLURM_INVALID_TIME_VALUE;  // "Invalid time specified"
    case Reject::busy: return EAGAIN;  // sbatch sleeps and submits again (src/sbatch/sbatch.c)
  }
  return EINVAL;
}

// A message to the submitting user (sbatch prints it; with SLURM_SUCCESS as a note).
void tell(char** err_msg, const std::string& msg) {
  if (err_msg && !*err_msg) *err_msg = slurm_xstrdup(printable("crius: " + msg, 1024).c_str());
}

// A crius submission refused: the user is told why, the reason counted (METRICS).
int reject(char** err_msg, const std::string& msg, int code, const char* reason) {
  if (g_state) {
    ++g_state->counters.decisions["rejected"];
    ++g_state->counters.rejections[reason];
  }
  tell(err_msg, msg);
  return code;
}

// The counters, for node_exporter's textfile collector, at most every kMetricsEveryS seconds.
void maybe_write_metrics() {
  if (!g_state || !g_state->conf || g_state->conf->config.metrics_file.empty()) return;
  const std::time_t now = std::time(nullptr);
  if (now - g_state->metrics_written < crius::slurm::kMetricsEveryS) return;
  g_state->metrics_written = now;
  if (auto w = crius::util::replace_public_file(g_state->conf->config.metrics_file,
                                                crius::slurm::metrics_text(g_state->counters));
      !w)
    slurm_error("job_submit/crius: [job_submit] metrics_file %s", printable(w.error(), 512).c_str());
}

int degraded(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg, const std::string& why) {
  if (g_state && g_state->on_error == OnError::reject) {
    ++g_state->counters.decisions["degraded_rejected"];
    tell(err_msg, "crius is not available (" + why + "); ask your administrator, or submit without --crius-* options");
    return ESLURM_DISABLED;
  }
  if (g_state) ++g_state->counters.decisions["degraded_accepted"];
  tell(err_msg, "crius is not available (" + why + "); the job was submitted as it is, without a Cell or a plan "
                "(it may not get GPUs)");
  slurm_info("job_submit/crius: job %s from uid %u passed through unchanged (on_error=accept): %s",
             printable(job_desc->name ? job_desc->name : "(no name)", 64).c_str(), submit_uid,
             printable(why, 512).c_str());
  return SLURM_SUCCESS;
}

// Reads on_error from a crius.toml that otherwise failed to load (best effort).
OnError on_error_of(const std::string& path) {
  auto text = crius::util::read_file(path);
  if (!text || crius::estimator::detail::too_deep(*text, crius::estimator::detail::kMaxTomlDepth)) return OnError::accept;
  try {
    toml::table t = toml::parse(*text);
    if (auto v = t["job_submit"]["on_error"].value<std::string>(); v && *v == "reject") return OnError::reject;
  } catch (...) {
  }
  return OnError::accept;
}

// (Re)loads crius.toml: the first time in init(), then whenever the file changed (looked at
// at most every kReloadCheckS seconds, at a crius submission: `scontrol reconfigure` is not
// needed, and slurmctld never restarts for it). A file that does not load keeps the last
// configuration that did.
void load(bool first) {
  State& s = *g_state;
  s.checked = std::time(nullptr);
  s.stamp = stamp_of(s.path);
  auto loaded = crius::slurm::load_config(s.path);
  if (!loaded) {
    if (s.conf) {
      slurm_error("job_submit/crius: %s changed but does not load, the previous configuration stays: %s",
                  printable(s.path, 256).c_str(), printable(loaded.error(), 1024).c_str());
      return;
    }
    s.error = loaded.error();
    s.on_error = on_error_of(s.path);
    slurm_error("job_submit/crius: %s; until it is fixed, crius jobs are %s (degraded mode, on_error=%s)",
                printable(s.error, 1024).c_str(), s.on_error == OnError::reject ? "rejected" : "accepted unchanged",
                s.on_error == OnError::reject ? "reject" : "accept");
    return;
  }
  s.conf = std::make_unique<Loaded>(std::move(*loaded));
  s.error.clear();
  s.on_error = s.conf->config.on_error;
  s.cache = std::make_unique<crius::slurm::DecisionCache>();
  slurm_info("job_submit/crius: %s %s (%zu partitions, %zu models)", first ? "loaded" : "reloaded",
             printable(s.path, 256).c_str(), s.conf->cluster.partitions.size(),
             s.conf->cluster.models.models().size());
}

void maybe_reload() {
  State& s = *g_state;
  const std::time_t now = std::time(nullptr);
  if (now - s.checked < kReloadCheckS) return;
  s.checked = now;
  if (!(stamp_of(s.path) == s.stamp)) load(false);
}

// criusd's report of the free GPUs, read again when the file changed; null when there is
// none, it does not read, or it is stale (criusd stopped): then the best Cell of an empty
// cluster is given, as without criusd.
crius::slurm::FreeGpus* free_gpus() {
  State& s = *g_state;
  const std::string& path = s.conf->config.free_gpus_file;
  if (path.empty()) return nullptr;
  FileStamp now_stamp = stamp_of(path);
  if (!(now_stamp == s.free_stamp)) {
    s.free_stamp = now_stamp;
    s.free.reset();
    auto f = crius::slurm::read_free_gpus(path);
    if (!f) slurm_error("job_submit/crius: %s", printable(f.error(), 512).c_str());
    else if (*f) s.free = std::move(**f);
  }
  if (!s.free || !s.free->fresh(std::time(nullptr))) return nullptr;
  return &*s.free;
}

// criusd's last report however old (free_gpus() first): a stale one's access and limits still
// hold in an outage, as the last Slurm said; its free GPUs do not.
const crius::slurm::FreeGpus* last_free_gpus() { return g_state->free ? &*g_state->free : nullptr; }

int submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg) {
  if (!g_state) return degraded(job_desc, submit_uid, err_msg, "plugin not initialised");
  maybe_reload();
  auto req = crius::slurm::parse_request(env_view(job_desc->spank_job_env, job_desc->spank_job_env_size));
  // The options did their work here: the job's tasks (and whatever they submit) do not
  // inherit them, so a job submitted from inside a crius job is not silently one too.
  env_remove(job_desc->spank_job_env, &job_desc->spank_job_env_size,
             {crius::slurm::kOptionPrefix, crius::slurm::kModelSpecVar});
  env_remove(job_desc->environment, &job_desc->env_size,
             {crius::slurm::kOptionPrefix, "SLURM_SPANK__SLURM_SPANK_OPTION_crius_", "SLURM_SPANK_CRIUS_"});
  if (!g_state->conf) return degraded(job_desc, submit_uid, err_msg, "configuration error: " + g_state->error);
  if (!req) return reject(err_msg, req.error(), EINVAL, "bad_request");

  // A heterogeneous job's components are placed together by Slurm; crius gives a Cell to a job
  // of its own (criusd(8) leaves hetjob components alone, too).
  if (job_desc->het_job_offset != NO_VAL)
    return reject(err_msg,
                  "a heterogeneous job cannot be a crius job: submit the training as a job of its own "
                  "(its other components without --crius-* options)",
                  ESLURM_NOT_SUPPORTED, "hetjob");
  // crius gives the job its GPUs and their type (as its constraint): a request of its own for
  // either is refused, never dropped; other GRES are kept.
  if (job_desc->features)
    return reject(err_msg,
                  "--constraint: crius gives a crius job its GPU type as its constraint; to choose the type "
                  "use --crius-cell=TYPE (or -p), and drop --constraint",
                  ESLURM_INVALID_FEATURE, "constraint");
  auto per_node = crius::slurm::split_tres(job_desc->tres_per_node);
  auto per_job = crius::slurm::split_tres(job_desc->tres_per_job);
  auto per_socket = crius::slurm::split_tres(job_desc->tres_per_socket);
  auto per_task = crius::slurm::split_tres(job_desc->tres_per_task);
  if (!per_node || !per_job || !per_socket || !per_task)
    return reject(err_msg, "--gres/--gpus*: the request is longer than 4096 bytes", ESLURM_INVALID_GRES, "gres");
  if (per_node->gpus || per_job->gpus || per_socket->gpus || per_task->gpus)
    return reject(err_msg,
                  "--gres=gpu/--gpus*: crius chooses a crius job's GPUs (its Cell); drop the GPU request, "
                  "or bound it with --crius-max-gpus or fix it with --crius-cell",
                  ESLURM_INVALID_GRES, "gpus_requested");

  crius::slurm::FreeGpus* free = free_gpus();
  crius::slurm::Submitter who;
  who.uid = job_desc->user_id != NO_VAL ? job_desc->user_id : submit_uid;
  who.gid = job_desc->group_id;
  who.account = job_desc->account ? printable(job_desc->account, 64) : "";
  who.qos = job_desc->qos ? printable(job_desc->qos, 64) : "";
  who.time_limit_s = job_desc->time_limit == NO_VAL || job_desc->time_limit == INFINITE ? 0 : std::int64_t{job_desc->time_limit} * 60;
  who.privileged = who.uid == 0 || who.uid == getuid();
  who.now = std::time(nullptr);
  // An outage (criusd's report stale: criusd stopped): the partitions and limits it last read
  // still hold, and the Cell is bounded ([job_submit] outage_max_gpus), since no criusd can
  // shrink or move it until criusd is back.
  const crius::slurm::FreeGpus* rules = free ? free : last_free_gpus();
  crius::slurm::JobRequest request = *req;
  if (const int cap = g_state->conf->config.outage_max_gpus; !free && rules && cap > 0)
    request.max_gpus = request.max_gpus ? std::min(*request.max_gpus, cap) : cap;
  const auto t0 = std::chrono::steady_clock::now();
  auto d = g_state->cache->decide(request, *g_state->conf, job_desc->partition ? job_desc->partition : "", free, &who,
                                  rules);
  if (!d && request.max_gpus != req->max_gpus)  // no Cell within the outage's bound (a --crius-cell): the job's own
    d = g_state->cache->decide(*req, *g_state->conf, job_desc->partition ? job_desc->partition : "", free, &who, rules);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  g_state->counters.decide_seconds_sum += took;
  g_state->counters.decide_seconds_max = std::max(g_state->counters.decide_seconds_max, took);
  if (!d) {
    slurm_info("job_submit/crius: rejected job from uid %u: %s", submit_uid, printable(d.error(), 1024).c_str());
    return reject(err_msg, d.error(), slurm_code(d.error_code()), crius::slurm::reject_reason(d.error_code()));
  }
  d->record.request.max_gpus = req->max_gpus;  // the outage's bound is not the job's: criusd may grow it
  crius::slurm::apply_cell(job_desc, d->chosen.cell,
                           job_desc->cpus_per_task == NO_VAL16 ? 1 : job_desc->cpus_per_task, set_str);
  // With [job_submit] time_limit_factor on (it is off by default), a job that says how many
  // iterations it runs and gives no time limit gets one from its Cell's estimate
  // (job_submit_crius(8), TIME LIMITS): Slurm's backfill can plan around it, and
  // a Cell slower than the one it would have had does not run into the partition's DefaultTime.
  // Bounded by the longest limit Slurm lets the job have there as criusd last read it (a stale
  // report still says it): the partition's MaxTime, the MaxWall of its QOS and association.
  const double factor = g_state->conf->config.time_limit_factor;
  std::string limit_note;
  if (job_desc->time_limit == NO_VAL && req->iters && factor > 0 && d->chosen.iter_time_s > 0) {
    std::int64_t max_s = 0;
    if (g_state->free) {
      crius::slurm::Submitter me = who;
      if (me.account.empty()) me.account = g_state->free->default_account(me.uid);
      max_s = g_state->free->longest_time_limit_s(d->chosen.cell.partition, me);
    }
    const std::int64_t minutes =
        crius::job::time_limit_minutes(static_cast<double>(*req->iters), d->chosen.iter_time_s, factor, max_s);
    job_desc->time_limit = static_cast<uint32_t>(minutes);
    d->record.time_limit_factor = factor;
    d->record.time_limit_min = minutes;
    d->summary += "; time limit " + std::to_string(minutes) + " min";
    limit_note = "time limit " + std::to_string(minutes) + " minutes: " + crius::util::fmt(factor, 3) +
                 " x the estimated time of " + std::to_string(*req->iters) + " iterations in " +
                 crius::estimator::to_string(d->chosen.cell) + ", plus 5" + (max_s > 0 ? ", at most the partition's MaxTime and the QOS's and association's MaxWall" : "") +
                 " (--time sets your own)";
  }
  if (!per_node->others.empty())  // the Cell's GPUs, and the job's other GRES per node
    set_str(&job_desc->tres_per_node, std::string(job_desc->tres_per_node) + "," + per_node->others);
  // beside what a site's tools (an earlier job_submit plugin, an admin's client) put there
  set_str(&job_desc->admin_comment, crius::job::with_record(job_desc->admin_comment ? job_desc->admin_comment : "",
                                                            crius::job::to_text(d->record)));
  // A batch job's environment is the job's: its CRIUS_* variables are written there.  srun
  // and salloc jobs have none; srun's spank_crius gives their tasks the record's (crius(7)).
  if (job_desc->script)
    for (const auto& [name, value] : d->env) env_set(&job_desc->environment, &job_desc->env_size, name + "=" + value);
  if (!d->deadline_miss.empty()) tell(err_msg, d->deadline_miss + "; the job is flagged (deadline_met false in its record) and gets its Cell as without a deadline");
  if (d->busy)
    tell(err_msg, "slurmctld is busy with crius submissions ([job_submit] work_per_second): the job got the "
                  "best of the few Cells estimated (" + crius::estimator::to_string(d->chosen.cell) +
                  "); criusd may give it a better one");
  else if (d->partial)
    tell(err_msg, "the estimator's work budget for one submission ran out; the job got the best of the Cells "
                  "estimated (" + crius::estimator::to_string(d->chosen.cell) + ")");
  if (!limit_note.empty()) tell(err_msg, limit_note);  // the notes above matter more
  // Until criusd's next report, the GPUs given here are not free for the next submission, and
  // the job counts as waiting (criusd's next round sees whether it started).
  if (free && d->load == crius::slurm::Load::fits) free->take(d->chosen.cell, d->until);
  if (free && free->waiting < 100'000'000) ++free->waiting;
  crius::slurm::SubmitCounters& c = g_state->counters;
  ++c.decisions["placed"];
  c.partial += d->partial;
  c.busy += d->busy;
  c.deadline_flagged += !d->deadline_miss.empty();
  slurm_info("job_submit/crius: uid %u: %s", submit_uid, printable(d->summary, 1024).c_str());
  return SLURM_SUCCESS;
}

}  // namespace

extern "C" int init(void) {
  try {
    g_state = new State;
    g_state->path = crius::estimator::find_crius_conf(CRIUS_SLURM_SYSCONFDIR);
    load(true);
  } catch (const std::exception& e) {
    slurm_error("job_submit/crius: init: %s (degraded mode)", printable(e.what(), 512).c_str());
  } catch (...) {
    slurm_error("job_submit/crius: init: unknown exception (degraded mode)");
  }
  return SLURM_SUCCESS;  // a bad configuration never stops slurmctld
}

extern "C" void fini(void) {
  delete g_state;
  g_state = nullptr;
}

// job_submit leaves errno as it found it.
struct KeepErrno {
  int saved = errno;
  ~KeepErrno() { errno = saved; }
};

// job_modify leaves errno at 0. slurmctld 24.11 takes errno as the error of an update that
// changes a job's partition when the job has no association (accounting_storage/none):
// _update_job reads it after _retrieve_new_assoc, which returns NULL there without setting it
// (src/slurmctld/job_mgr.c; the same code in 22.05 and in Slurm's master of August 2026). In
// 22.05 each RPC had a fresh thread, so errno was 0; 24.11 reuses its RPC threads, and the
// value a thread's last call left failed such updates at random ("Resource temporarily
// unavailable"), criusd's moves included. job_modify runs just before, in the same thread.
struct ClearErrno {
  ~ClearErrno() { errno = 0; }
};

extern "C" int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg) {
  const KeepErrno keep_errno;
  if (!job_desc) return SLURM_SUCCESS;
  // Jobs without crius options: one scan of a short array, nothing else.
  if (!crius::slurm::has_request(job_desc->spank_job_env, job_desc->spank_job_env_size)) return SLURM_SUCCESS;
  try {
    const int rc = submit(job_desc, submit_uid, err_msg);
    maybe_write_metrics();
    return rc;
  } catch (const std::exception& e) {
    slurm_error("job_submit/crius: internal error: %s", printable(e.what(), 512).c_str());
    return degraded(job_desc, submit_uid, err_msg, std::string("internal error: ") + e.what());
  } catch (...) {
    slurm_error("job_submit/crius: internal error");
    return degraded(job_desc, submit_uid, err_msg, "internal error");
  }
}

namespace {

// The fields of an update that would change a job's Cell (apply_cell.h writes them), named as
// scontrol names them; "" if none.
std::string cell_fields_in(const job_desc_msg_t& d) {
  std::vector<std::string> f;
  if (d.partition) f.push_back("Partition");
  if (d.tres_per_node || d.tres_per_job || d.tres_per_socket || d.tres_per_task) f.push_back("Gres/TRES");
  if (d.features) f.push_back("Features");
  if (d.min_nodes != NO_VAL || d.max_nodes != NO_VAL) f.push_back("NumNodes");
  if (d.num_tasks != NO_VAL || d.ntasks_per_node != NO_VAL16) f.push_back("NumTasks");
  return crius::util::join(f, ", ");
}

// A crius job's partition, GPUs, nodes and features are its Cell: the record says which Cell
// it has, criusd keeps Slurm and the record the same, and crius-launch starts the plan of that
// Cell. Its owner changing them with `scontrol update` would leave the job running a plan for
// other GPUs, so the update is refused; root and SlurmUser (admins, criusd) may change them,
// and criusd then leaves the job alone as inconsistent (criusd(8)). Nothing is parsed: the
// record is admin-only text, recognised by the first bytes of its line.
int modify(job_desc_msg_t* job_desc, struct job_record* job_ptr, uint32_t submit_uid, char** err_msg) {
  if (!job_desc || !job_ptr || submit_uid == 0 || submit_uid == getuid()) return SLURM_SUCCESS;
  const crius::slurm::compat::AdminCommentRead record = crius::slurm::compat::job_admin_comment(job_ptr);
  if (record.known && (!record.text || !crius::job::looks_like_record(record.text))) return SLURM_SUCCESS;
  const std::string fields = cell_fields_in(*job_desc);
  if (fields.empty()) return SLURM_SUCCESS;
  const std::string why =
      record.known ? fields + (fields.find(',') == std::string::npos ? " is" : " are") +
                         " part of the job's crius Cell: resubmit with the --crius-* options you need "
                         "(--crius-cell, --crius-max-gpus, -p), or ask an administrator"
                   : fields + ": job_submit/crius cannot read this Slurm release's job record to tell whether "
                              "the job is a crius job, so users may not change it; ask an administrator "
                              "(job_submit_crius(8), Updates of a crius job)";
  slurm_info("job_submit/crius: refused an update by uid %u of %s: %s", submit_uid,
             record.known ? "a crius job" : "a job (its record unread)", why.c_str());
  if (g_state) ++g_state->counters.updates_refused;
  maybe_write_metrics();
  tell(err_msg, "crius: " + why);
  return ESLURM_ACCESS_DENIED;
}

}  // namespace

#if CRIUS_JOB_MODIFY_HAS_ERR_MSG
extern "C" int job_modify(job_desc_msg_t* job_desc, struct job_record* job_ptr, uint32_t submit_uid,
                          char** err_msg) {
  const ClearErrno clear_errno;
  try {
    return modify(job_desc, job_ptr, submit_uid, err_msg);
  } catch (...) {
    return SLURM_SUCCESS;  // nothing to protect that an exception could change
  }
}
#else
extern "C" int job_modify(job_desc_msg_t* job_desc, struct job_record* job_ptr, uint32_t submit_uid) {
  const ClearErrno clear_errno;
  try {
    return modify(job_desc, job_ptr, submit_uid, nullptr);
  } catch (...) {
    return SLURM_SUCCESS;
  }
}
#endif
