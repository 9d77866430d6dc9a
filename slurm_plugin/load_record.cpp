// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/load_record.h"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "common/util.h"
#include "slurm_plugin/job_info.h"

namespace crius::slurm {

bool slurm_config_reachable(const std::string& sysconfdir) {
  auto is_file = [](const std::string& p) { return !p.empty() && access(p.c_str(), R_OK) == 0; };
  if (const char* c = std::getenv("SLURM_CONF"); c && *c) return is_file(c);
  if (const char* s = std::getenv("SLURM_CONF_SERVER"); s && *s) return true;
  return is_file(sysconfdir + "/slurm.conf") || is_file("/run/slurm/conf/slurm.conf");
}

void init_slurm_client() {
  static const bool initialised = (slurm_init(nullptr), true);
  (void)initialised;
}

Result<std::optional<job::Record>> load_job_record(std::uint32_t id, JobSeen* seen) {
  job_info_msg_t* msg = nullptr;
  // SHOW_LOCAL: the job runs here; without it libslurm asks slurmctld for the federation first.
  if (slurm_load_job(&msg, id, SHOW_DETAIL | SHOW_LOCAL) != SLURM_SUCCESS)
    return make_error("cannot read job " + std::to_string(id) + " from slurmctld: " + slurm_strerror(errno));
  std::string comment;
  const slurm_job_info_t* j = find_job(msg, id);
  if (j && j->admin_comment) comment = j->admin_comment;
  if (seen) *seen = {j && j->comment ? j->comment : "", j ? job_id_string(*j) : std::to_string(id)};
  slurm_free_job_info_msg(msg);
  auto rec = job::parse_record(comment);
  if (!rec) return std::optional<job::Record>();
  if (!*rec) return make_error("job " + std::to_string(id) + ": " + rec->error());
  return std::optional<job::Record>(std::move(rec->value()));
}

Result<std::string> node_address(const std::string& node) {
  node_info_msg_t* msg = nullptr;
  if (slurm_load_node_single(&msg, const_cast<char*>(node.c_str()), SHOW_ALL) != SLURM_SUCCESS)
    return make_error("cannot read node " + util::printable(node, 64) + " from slurmctld: " + slurm_strerror(errno));
  std::string addr;
  if (msg && msg->record_count == 1 && msg->node_array[0].node_addr) addr = msg->node_array[0].node_addr;
  slurm_free_node_info_msg(msg);
  if (addr.empty()) return make_error("slurmctld has no address for node " + util::printable(node, 64));
  return addr;
}

Result<std::optional<job::Record>> load_job_record(const std::string& job_id, JobSeen* seen) {
  auto id = util::to_int(job_id);
  if (!id || *id <= 0 || *id > 0xffffffffLL) return make_error("SLURM_JOB_ID '" + job_id + "' is not a job id");
  return load_job_record(static_cast<std::uint32_t>(*id), seen);
}

}  // namespace crius::slurm
