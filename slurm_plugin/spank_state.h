// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// State shared by the SPANK plugin's parts (spank_crius(8)): spank_crius.cpp (the
// plugin symbols, plugstack.conf arguments and the dispatch on the context) and
// spank_submit.cpp (the local and allocator contexts: sbatch, srun and salloc on the
// submit host).  In slurmstepd (remote context, root) the plugin does nothing but
// accept its options: no estimation, no parsing of user data as root.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

#include "slurm_plugin/request.h"
#include "slurm_plugin/submit.h"

namespace crius::spank {

using slurm::kOptionCount;

struct State {
  // plugstack.conf arguments
  std::string conf_path;  // conf=PATH
  std::size_t max_model_bytes = slurm::kMaxModelFileBytes;
  bool validate_names = true;  // validate=full|syntax
  // the options as given (index = slurm::Option)
  std::vector<std::string> values = std::vector<std::string>(kOptionCount);
  std::vector<bool> given = std::vector<bool>(kOptionCount, false);
  std::string model_spec;  // a model file's model, estimator::to_spec
  std::unique_ptr<slurm::Loaded> conf;
  std::string conf_error;
  bool conf_tried = false;
};
State& state();
void reset_state();

// plugstack.conf arguments: conf=PATH, max_model_kib=N, validate=full|syntax.
int parse_args(int ac, char** av);
bool any_given();

// Submit host (local and allocator contexts).
int option_cb(int val, const char* optarg, int remote);
int submit_post_opt(spank_t sp);

// srun, after the allocation and before the tasks start (local context): the job's
// CRIUS_* variables from its record, into the tasks' environment.
int local_user_init(spank_t sp);

}  // namespace crius::spank
