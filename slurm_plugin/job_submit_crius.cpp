// job_submit/crius: the Slurm side of the submission path (job_submit_crius(8)).
//
// A thin shim: everything Slurm-specific is here, the decision is in submit.cpp.
// Rules (notes/slurm-22.05.md): no exception crosses into slurmctld, strings in
// job_desc only through slurm_xstrdup/slurm_xfree/slurm_xrecalloc, char** arrays
// stay NULL-terminated, nothing blocks, no RPC back into slurmctld.
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "job/record.h"
#include "slurm_plugin/apply_cell.h"
#include "slurm_plugin/request.h"
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
int job_modify(job_desc_msg_t* job_desc, struct job_record* job_ptr, uint32_t submit_uid);
}

namespace {

using crius::slurm::Decision;
using crius::slurm::Loaded;
using crius::slurm::OnError;

struct State {
  std::string path;
  std::unique_ptr<Loaded> conf;  // null when the configuration failed to load
  std::string error;
  OnError on_error = OnError::accept;
};
State* g_state = nullptr;

void set_str(char** field, const std::string& value) {
  slurm_xfree(reinterpret_cast<void**>(field));
  *field = slurm_xstrdup(value.c_str());
}
void clear_str(char** field) { slurm_xfree(reinterpret_cast<void**>(field)); }

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
  }
  return EINVAL;
}

int reject(char** err_msg, const std::string& msg, int code) {
  if (err_msg) *err_msg = slurm_xstrdup(("crius: " + msg).c_str());
  return code;
}

int degraded(job_desc_msg_t* job_desc, char** err_msg, const std::string& why) {
  if (g_state && g_state->on_error == OnError::reject)
    return reject(err_msg, "crius is not available (" + why + "); ask your administrator, or submit "
                           "without --crius-* options", ESLURM_DISABLED);
  slurm_info("job_submit/crius: job %s from uid %u passed through unchanged (on_error=accept): %s",
             job_desc->name ? job_desc->name : "(no name)", job_desc->user_id, why.c_str());
  return SLURM_SUCCESS;
}

int submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg) {
  if (!g_state || !g_state->conf)
    return degraded(job_desc, err_msg,
                    g_state ? "configuration error: " + g_state->error : "plugin not initialised");
  const Loaded& conf = *g_state->conf;

  auto req = crius::slurm::parse_request(env_view(job_desc->spank_job_env, job_desc->spank_job_env_size));
  if (!req) return reject(err_msg, req.error(), EINVAL);

  auto d = crius::slurm::decide(*req, conf, job_desc->partition ? job_desc->partition : "");
  if (!d) {
    slurm_info("job_submit/crius: rejected job from uid %u: %s", submit_uid, d.error().c_str());
    return reject(err_msg, d.error(), slurm_code(d.error_code()));
  }
  crius::slurm::apply_cell(job_desc, d->chosen.cell, set_str);
  // The Cell's GPUs replace whatever GPU request the user made.
  clear_str(&job_desc->tres_per_job);
  clear_str(&job_desc->tres_per_socket);
  clear_str(&job_desc->tres_per_task);
  set_str(&job_desc->admin_comment, crius::job::to_text(d->record));
  // A batch job's environment is the job's: its CRIUS_* variables are written there.  srun
  // and salloc jobs have none; srun's spank_crius gives their tasks the record's (crius(7)).
  if (job_desc->script)
    for (const auto& [name, value] : d->env) env_set(&job_desc->environment, &job_desc->env_size, name + "=" + value);
  slurm_info("job_submit/crius: uid %u: %s", submit_uid, d->summary.c_str());
  return SLURM_SUCCESS;
}

}  // namespace

extern "C" int init(void) {
  try {
    g_state = new State;
    g_state->path = crius::estimator::find_crius_conf(CRIUS_SLURM_SYSCONFDIR);
    auto loaded = crius::slurm::load_config(g_state->path);
    if (!loaded) {
      g_state->error = loaded.error();
      // A bad configuration never stops slurmctld.  on_error is read on a best-effort
      // basis from a file that otherwise failed to load.
      try {
        toml::table t = toml::parse_file(g_state->path);
        if (auto v = t["job_submit"]["on_error"].value<std::string>(); v && *v == "reject")
          g_state->on_error = OnError::reject;
      } catch (...) {
      }
      slurm_error("job_submit/crius: %s; until it is fixed and slurmctld restarted, crius jobs are %s "
                  "(degraded mode, on_error=%s)",
                  g_state->error.c_str(),
                  g_state->on_error == OnError::reject ? "rejected" : "accepted unchanged",
                  g_state->on_error == OnError::reject ? "reject" : "accept");
      return SLURM_SUCCESS;
    }
    g_state->conf = std::make_unique<Loaded>(std::move(*loaded));
    g_state->on_error = g_state->conf->config.on_error;
    slurm_info("job_submit/crius: loaded %s (%zu partitions, %zu models)", g_state->path.c_str(),
               g_state->conf->cluster.partitions.size(), g_state->conf->cluster.models.models().size());
  } catch (const std::exception& e) {
    slurm_error("job_submit/crius: init: %s (degraded mode)", e.what());
  } catch (...) {
    slurm_error("job_submit/crius: init: unknown exception (degraded mode)");
  }
  return SLURM_SUCCESS;
}

extern "C" void fini(void) {
  delete g_state;
  g_state = nullptr;
}

extern "C" int job_submit(job_desc_msg_t* job_desc, uint32_t submit_uid, char** err_msg) {
  if (!job_desc) return SLURM_SUCCESS;
  // Jobs without crius options: one scan of a short array, nothing else.
  if (!crius::slurm::has_request(job_desc->spank_job_env, job_desc->spank_job_env_size)) return SLURM_SUCCESS;
  try {
    return submit(job_desc, submit_uid, err_msg);
  } catch (const std::exception& e) {
    slurm_error("job_submit/crius: internal error: %s", e.what());
    return degraded(job_desc, err_msg, std::string("internal error: ") + e.what());
  } catch (...) {
    slurm_error("job_submit/crius: internal error");
    return degraded(job_desc, err_msg, "internal error");
  }
}

extern "C" int job_modify(job_desc_msg_t*, struct job_record*, uint32_t) { return SLURM_SUCCESS; }
