#include "slurm_plugin/criusd/slurm_client.h"

#include "common/util.h"
#include "slurm_plugin/apply_cell.h"
#include "slurm_plugin/job_info.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
// Exported by libslurm in 22.05 but not declared in slurm.h.
char* slurm_job_state_string(uint32_t inx);
char* slurm_job_reason_string(enum job_state_reason inx);
}

namespace crius::slurm {
namespace {

std::string str(const char* s) { return s ? std::string(s) : std::string(); }

// libslurm sets errno (slurm_get_errno() returned it, and is gone from Slurm 24.11's slurm.h).
Error slurm_failure(const std::string& what) {
  const int code = errno;
  return make_error(what + ": " + slurm_strerror(code), code);
}

// "gpu:a100:8(S:0)" -> type "a100", count 8; several entries comma-separated.
void parse_gres(const std::string& gres, std::string* type, int* count) {
  *count = 0;
  for (const auto& item : util::split(gres, ',', true)) {
    std::string entry = item.substr(0, item.find('('));
    auto parts = util::split(entry, ':', true);
    if (parts.empty() || parts[0] != "gpu") continue;
    int n = parts.size() >= 2 ? std::atoi(parts.back().c_str()) : 0;
    if (parts.size() == 3 && type && type->empty()) *type = parts[1];
    *count += n;
  }
}

std::string user_name(uint32_t uid) {
  struct passwd pw{}, *out = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &out) == 0 && out) return pw.pw_name;
  return std::to_string(uid);
}

// The hold a requeue-hold placed (job_mgr.c, job_requeue() with JOB_REQUEUE_HOLD, 22.05 and
// 24.11: priority 0, reason WAIT_HELD_USER and this state_desc, which Slurm sets nowhere else),
// with nothing since: a release clears state_desc, an operator's hold makes the reason
// WAIT_HELD (_update_job(), "Authorized user can change from user hold to admin hold").
bool held_by_requeue(const slurm_job_info_t& j) {
  return j.priority == 0 && j.state_reason == WAIT_HELD_USER && j.state_desc &&
         std::strcmp(j.state_desc, "job requeued in held state") == 0;
}

std::vector<std::string> expand_hostlist(const char* expr) {
  std::vector<std::string> out;
  if (!expr || !*expr) return out;
  hostlist_t hl = slurm_hostlist_create(expr);
  if (!hl) return out;
  while (char* h = slurm_hostlist_shift(hl)) {
    out.emplace_back(h);
    std::free(h);
  }
  slurm_hostlist_destroy(hl);
  return out;
}

}  // namespace

SlurmClient::SlurmClient(const std::string& conf) { slurm_init(conf.empty() ? nullptr : conf.c_str()); }
SlurmClient::~SlurmClient() { slurm_fini(); }

