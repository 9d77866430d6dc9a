// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/job_comment.h"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include <cerrno>
#include <string>

#include "slurm_plugin/job_info.h"

namespace crius::slurm {

Result<void> report_progress(std::uint32_t id, const job::Progress& p) {
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, id, SHOW_DETAIL) != SLURM_SUCCESS)
    return make_error("cannot read job " + std::to_string(id) + ": " + slurm_strerror(errno));
  std::string comment, id_str = std::to_string(id);
  if (const slurm_job_info_t* j = find_job(msg, id)) {
    if (j->comment) comment = j->comment;
    id_str = job_id_string(*j);
  }
  slurm_free_job_info_msg(msg);
  if (!comment.empty() && !job::parse_progress_comment(comment))
    return make_error("job " + std::to_string(id) + " has a Comment of its own; its progress is not reported");
  const std::string text = job::progress_comment(p);
  if (text == comment) return {};
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  d.job_id_str = id_str.data();
  d.comment = const_cast<char*>(text.c_str());
  if (const int rc = update_job(&d); rc != SLURM_SUCCESS) return make_error("cannot write job " + id_str + "'s Comment: " + slurm_strerror(rc));
  return {};
}

}  // namespace crius::slurm
