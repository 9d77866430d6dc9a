// The crius record of the running Slurm job (AdminComment, see job_submit_crius(8)).
// When criusd(8) moved the job to another Cell after submission, the job's CRIUS_*
// environment still describes the old Cell; the record holds the new Cell's plan.
#pragma once

#include <optional>
#include <string>

namespace crius::launcher {

// The estimate JSON (with its "plan") criusd wrote for the job's current Cell, or
// nullopt when the job was not moved by criusd or the record cannot be read.
std::optional<std::string> moved_plan_json(const std::string& slurm_job_id, std::string* cell);

}  // namespace crius::launcher
