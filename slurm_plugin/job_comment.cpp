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

ProgressReporter::ProgressReporter(std::uint32_t job_id, const JobSeen* seen) : m_id(job_id) {
  if (!seen) return;
  m_checked = true;
  m_id_str = seen->id;
  m_users = !seen->comment.empty() && !job::parse_progress_comment(seen->comment);
}

Result<void> ProgressReporter::report(const job::Progress& p) {
  const std::string id = std::to_string(m_id);
  if (!m_checked) {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, m_id, SHOW_DETAIL | SHOW_LOCAL) != SLURM_SUCCESS)
      return make_error("cannot read job " + id + ": " + slurm_strerror(errno));
    std::string comment;
    m_id_str = id;
    if (const slurm_job_info_t* j = find_job(msg, m_id)) {
      if (j->comment) comment = j->comment;
      m_id_str = job_id_string(*j);
    }
    slurm_free_job_info_msg(msg);
    m_checked = true;
    m_users = !comment.empty() && !job::parse_progress_comment(comment);
  }
  if (m_users) return make_error("job " + id + " has a Comment of its own; its progress is not reported");
  const std::string text = job::progress_comment(p);
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  d.job_id_str = m_id_str.data();
  d.comment = const_cast<char*>(text.c_str());
  if (const int rc = update_job(&d); rc != SLURM_SUCCESS) return make_error("cannot write job " + m_id_str + "'s Comment: " + slurm_strerror(rc));
  return {};
}

}  // namespace crius::slurm
