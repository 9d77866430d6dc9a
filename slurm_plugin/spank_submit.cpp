// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// spank/crius on the submit host (local and allocator contexts: srun, sbatch, salloc):
// validate each option where the user sees the error, read a model file here
// (slurmctld never opens a user's path) and forward it in spank_job_env; Slurm
// forwards the option values itself as _SLURM_SPANK_OPTION_crius_<option>.
// --crius-explain prints the ranked Cells.  In srun, after the allocation, the job's
// CRIUS_* variables come from its record (local_user_init).
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cstring>
#include <exception>

#include "common/util.h"
#include "job/env.h"
#include "slurm_plugin/load_record.h"
#include "slurm_plugin/spank_state.h"

#ifndef CRIUS_SLURM_SYSCONFDIR
#define CRIUS_SLURM_SYSCONFDIR "/etc/slurm"
#endif

namespace crius::spank {

using slurm::Option;

namespace {

// The cluster configuration, loaded on first use (to check names and for
// --crius-explain).  A missing file is not an error here: slurmctld checks.
const slurm::Loaded* config() {
  State& s = state();
  if (!s.conf_tried) {
    s.conf_tried = true;
    std::string path = s.conf_path.empty() ? estimator::find_crius_conf(CRIUS_SLURM_SYSCONFDIR) : s.conf_path;
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) {
      s.conf_error = path + ": " + std::strerror(errno);
      return nullptr;
    }
    auto r = slurm::load_config(path);
    if (!r) {
      s.conf_error = r.error();
      return nullptr;
    }
    s.conf = std::make_unique<slurm::Loaded>(std::move(*r));
  }
  return s.conf.get();
}

Result<std::string> read_model_file(const std::string& path, std::size_t limit) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0)
    return make_error("--crius-model: cannot read " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return make_error("--crius-model: " + path + " is not a regular file");
  if (static_cast<std::size_t>(st.st_size) > limit)
    return make_error("--crius-model: " + path + " is " + std::to_string(st.st_size) + " bytes, larger than the " +
                      std::to_string(limit / 1024) + " KiB limit for model files");
  auto text = util::read_file(path);
  if (!text) return make_error("--crius-model: " + text.error());
  if (text->size() > limit)
    return make_error("--crius-model: " + path + " is larger than the " + std::to_string(limit / 1024) + " KiB limit");
  if (text->find('\0') != std::string::npos) return make_error("--crius-model: " + path + " is not a text file");
  return text;
}

// "NAME=value" list of the options given, as slurmctld will see them.
std::vector<std::string> request_env() {
  State& s = state();
  std::vector<std::string> env;
  for (const auto& info : slurm::options()) {
    auto i = static_cast<std::size_t>(info.id);
    if (s.given[i]) env.push_back(slurm::option_env_name(info.id) + "=" + s.values[i]);
  }
  if (!s.model_spec.empty()) env.push_back(std::string(slurm::kModelSpecVar) + "=" + s.model_spec);
  return env;
}

int check_model(State& s, const std::string& value) {
  auto is_file = slurm::check_model_arg(value);
  if (*is_file) {
    auto text = read_model_file(value, s.max_model_bytes);
    if (!text) {
      slurm_error("crius: %s", text.error().c_str());
      return -1;
    }
    auto m = estimator::parse_model(*text, value);
    if (!m) {
      slurm_error("crius: --crius-model: %s", m.error().c_str());
      return -1;
    }
    s.model_spec = estimator::to_spec(*m);
  } else if (s.validate_names) {
    if (const auto* c = config()) {
      slurm::JobRequest req;
      req.model = value;
      auto m = slurm::resolve_model(req, c->cluster.models);
      if (!m) {
        slurm_error("crius: %s", m.error().c_str());
        return -1;
      }
    }
  }
  return 0;
}

int check_cell_type(State& s, const std::string& value) {
  if (!s.validate_names) return 0;
  auto pin = slurm::parse_cell(value);
  const auto* c = config();
  if (c && pin && !pin->gpu.empty() && !c->cluster.gpus.find(pin->gpu)) {
    auto m = c->cluster.gpus.close_matches(pin->gpu);
    std::string hint = m.empty() ? "" : " (did you mean " + util::join(m, ", ") + "?)";
    slurm_error("crius: --crius-cell: unknown GPU type '%s'%s", pin->gpu.c_str(), hint.c_str());
    return -1;
  }
  return 0;
}

}  // namespace

