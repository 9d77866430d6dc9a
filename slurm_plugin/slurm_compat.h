// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// What differs between the Slurm releases crius's plugins are built against, in one place.
// Each difference names the release and the Slurm source file where it starts. Include after
// <slurm/slurm.h> (SLURM_VERSION_NUMBER).
#pragma once

#include <cstdint>
#include <string>

#ifndef SLURM_VERSION_NUM
#error "include <slurm/slurm.h> first"
#endif

// libslurm exports job_state_string() and the pending reasons' names (src/common/slurm_xlator.h)
// without declaring them in slurm.h. job_reason_string() became job_state_reason_string() in 24.05
// (src/common/job_state_reason.c); the names themselves ("JobHeldUser", "Dependency") did not change.
extern "C" {
char* slurm_job_state_string(uint32_t inx);
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 5, 0)
const char* slurm_job_state_reason_string(enum job_state_reason inx);
#else
char* slurm_job_reason_string(enum job_state_reason inx);
#endif
}

namespace crius::slurm::compat {

// A job's GPUs per node in tres_per_node: "gres:gpu:N" up to 23.02, whose GRES parser looks for
// "gres:" (src/common/gres.c, _get_next_gres); "gres/gpu:N" from 23.11, whose parser looks for
// "gres" and skips only a '/' (src/interfaces/gres.c -> slurm_get_next_tres in
// src/common/slurm_protocol_defs.c), so 24.11 refuses "gres:gpu:N" as an invalid TRES.
inline std::string gpus_per_node_tres(int gpus_per_node) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
  return "gres/gpu:" + std::to_string(gpus_per_node);
#else
  return "gres:gpu:" + std::to_string(gpus_per_node);
#endif
}

// A crius job's GPUs per node: typed ("gres/gpu:a100:8") where Slurm can change a pending job's
// GPU type (23.11 and later; criusd moves pending jobs between types), so QOS and association
// limits on gres/gpu:TYPE, and accounting and fairshare by type, see the job as any other; 22.05
// cannot, so its request is untyped and the type a node feature (criusd counts the per-type
// limits itself there: criusd(8), SLURM'S RULES). The type is the Cell's GPU id, which must be
// the GRES type of gres.conf (job_submit_crius(8)).
inline constexpr bool kTypedGpuRequest = SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0);
inline std::string cell_gpus_tres(const std::string& gpu, int gpus_per_node) {
  if constexpr (kTypedGpuRequest) return "gres/gpu:" + gpu + ":" + std::to_string(gpus_per_node);
  return gpus_per_node_tres(gpus_per_node);
}

inline const char* job_reason_name(uint32_t reason) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 5, 0)
  return slurm_job_state_reason_string(static_cast<enum job_state_reason>(reason));
#else
  return slurm_job_reason_string(static_cast<enum job_state_reason>(reason));
#endif
}

// The job id slurm_submit_batch_job() answers: its own field until 25.05, the job's
// slurm_step_id_t from 25.11 (slurm/slurm.h, submit_response_msg_t).
inline std::uint32_t submitted_job_id(const submit_response_msg_t& response) {
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
  return response.step_id.job_id;
#else
  return response.job_id;
#endif
}

// Not a declaration but a behaviour: 24.11 reuses slurmctld's RPC threads and reads a stale
// errno on some job updates; job_submit_crius.cpp's job_modify clears it (ClearErrno, why there).
//
// Renamed without a macro to test, so the code holds these with `auto*` and names neither:
// - hostlist_t: `struct hostlist*` until 23.02, `struct hostlist` since 23.11 (slurm/slurm.h);
//   slurm_hostlist_create() returns a pointer in both.
// - List and ListIterator (pointer types) are gone in 24.11; list_t and list_itr_t (the
//   structs) exist from 23.02 (slurm/slurm.h).
// - slurm_get_errno() is gone in 24.11 (src/common/slurm_errno.c); it only returned errno,
//   which libslurm sets in every release.

// job_submit plugins' job_modify() gained `char** err_msg` (a message for the user) in 23.02
// (src/slurmctld/job_submit.c, slurm_submit_ops_t.modify).
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define CRIUS_JOB_MODIFY_HAS_ERR_MSG 1
#else
#define CRIUS_JOB_MODIFY_HAS_ERR_MSG 0
#endif

// job_modify() is given slurmctld's job_record_t, whose header is not installed. Its first
// fields are the same from 22.05 (src/slurmctld/slurmctld.h) through 25.05
// (src/common/job_record.h): the magic cookie, then account, then admin_comment (where
// job_submit_crius keeps the crius record). 25.11 put the job's slurm_step_id_t (slurm/slurm.h)
// before the magic cookie (src/common/job_record.h: "DO NOT REORDER THE STEP_ID"), and 26.05
// kept it. Nothing past admin_comment is read.
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
struct JobRecordHead {
  slurm_step_id_t step_id;
  std::uint32_t magic;
  char* account;
  char* admin_comment;
};
#else
struct JobRecordHead {
  std::uint32_t magic;
  char* account;
  char* admin_comment;
};
#endif
inline constexpr std::uint32_t kJobMagic = 0xf0b7392c;  // JOB_MAGIC, the same files

// A job's AdminComment as job_modify reads it: `known` false when the record's head is not the
// one above (its magic differs: a later release moved the fields, as job_record_t is private).
// Then crius cannot tell a crius job from another, and job_modify refuses every Cell edit by a
// user (it fails closed, and says why) rather than let a crius job's Cell change unseen.
struct AdminCommentRead {
  bool known = false;
  const char* text = nullptr;
};
inline AdminCommentRead job_admin_comment(const void* job_record) {
  const auto* head = static_cast<const JobRecordHead*>(job_record);
  if (!head || head->magic != kJobMagic) return {};
  return {true, head->admin_comment};
}

}  // namespace crius::slurm::compat
