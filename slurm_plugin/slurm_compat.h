// What differs between the Slurm releases crius's plugins are built against, in one place.
// Each difference names the release and the Slurm source file where it starts. Include after
// <slurm/slurm.h> (SLURM_VERSION_NUMBER).
#pragma once

#include <cstdint>

#ifndef SLURM_VERSION_NUM
#error "include <slurm/slurm.h> first"
#endif

namespace crius::slurm::compat {

// job_submit plugins' job_modify() gained `char** err_msg` (a message for the user) in 23.02
// (src/slurmctld/job_submit.c, slurm_submit_ops_t.modify).
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define CRIUS_JOB_MODIFY_HAS_ERR_MSG 1
#else
#define CRIUS_JOB_MODIFY_HAS_ERR_MSG 0
#endif

// job_modify() is given slurmctld's job_record_t, whose header is not installed. Its first
// fields are the same from 22.05 (src/slurmctld/slurmctld.h) through 24.11 and 25.05
// (src/common/job_record.h): the magic cookie, then account, then admin_comment (where
// job_submit_crius keeps the crius record). Nothing past them is read.
struct JobRecordHead {
  std::uint32_t magic;
  char* account;
  char* admin_comment;
};
inline constexpr std::uint32_t kJobMagic = 0xf0b7392c;  // JOB_MAGIC, the same files

// The job's AdminComment, or null when the record is not a job record (its magic differs).
inline const char* job_admin_comment(const void* job_record) {
  const auto* head = static_cast<const JobRecordHead*>(job_record);
  return head && head->magic == kJobMagic ? head->admin_comment : nullptr;
}

}  // namespace crius::slurm::compat