Result<Snapshot> SlurmClient::snapshot() {
  Snapshot snap;
  snap.now = std::time(nullptr);

  node_info_msg_t* nodes = nullptr;
  // SHOW_DETAIL fills gres_used; node partitions come from the partition table.
  if (slurm_load_node(0, &nodes, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) return slurm_failure("slurm_load_node");
  partition_info_msg_t* parts = nullptr;
  if (slurm_load_partitions(0, &parts, SHOW_ALL) != SLURM_SUCCESS) {
    slurm_free_node_info_msg(nodes);
    return slurm_failure("slurm_load_partitions");
  }
  slurm_populate_node_partitions(nodes, parts);
  slurm_free_partition_info_msg(parts);
  for (uint32_t i = 0; i < nodes->record_count; ++i) {
    const node_info_t& n = nodes->node_array[i];
    if (!n.name) continue;
    SlurmNode node;
    node.name = n.name;
    node.partitions = util::split(str(n.partitions), ',', true);
    parse_gres(str(n.gres), &node.gpu, &node.gpus);
    std::string unused_type;
    parse_gres(str(n.gres_used), &unused_type, &node.gpus_used);
    if (node.gpu.empty()) {
      auto features = util::split(str(n.features), ',', true);
      if (!features.empty()) node.gpu = features.front();
    }
    uint32_t base = n.node_state & NODE_STATE_BASE;
    bool flagged = n.node_state & (NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_NO_RESPOND);
    node.usable = !flagged && (base == NODE_STATE_IDLE || base == NODE_STATE_ALLOCATED ||
                               base == NODE_STATE_MIXED);
    snap.nodes.push_back(std::move(node));
  }
  slurm_free_node_info_msg(nodes);

  reserve_info_msg_t* resvs = nullptr;
  if (slurm_load_reservations(0, &resvs) != SLURM_SUCCESS) return slurm_failure("slurm_load_reservations");
  for (uint32_t i = 0; i < resvs->record_count; ++i) {
    const reserve_info_t& r = resvs->reservation_array[i];
    SlurmReservation resv;
    resv.name = str(r.name);
    resv.start_time = r.start_time;
    resv.end_time = r.end_time;
    resv.all_nodes = str(r.node_list) == "ALL";
    if (!resv.all_nodes) resv.nodes = expand_hostlist(r.node_list);
    snap.reservations.push_back(std::move(resv));
  }
  slurm_free_reservation_info_msg(resvs);

  job_info_msg_t* jobs = nullptr;
  if (slurm_load_jobs(0, &jobs, SHOW_ALL) != SLURM_SUCCESS) return slurm_failure("slurm_load_jobs");
  for (uint32_t i = 0; i < jobs->record_count; ++i) {
    const slurm_job_info_t& j = jobs->job_array[i];
    SlurmJob job;
    job.id = j.job_id;
    if (j.array_job_id != 0) {
      job.array_job_id = j.array_job_id;
      if (j.array_task_id != NO_VAL) job.array_task_id = j.array_task_id;
      job.array_tasks = str(j.array_task_str);
    }
    job.het_job_id = j.het_job_id == NO_VAL ? 0 : j.het_job_id;
    job.name = str(j.name);
    job.state = str(slurm_job_state_string(j.job_state));
    job.partition = str(j.partition);
    job.features = str(j.features);
    job.tres_per_node = str(j.tres_per_node);
    job.admin_comment = str(j.admin_comment);
    job.comment = str(j.comment).substr(0, 256);  // the user's text: only a progress report is read
    job.nodes = expand_hostlist(j.nodes);
    job.req_nodes = expand_hostlist(j.req_nodes);
    job.num_nodes = static_cast<int>(j.num_nodes);
    job.submit_time = j.submit_time;
    job.start_time = j.start_time;
    job.requeued_held = held_by_requeue(j);
    job.end_time = j.end_time;
    job.restarts = j.restart_cnt;
    job.cpus_per_task = j.cpus_per_task == NO_VAL16 || j.cpus_per_task == 0 ? 1 : j.cpus_per_task;
    job.priority = j.priority;
    job.reason = str(slurm_job_reason_string(static_cast<enum job_state_reason>(j.state_reason)));
    job.begin_time = j.state_reason == WAIT_TIME ? j.start_time : 0;  // --begin in the future
    job.eligible_time = j.eligible_time;
    job.reservation = str(j.resv_name);
    if (j.time_limit != INFINITE && j.time_limit != NO_VAL) job.time_limit_s = std::int64_t{j.time_limit} * 60;
    job.batch = j.batch_flag != 0;
    job.requeue = j.requeue != 0;
    job.user = user_name(j.user_id);
    job.account = str(j.account);
    job.qos = str(j.qos);
    snap.jobs.push_back(std::move(job));
  }
  slurm_free_job_info_msg(jobs);
  return snap;
}

Result<void> SlurmClient::update_cell(const std::string& id, const estimator::Cell& cell, std::uint16_t cpus_per_task,
                                      bool clear_requeue_delay, const std::vector<std::string>* nodes) {
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  d.job_id_str = const_cast<char*>(id.c_str());
  std::vector<std::string> strings;  // own the values the job description points to
  strings.reserve(4);
  apply_cell(&d, cell, cpus_per_task, [&](char** field, const std::string& value) {
    strings.push_back(value);
    *field = strings.back().data();
  });
  // Slurm delays a requeued job by the credential lifetime (about two minutes). It may start
  // sooner, but not within the second of its requeue: slurmd refuses a credential of that
  // job created in the second it was revoked, and the job would fail to launch.
  if (clear_requeue_delay) d.begin_time = std::time(nullptr) + 2;
  if (nodes) {  // "" clears a pin
    strings.push_back(util::join(*nodes, ","));
    d.req_nodes = strings.back().data();
  }
  if (int rc = update_job(&d); rc != SLURM_SUCCESS)
    return make_error("update of job " + id + " to " + estimator::describe(cell) + ": " + slurm_strerror(rc), rc);
  return {};
}

Result<void> SlurmClient::set_record(const std::string& id, const std::string& record, bool release) {
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  d.job_id_str = const_cast<char*>(id.c_str());
  d.admin_comment = const_cast<char*>(record.c_str());
  if (release) d.priority = INFINITE;  // what `scontrol release` sends
  if (int rc = update_job(&d); rc != SLURM_SUCCESS)
    return make_error(std::string(release ? "record and release" : "record") + " of job " + id + ": " +
                      slurm_strerror(rc), rc);
  return {};
}

Result<void> SlurmClient::signal(const std::string& id, int signo) {
  // The batch shell only, as `sbatch --signal=B:` does: it is crius-launch (exec'd) or a shell
  // that traps and forwards. Signalling every process would reach the srun that mpirun starts
  // its daemons with, which forwards the signal to the daemons and kills them.
  if (slurm_kill_job2(id.c_str(), static_cast<uint16_t>(signo), KILL_JOB_BATCH, nullptr) != SLURM_SUCCESS)
    return slurm_failure("signal " + std::to_string(signo) + " to job " + id);
  return {};
}

Result<void> SlurmClient::requeue_held(const std::string& id) {
  job_array_resp_msg_t* resp = nullptr;
  int rc = slurm_requeue2(const_cast<char*>(id.c_str()), JOB_REQUEUE_HOLD, &resp);
  rc = first_error(rc, resp);
  if (rc != SLURM_SUCCESS) return make_error("requeue of job " + id + ": " + slurm_strerror(rc), rc);
  return {};
}

}  // namespace crius::slurm
