// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// A trace replayed on a real Slurm cluster (crius-replay(1)): what each job must ask Slurm
// for without crius, and the runs Slurm's accounting recorded, read back as a SimResult so
// that live and simulated runs share one summary, JSON and plot.
#pragma once

#include <string>
#include <vector>

#include "scheduler/simulator.h"

namespace crius::scheduler {

// One row per job: its trace fields and, for Slurm alone, the shape a user would ask for
// (requested_shape: the fewest nodes of the requested GPU count that fit it in memory)
// and the Cell-optimal iteration time on it, and the job's kind (JobKind).
//   job,submit_s,model,global_batch,iterations,deadline_s,gpu,gpus,partition,nodes,
//   gpus_per_node,iter_time_s,kind
// A job no shape of its request fits gets empty shape columns.
Result<void> write_replay_jobs(const std::string& path, const std::vector<Job>& jobs, const ClusterState& cluster,
                               ThroughputSource& tput);

// The runs of a replay, one row per run of a job (a requeued job has several), in trace
// seconds:  job,submit_s,start_s,end_s,state,gpu,gpus
// `job` names a trace job; state is Slurm's (COMPLETED, REQUEUED, FAILED, ...). A job ends
// finished when its last run COMPLETED; every run after the first counts as a
// reconfiguration. Errors name the file and line.
Result<SimResult> load_live(const std::string& path, const std::string& name, const std::vector<Job>& trace);

}  // namespace crius::scheduler
