// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// spank/crius: the --crius-* options of sbatch, srun and salloc (spank_crius(8)).
//
// The plugin symbols and the dispatch on the SPANK context; the work is in
// spank_submit.cpp (submit host).  No exception leaves this plugin.
#include <cstdlib>
#include <exception>

#include "slurm_plugin/spank_state.h"

extern "C" {
extern const char plugin_name[] = "crius";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;

int slurm_spank_init(spank_t sp, int ac, char** av);
int slurm_spank_init_post_opt(spank_t sp, int ac, char** av);
int slurm_spank_local_user_init(spank_t sp, int ac, char** av);
int slurm_spank_exit(spank_t sp, int ac, char** av);
}

namespace crius::spank {

namespace {
State* g = nullptr;
}

State& state() {
  if (!g) g = new State;
  return *g;
}

void reset_state() {
  delete g;
  g = nullptr;
}

int parse_args(int ac, char** av) {
  State& s = state();
  for (int i = 0; i < ac; ++i) {
    std::string a = av[i] ? av[i] : "";
    auto eq = a.find('=');
    std::string k = a.substr(0, eq), v = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (eq == std::string::npos || v.empty()) {
      slurm_error("crius: plugstack.conf: argument '%s' is not key=value (keys: conf, max_model_kib, validate)", a.c_str());
      return -1;
    }
    if (k == "conf") {
      s.conf_path = v;
    } else if (k == "max_model_kib") {
      auto n = util::to_int(v);
      if (!n || *n < 1 || *n > 64) {
        slurm_error("crius: plugstack.conf: max_model_kib=%s must be 1..64", v.c_str());
        return -1;
      }
      s.max_model_bytes = static_cast<std::size_t>(*n) * 1024;
    } else if (k == "validate") {
      if (v == "full") s.validate_names = true;
      else if (v == "syntax") s.validate_names = false;
      else {
        slurm_error("crius: plugstack.conf: validate=%s must be full or syntax", v.c_str());
        return -1;
      }
    } else {
      slurm_error("crius: plugstack.conf: unknown argument '%s' (keys: conf, max_model_kib, validate)", k.c_str());
      return -1;
    }
  }
  return 0;
}

bool any_given() {
  for (bool b : state().given)
    if (b) return true;
  return false;
}

}  // namespace crius::spank

using namespace crius::spank;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  try {
    spank_context_t ctx = spank_context();
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE) return 0;
    if (parse_args(ac, av) != 0) return -1;
    for (const auto& info : crius::slurm::options()) {
      struct spank_option opt{};
      opt.name = const_cast<char*>(info.name);
      opt.arginfo = const_cast<char*>(info.arginfo);
      opt.usage = const_cast<char*>(info.usage);
      opt.has_arg = info.arginfo ? 1 : 0;
      opt.val = static_cast<int>(info.id);
      opt.cb = option_cb;
      if (spank_option_register(sp, &opt) != ESPANK_SUCCESS) {
        slurm_error("crius: cannot register --%s", info.name);
        return -1;
      }
    }
    return 0;
  } catch (...) {
    slurm_error("crius: init: internal error");
    return -1;
  }
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  try {
    spank_context_t ctx = spank_context();
    if ((ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR) || !any_given()) return 0;
    // srun inside an existing allocation starts a step, not a job: job_submit does not
    // run, and the options arrived through the job's environment, not from the user.
    if (ctx == S_CTX_LOCAL && std::getenv("SLURM_JOB_ID")) return 0;
    return submit_post_opt(sp);
  } catch (const std::exception& e) {
    slurm_error("crius: internal error: %s", e.what());
    return -1;
  } catch (...) {
    return -1;
  }
}

extern "C" int slurm_spank_local_user_init(spank_t sp, int, char**) {
  try {
    // A crius job: options given to this srun (its own allocation), or the CRIUS_*
    // environment of a crius batch job (job_submit does not pass the options on).
    if (spank_context() != S_CTX_LOCAL || (!any_given() && !std::getenv("CRIUS_CELL"))) return 0;
    return local_user_init(sp);
  } catch (const std::exception& e) {
    slurm_error("crius: internal error: %s", e.what());
  } catch (...) {
    slurm_error("crius: internal error");
  }
  return 0;  // the tasks still run, without CRIUS_* variables
}

extern "C" int slurm_spank_exit(spank_t, int, char**) {
  reset_state();
  return 0;
}
