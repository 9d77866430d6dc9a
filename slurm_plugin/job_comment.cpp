#include "slurm_plugin/job_comment.h"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include <string>

namespace crius::slurm {

Result<void> report_progress(std::uint32_t id, const job::Progress& p) {
  job_info_msg_t* msg = nullptr;
  if (slurm_load_job(&msg, id, SHOW_DETAIL) != SLURM_SUCCESS)
    return make_error("cannot read job " + std::to_string(id) + ": " + slurm_strerror(slurm_get_errno()));
  std::string comment;
  if (msg->record_count > 0 && msg->job_array[0].comment) comment = msg->job_array[0].comment;
  slurm_free_job_info_msg(msg);
  if (!comment.empty() && !job::parse_progress_comment(comment))
    return make_error("job " + std::to_string(id) + " has a Comment of its own; its progress is not reported");
  const std::string text = job::progress_comment(p);
  if (text == comment) return {};
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  d.job_id = id;
  d.comment = const_cast<char*>(text.c_str());
  if (slurm_update_job(&d) != SLURM_SUCCESS)
    return make_error("cannot write job " + std::to_string(id) + "'s Comment: " + slurm_strerror(slurm_get_errno()));
  return {};
}

}  // namespace crius::slurm
