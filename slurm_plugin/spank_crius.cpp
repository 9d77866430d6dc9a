// spank/crius: the --crius-* options of sbatch, srun and salloc (spank_crius(8)).
//
// Local/allocator context (srun, sbatch, salloc): validate each option where the
// user sees the error, read a model file here (slurmctld never opens a user's
// path) and forward it in spank_job_env; Slurm forwards the option values
// itself as _SLURM_SPANK_OPTION_crius_<option>.  --crius-explain prints the
// ranked Cells.  Remote context (slurmstepd): export the chosen Cell and plan as
// CRIUS_* in every task's environment.  No exception leaves this file.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>

extern const char plugin_name[] = "crius";
extern const char plugin_type[] = "spank";
extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
extern const unsigned int spank_plugin_version = 1;

int slurm_spank_init(spank_t sp, int ac, char** av);
int slurm_spank_init_post_opt(spank_t sp, int ac, char** av);
int slurm_spank_user_init(spank_t sp, int ac, char** av);
int slurm_spank_task_init(spank_t sp, int ac, char** av);
int slurm_spank_exit(spank_t sp, int ac, char** av);
}

#include "slurm_plugin/request.h"
#include "slurm_plugin/submit.h"

#ifndef CRIUS_SLURM_SYSCONFDIR
#define CRIUS_SLURM_SYSCONFDIR "/etc/slurm"
#endif

namespace {

using crius::slurm::Option;

struct State {
  // plugstack.conf arguments
  std::string conf_path;  // conf=PATH
  std::size_t max_model_bytes = crius::slurm::kMaxModelFileBytes;
  bool validate_names = true;  // validate=full|syntax
  // the options as given (index = Option)
  std::vector<std::string> values = std::vector<std::string>(7);
  std::vector<bool> given = std::vector<bool>(7, false);
  std::string model_toml;  // content of a model file
  std::unique_ptr<crius::slurm::Loaded> conf;
  std::string conf_error;
  bool conf_tried = false;
  std::string remote_error;  // saved in user_init, returned in task_init (pyxis's pattern)
};
State* g = nullptr;

State& state() {
  if (!g) g = new State;
  return *g;
}

// The cluster configuration, loaded on first use (submit host: to check names
// and for --crius-explain).  A missing file is not an error here: slurmctld checks.
const crius::slurm::Loaded* config() {
  State& s = state();
  if (!s.conf_tried) {
    s.conf_tried = true;
    std::string path = s.conf_path.empty() ? crius::slurm::find_crius_conf(CRIUS_SLURM_SYSCONFDIR) : s.conf_path;
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0) {
      s.conf_error = path + ": " + std::strerror(errno);
      return nullptr;
    }
    auto r = crius::slurm::load_config(path);
    if (!r) {
      s.conf_error = r.error();
      return nullptr;
    }
    s.conf = std::make_unique<crius::slurm::Loaded>(std::move(*r));
  }
  return s.conf.get();
}