// Option callback: cheap, idempotent (Slurm may call it twice), validates where the user sees it.
int option_cb(int val, const char* optarg, int remote) {
  try {
    if (val < 0 || val >= static_cast<int>(kOptionCount)) return -1;
    auto opt = static_cast<Option>(val);
    State& s = state();
    std::string value = optarg ? optarg : "";
    s.values[val] = value;
    s.given[val] = true;
    if (remote) return 0;  // checked on the submit host and again by slurmctld
    if (auto r = slurm::check_option(opt, value); !r) {
      slurm_error("crius: %s", r.error().c_str());
      return -1;
    }
    if (opt == Option::model) return check_model(s, value);
    if (opt == Option::cell) return check_cell_type(s, value);
    return 0;
  } catch (const std::exception& e) {
    slurm_error("crius: internal error: %s", e.what());
    return -1;
  } catch (...) {
    return -1;
  }
}

int submit_post_opt(spank_t sp) {
  State& s = state();
  if (!s.model_spec.empty()) {
    spank_err_t rc = spank_job_control_setenv(sp, std::string(slurm::kModelSpecVar).c_str(), s.model_spec.c_str(), 1);
    if (rc != ESPANK_SUCCESS) {
      slurm_error("crius: cannot forward the model file: %s", spank_strerror(rc));
      return -1;
    }
  }
  // The whole request as slurmctld will parse it: cross-option errors show here first.
  auto env = request_env();
  std::vector<std::string_view> view(env.begin(), env.end());
  auto req = slurm::parse_request(view);
  if (!req) {
    slurm_error("crius: %s", req.error().c_str());
    return -1;
  }
  if (req->explain) {
    const auto* c = config();
    if (!c) {
      slurm_error("crius: --crius-explain: no crius configuration on this host (%s)", s.conf_error.c_str());
      return 0;
    }
    const char* part = std::getenv("SBATCH_PARTITION");
    if (!part) part = std::getenv("SLURM_PARTITION");
    if (!part) part = std::getenv("SALLOC_PARTITION");
    // criusd's report of the free GPUs, where this host can read it, as job_submit would.
    std::optional<slurm::FreeGpus> free;
    if (!c->config.free_gpus_file.empty())
      if (auto f = slurm::read_free_gpus(c->config.free_gpus_file); f && *f && (*f)->fresh(std::time(nullptr)))
        free = std::move(**f);
    auto d = slurm::decide(*req, *c, part ? part : "", free ? &*free : nullptr);
    if (!d) {
      slurm_error("crius: %s", d.error().c_str());
      return -1;
    }
    std::fputs(slurm::explain_text(*req, *d).c_str(), stderr);
  }
  return 0;
}

// The job's record is the source of truth for its Cell and plan (crius(7)): srun gives its
// tasks the record's CRIUS_* variables, read once per srun as the user.  A batch job has them
// in its environment from submission; this refreshes them for its steps after criusd moved
// it.  An srun or salloc allocation has no batch environment: this is how its tasks get them.
int local_user_init(spank_t sp) {
  std::uint32_t job_id = 0;
  if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS || job_id == 0) return 0;
  // An srun crius-launch runs: it read the record already and hands its ranks the plan's
  // variables itself (a second read would cost slurmctld a request per job start for nothing).
  if (std::getenv("CRIUS_LAUNCH_SPEC")) return 0;
  auto rec = slurm::load_job_record(job_id);
  if (!rec) {
    slurm_error("crius: %s; the tasks get no CRIUS_* variables from the job's record", rec.error().c_str());
    return 0;
  }
  if (!*rec) {
    slurm_error("crius: job %u has no crius record (job_submit/crius did not place it); no CRIUS_* variables",
                job_id);
    return 0;
  }
  for (const auto& [name, value] : job::record_env(**rec)) ::setenv(name.c_str(), value.c_str(), 1);
  return 0;
}

}  // namespace crius::spank
