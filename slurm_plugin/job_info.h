// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Naming one job to slurmctld, and finding it in an answer, when it may be a task of a job
// array: asked for by the array's id, slurmctld answers with (and updates) every task.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>

extern "C" {
#include <slurm/slurm.h>
}

namespace crius::slurm {

// The job with this id in a slurm_load_job() answer (not the first record: asked for by the id
// of an array, slurmctld answers with all of its tasks).
inline const slurm_job_info_t* find_job(const job_info_msg_t* msg, std::uint32_t id) {
  for (std::uint32_t i = 0; msg && i < msg->record_count; ++i)
    if (msg->job_array[i].job_id == id) return &msg->job_array[i];
  return nullptr;
}

// What an update names to reach this job alone: "A_T" for a task of an array (a plain id that
// is the array's reaches every task), else the id.
inline std::string job_id_string(const slurm_job_info_t& j) {
  if (j.array_job_id != 0 && j.array_task_id != NO_VAL)
    return std::to_string(j.array_job_id) + "_" + std::to_string(j.array_task_id);
  return std::to_string(j.job_id);
}

// Slurm's code for a request named by job id text (slurm_update_job2, slurm_requeue2): rc, or
// the first error of the per-task answers in `resp`, which it frees.
inline int first_error(int rc, job_array_resp_msg_t* resp) {
  if (resp) {
    for (std::uint32_t i = 0; i < resp->job_array_count && rc == SLURM_SUCCESS; ++i)
      rc = static_cast<int>(resp->error_code[i]);
    slurm_free_job_array_resp(resp);
  }
  return rc;
}

// slurm_update_job2 of a description that names its job by job_id_str: Slurm's code.
inline int update_job(job_desc_msg_t* d) {
  job_array_resp_msg_t* resp = nullptr;
  const int rc = slurm_update_job2(d, &resp) == SLURM_SUCCESS ? SLURM_SUCCESS : errno;
  return first_error(rc, resp);
}

}  // namespace crius::slurm