crius::Result<std::string> read_model_file(const std::string& path, std::size_t limit) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0)
    return crius::make_error("--crius-model: cannot read " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return crius::make_error("--crius-model: " + path + " is not a regular file");
  if (static_cast<std::size_t>(st.st_size) > limit)
    return crius::make_error("--crius-model: " + path + " is " + std::to_string(st.st_size) +
                             " bytes, larger than the " + std::to_string(limit / 1024) + " KiB limit for model files");
  std::ifstream in(path, std::ios::binary);
  if (!in) return crius::make_error("--crius-model: cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.size() > limit)
    return crius::make_error("--crius-model: " + path + " is larger than the " + std::to_string(limit / 1024) + " KiB limit");
  if (text.find('\0') != std::string::npos) return crius::make_error("--crius-model: " + path + " is not a text file");
  return text;
}

// Option callback: cheap, idempotent (Slurm may call it twice), validates where the user sees it.
int option_cb(int val, const char* optarg, int remote) {
  try {
    if (val < 0 || val >= 7) return -1;
    auto opt = static_cast<Option>(val);
    State& s = state();
    std::string value = optarg ? optarg : "";
    s.values[val] = value;
    s.given[val] = true;
    if (remote) return 0;  // checked on the submit host and again by slurmctld
    if (auto r = crius::slurm::check_option(opt, value); !r) {
      slurm_error("crius: %s", r.error().c_str());
      return -1;
    }
    if (opt == Option::model) {
      auto is_file = crius::slurm::check_model_arg(value);
      if (*is_file) {
        auto text = read_model_file(value, s.max_model_bytes);
        if (!text) {
          slurm_error("crius: %s", text.error().c_str());
          return -1;
        }
        auto m = crius::estimator::parse_model(*text, value);
        if (!m) {
          slurm_error("crius: --crius-model: %s", m.error().c_str());
          return -1;
        }
        s.model_toml = std::move(*text);
      } else if (s.validate_names) {
        if (const auto* c = config()) {
          crius::slurm::JobRequest req;
          req.model = value;
          auto m = crius::slurm::resolve_model(req, c->cluster.models);
          if (!m) {
            slurm_error("crius: %s", m.error().c_str());
            return -1;
          }
        }
      }
    } else if (opt == Option::cell && s.validate_names) {
      auto pin = crius::slurm::parse_cell(value);
      const auto* c = config();
      if (c && pin && !pin->gpu.empty() && !c->cluster.gpus.find(pin->gpu)) {
        auto m = c->cluster.gpus.close_matches(pin->gpu);
        std::string hint;
        for (const auto& x : m) hint += (hint.empty() ? " (did you mean " : ", ") + x;
        if (!hint.empty()) hint += "?)";
        slurm_error("crius: --crius-cell: unknown GPU type '%s'%s", pin->gpu.c_str(), hint.c_str());
        return -1;
      }
    }
    return 0;
  } catch (const std::exception& e) {
    slurm_error("crius: internal error: %s", e.what());
    return -1;
  } catch (...) {
    return -1;
  }
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
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (!end || *end || n < 1 || n > 64) {
        slurm_error("crius: plugstack.conf: max_model_kib=%s must be 1..64", v.c_str());
        return -1;
      }
      s.max_model_bytes = static_cast<std::size_t>(n) * 1024;
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

// "NAME=value" list of the options given, as slurmctld will see them.
std::vector<std::string> request_env() {
  State& s = state();
  std::vector<std::string> env;
  for (const auto& info : crius::slurm::options()) {
    auto i = static_cast<std::size_t>(info.id);
    if (s.given[i]) env.push_back(crius::slurm::option_env_name(info.id) + "=" + s.values[i]);
  }
  if (!s.model_toml.empty())
    env.push_back(std::string(crius::slurm::kModelTomlVar) + "=" + crius::slurm::base64_encode(s.model_toml));
  return env;
}

}  // namespace

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
    State& s = state();
    if (!s.model_toml.empty()) {
      std::string b64 = crius::slurm::base64_encode(s.model_toml);
      spank_err_t rc = spank_job_control_setenv(sp, std::string(crius::slurm::kModelTomlVar).c_str(), b64.c_str(), 1);
      if (rc != ESPANK_SUCCESS) {
        slurm_error("crius: cannot forward the model file: %s", spank_strerror(rc));
        return -1;
      }
    }
    // The whole request as slurmctld will parse it: cross-option errors show here first.
    auto env = request_env();
    std::vector<std::string_view> view(env.begin(), env.end());
    auto req = crius::slurm::parse_request(view);
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
      auto d = crius::slurm::decide(*req, *c, part ? part : "");
      if (!d) {
        slurm_error("crius: %s", d.error().c_str());
        return -1;
      }
      std::fputs(crius::slurm::explain_text(*req, *d).c_str(), stderr);
    }
    return 0;
  } catch (const std::exception& e) {
    slurm_error("crius: internal error: %s", e.what());
    return -1;
  } catch (...) {
    return -1;
  }
}

