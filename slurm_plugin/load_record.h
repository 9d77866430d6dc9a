// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The crius record of a job, read from slurmctld (one slurm_load_job, as the
// calling user): what srun's SPANK plugin gives a job's tasks and what
// crius-launch runs.  The host process provides libslurm (srun) or links it
// (crius-launch).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "estimator/result.h"
#include "job/record.h"

namespace crius::slurm {

// What else the read saw of the job: its Comment and Slurm's name for it ("A_T" for a task
// of an array), for crius-launch's progress reports (job_comment.h), which then need no read.
struct JobSeen {
  std::string comment, id;
};

// nullopt: the job has no crius record; an error: slurmctld did not answer, or
// the record does not read. With `seen`, it is filled too.
Result<std::optional<job::Record>> load_job_record(std::uint32_t job_id, JobSeen* seen = nullptr);
// The same for a job id given as text (SLURM_JOB_ID).
Result<std::optional<job::Record>> load_job_record(const std::string& job_id, JobSeen* seen = nullptr);

// Slurm's NodeAddr of a node (its NodeName where NodeAddr is not set): where a job's
// rendezvous (MASTER_ADDR) is reached, whatever the node is called.
Result<std::string> node_address(const std::string& node);

// For a program that links libslurm (crius-launch), before its first libslurm call, once:
// since 24.11 the calls need slurm_init() (its hash and auth plugins); 22.05 started them on
// first use. Never from a plugin: srun and slurmctld have done it.
// Whether libslurm can find a configuration here (SLURM_CONF, SYSCONFDIR/slurm.conf, a
// configless slurmd's cache in /run/slurm/conf, or SLURM_CONF_SERVER): slurm_init() ends the
// process when it cannot (a container without slurm.conf).
bool slurm_config_reachable(const std::string& sysconfdir);
void init_slurm_client();

}  // namespace crius::slurm
