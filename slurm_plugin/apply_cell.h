// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// How a Cell is written on a Slurm job description: the one definition that
// job_submit (a job being submitted) and criusd (slurm_update_job on a pending
// job) share.  Each passes its own way to replace a string field: slurmctld's
// allocator inside slurmctld, plain pointers to its own strings in criusd.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

extern "C" {
#include <slurm/slurm.h>
}

#include "estimator/plan.h"
#include "slurm_plugin/slurm_compat.h"

namespace crius::slurm {

// set(char** field, const std::string& value) replaces one string field. The CPU counts
// follow the tasks: slurm_update_job only ever raises a job's CPU count by itself, so a job
// moved to fewer nodes would keep the CPUs of its old Cell and never start.
template <typename SetString>
void apply_cell(job_desc_msg_t* d, const estimator::Cell& c, std::uint16_t cpus_per_task, SetString&& set) {
  if (cpus_per_task < 1) cpus_per_task = 1;
  set(&d->partition, c.partition);
  // Typed GPUs where Slurm can change a pending job's type (compat::cell_gpus_tres); on 22.05
  // untyped ones: there the node feature naming the type is what lets criusd move a pending job
  // to another type. The feature is set on every release (sites configure it; a Cell's nodes).
  set(&d->tres_per_node, compat::cell_gpus_tres(c.gpu, c.gpus_per_node));
  set(&d->features, c.gpu);
  d->min_nodes = d->max_nodes = static_cast<std::uint32_t>(c.nodes);
  d->num_tasks = static_cast<std::uint32_t>(c.gpus());
  d->ntasks_per_node = static_cast<std::uint16_t>(c.gpus_per_node);
  d->min_cpus = static_cast<std::uint32_t>(c.gpus()) * cpus_per_task;
  d->pn_min_cpus = static_cast<std::uint16_t>(c.gpus_per_node * cpus_per_task);
}

// A job's own TRES request ("gres:gpu:a100:2,gres:nvme:1"), as job_submit keeps what a Cell does
// not give: whether it asks for GPUs, and its other entries, kept as they are. nullopt for a
// request over 4 KiB (slurmctld's client is anyone's; the plugin bounds what it reads).
struct TresRequest {
  bool gpus = false;
  std::string others;  // comma-separated, as given
};
inline std::optional<TresRequest> split_tres(const char* tres) {
  TresRequest out;
  if (!tres) return out;
  std::string_view rest(tres);
  if (rest.size() > 4096) return std::nullopt;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    // "gres:gpu..." (22.05's clients), "gres/gpu..." (24.11's, and the TRES name), "gpu..." (bare).
    std::string_view name = item;
    for (std::string_view prefix : {"gres:", "gres/"})
      if (name.substr(0, prefix.size()) == prefix) name.remove_prefix(prefix.size());
    if (name.substr(0, 3) == "gpu" && (name.size() == 3 || name[3] == ':' || name[3] == '=')) {
      out.gpus = true;
      continue;
    }
    if (!out.others.empty()) out.others += ',';
    out.others.append(item);
  }
  return out;
}

}  // namespace crius::slurm