// Remote context: make the Cell and plan visible as CRIUS_* in the tasks.  A batch
// job (and every step inside it) already has them in its environment, written by
// job_submit/crius.  A job allocated by srun or salloc has no batch environment, so
// the plan is computed here for the allocation the job got (same estimator, same
// crius.toml, so it matches what slurmctld chose).
static std::string job_env(spank_t sp, const char* name) {
  char buf[4096];
  if (spank_getenv(sp, name, buf, sizeof buf) != ESPANK_SUCCESS) return {};
  return buf;
}

static void remote_plan(spank_t sp) {
  State& s = state();
  if (!s.given[static_cast<int>(Option::model)]) return;  // not a crius job
  if (!job_env(sp, "CRIUS_CELL").empty()) return;       // batch environment has it
  std::vector<std::string> env;
  for (const auto& info : crius::slurm::options()) {
    auto i = static_cast<std::size_t>(info.id);
    if (s.given[i]) env.push_back(crius::slurm::option_env_name(info.id) + "=" + s.values[i]);
  }
  std::string b64 = job_env(sp, "SLURM_SPANK_CRIUS_MODEL_TOML_B64");
  if (!b64.empty()) env.push_back(std::string(crius::slurm::kModelTomlVar) + "=" + b64);
  std::vector<std::string_view> view(env.begin(), env.end());
  auto req = crius::slurm::parse_request(view);
  if (!req) {
    s.remote_error = req.error();
    return;
  }
  const auto* c = config();
  if (!c) {
    s.remote_error = "no crius configuration on this node (" + s.conf_error + "); CRIUS_* not set";
    return;
  }
  std::string part = job_env(sp, "SLURM_JOB_PARTITION");
  const auto* p = c->cluster.find_partition(part);
  if (!p) {
    s.remote_error = "partition '" + part + "' is not described in crius.toml; CRIUS_* not set";
    return;
  }
  int nodes = std::atoi(job_env(sp, "SLURM_JOB_NUM_NODES").c_str());
  std::string cvd = job_env(sp, "CUDA_VISIBLE_DEVICES");
  int gpn = cvd.empty() ? 0 : 1 + static_cast<int>(std::count(cvd.begin(), cvd.end(), ','));
  if (nodes < 1 || gpn < 1) {
    s.remote_error = "the job has no GPUs (nodes=" + std::to_string(nodes) + ", GPUs per node=" + std::to_string(gpn) +
                     "); CRIUS_* not set";
    return;
  }
  crius::slurm::JobRequest r = *req;
  r.cell.gpu = p->gpu;
  r.cell.nodes = nodes;
  r.cell.gpus_per_node = gpn;
  auto d = crius::slurm::decide(r, *c, p->name);
  if (!d) {
    s.remote_error = d.error();
    return;
  }
  for (const auto& e : d->env) {
    auto eq = e.find('=');
    spank_setenv(sp, e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 0);
  }
}

extern "C" int slurm_spank_user_init(spank_t sp, int, char**) {
  try {
    if (spank_context() != S_CTX_REMOTE) return 0;
    remote_plan(sp);
  } catch (const std::exception& e) {
    state().remote_error = std::string("internal error: ") + e.what();
  } catch (...) {
    state().remote_error = "internal error";
  }
  return 0;  // Slurm ignores user_init errors; task_init reports them
}

extern "C" int slurm_spank_task_init(spank_t, int, char**) {
  if (spank_context() != S_CTX_REMOTE || !g || g->remote_error.empty()) return 0;
  slurm_error("crius: %s", g->remote_error.c_str());
  return 0;  // a warning: the task still runs, without CRIUS_* variables
}

extern "C" int slurm_spank_exit(spank_t, int, char**) {
  delete g;
  g = nullptr;
  return 0;
}
