// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/criusd/slurm_client.h"

#include "common/util.h"
#include "slurm_plugin/apply_cell.h"
#include "slurm_plugin/job_info.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <string_view>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>
}
#include "slurm_plugin/slurm_compat.h"

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

// AccountingStorageEnforce=limits: ACCOUNTING_ENFORCE_LIMITS, SLURM_BIT(1) in
// src/common/read_config.h (22.05 and 24.11; not in the installed headers).
constexpr uint16_t kEnforceLimits = 1u << 1;

// "a,b" or "ALL" (or none) as a list; ALL and none are the empty list: everyone.
std::vector<std::string> name_list(const char* s) {
  if (!s || std::strcmp(s, "ALL") == 0) return {};
  return util::split(s, ',', true);
}

// A per-TRES array of slurmctld's association manager (positions as in tres_names) as GPUs,
// nodes and CPUs; INFINITE64 and NO_VAL64 are no limit (-1).
struct TresPositions {
  int gpu = -1, node = -1, cpu = -1, mem = -1;
  std::map<std::string, int> typed;  // gres/gpu:TYPE, by type
  GpusNodes of(const uint64_t* values) const {
    GpusNodes out;
    auto one = [&](int i) -> std::int64_t {
      if (!values || i < 0 || values[i] == INFINITE64 || values[i] == NO_VAL64) return -1;
      return static_cast<std::int64_t>(values[i]);
    };
    out.gpus = one(gpu);
    out.nodes = one(node);
    out.cpus = one(cpu);
    out.mem_mb = one(mem);
    for (const auto& [type, i] : typed)
      if (std::int64_t v = one(i); v >= 0) out.typed[type] = v;
    return out;
  }
};

// A limit in minutes as seconds; INFINITE and NO_VAL are none (-1).
std::int64_t minutes_s(uint32_t minutes) {
  return minutes == INFINITE || minutes == NO_VAL ? -1 : std::int64_t{minutes} * 60;
}

// The association and QOS limits and usage slurmctld holds (what `scontrol show assoc_mgr`
// shows): readable only with accounting; none otherwise.
void read_limits(Snapshot& snap, const std::function<std::string(uint32_t)>& user_of) {
  assoc_mgr_info_request_msg_t req{};
  req.flags = ASSOC_MGR_INFO_FLAG_ASSOC | ASSOC_MGR_INFO_FLAG_QOS | ASSOC_MGR_INFO_FLAG_USERS;
  assoc_mgr_info_msg_t* msg = nullptr;
  if (slurm_load_assoc_mgr_info(&req, &msg) != SLURM_SUCCESS || !msg) return;
  TresPositions pos;
  for (uint32_t i = 0; i < msg->tres_cnt && msg->tres_names; ++i) {
    if (!msg->tres_names[i]) continue;
    if (std::strcmp(msg->tres_names[i], "gres/gpu") == 0) pos.gpu = static_cast<int>(i);
    if (std::strcmp(msg->tres_names[i], "node") == 0) pos.node = static_cast<int>(i);
    if (std::strcmp(msg->tres_names[i], "cpu") == 0) pos.cpu = static_cast<int>(i);
    if (std::strcmp(msg->tres_names[i], "mem") == 0) pos.mem = static_cast<int>(i);
    if (std::strncmp(msg->tres_names[i], "gres/gpu:", 9) == 0) pos.typed[msg->tres_names[i] + 9] = static_cast<int>(i);
  }
  if (msg->assoc_list) {
    auto* it = slurm_list_iterator_create(msg->assoc_list);
    while (auto* a = static_cast<slurmdb_assoc_rec_t*>(slurm_list_next(it))) {
      SlurmAssoc assoc;
      assoc.id = a->id;
      assoc.parent_id = a->parent_id;
      assoc.user = str(a->user);
      assoc.account = str(a->acct);
      assoc.partition = str(a->partition);
      if (a->user) assoc.uid = a->uid;
      assoc.default_qos_id = a->def_qos_id == NO_VAL ? 0 : a->def_qos_id;
      assoc.max_per_job = pos.of(a->max_tres_ctld);
      assoc.max_per_node = pos.of(a->max_tres_pn_ctld);
      assoc.grp = pos.of(a->grp_tres_ctld);
      assoc.max_wall_s = minutes_s(a->max_wall_pj);
      if (a->usage) assoc.used = pos.of(a->usage->grp_used_tres);
      snap.assocs.push_back(std::move(assoc));
    }
    slurm_list_iterator_destroy(it);
  }
  if (msg->qos_list) {
    auto* it = slurm_list_iterator_create(msg->qos_list);
    while (auto* q = static_cast<slurmdb_qos_rec_t*>(slurm_list_next(it))) {
      SlurmQos qos;
      qos.id = q->id;
      qos.name = str(q->name);
      qos.max_per_job = pos.of(q->max_tres_pj_ctld);
      qos.max_per_node = pos.of(q->max_tres_pn_ctld);
      qos.max_per_user = pos.of(q->max_tres_pu_ctld);
      qos.grp = pos.of(q->grp_tres_ctld);
      qos.max_wall_s = minutes_s(q->max_wall_pj);
      if (q->usage) {
        qos.used = pos.of(q->usage->grp_used_tres);
        if (q->usage->user_limit_list) {
          auto* u = slurm_list_iterator_create(q->usage->user_limit_list);
          while (auto* used = static_cast<slurmdb_used_limits_t*>(slurm_list_next(u)))
            qos.used_by_user[user_of(used->uid)] = pos.of(used->tres);
          slurm_list_iterator_destroy(u);
        }
      }
      snap.qos.push_back(std::move(qos));
    }
    slurm_list_iterator_destroy(it);
  }
  if (msg->user_list) {
    auto* it = slurm_list_iterator_create(msg->user_list);
    while (auto* u = static_cast<slurmdb_user_rec_t*>(slurm_list_next(it)))
      if (u->default_acct && u->uid != NO_VAL) snap.default_accounts[u->uid] = u->default_acct;
    slurm_list_iterator_destroy(it);
  }
  slurm_free_assoc_mgr_info_msg(msg);
}

// AllowGroups as ids: each group's gid and its listed members' uids (as slurmctld resolves them).
void resolve_groups(SlurmPartition& p) {
  for (const std::string& name : p.allow_groups) {
    struct group gr{}, *res = nullptr;
    std::vector<char> buf(1 << 16);
    if (getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &res) != 0 || !res) continue;
    p.allow_gids.push_back(gr.gr_gid);
    for (char** m = gr.gr_mem; m && *m; ++m) {
      struct passwd pw{}, *pres = nullptr;
      char pbuf[4096];
      if (getpwnam_r(*m, &pw, pbuf, sizeof pbuf, &pres) == 0 && pres) p.allow_uids.push_back(pw.pw_uid);
    }
  }
}

// The names of a user's groups (AllowGroups is by name); none when the user is unknown here.
std::vector<std::string> groups_of(const std::string& user, gid_t primary) {
  std::vector<gid_t> gids(64);
  int n = static_cast<int>(gids.size());
  if (getgrouplist(user.c_str(), primary, gids.data(), &n) < 0) {
    if (n <= 0 || n > 65536) return {};
    gids.resize(static_cast<size_t>(n));
    if (getgrouplist(user.c_str(), primary, gids.data(), &n) < 0) return {};
  }
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    struct group gr{}, *res = nullptr;
    char buf[4096];
    if (getgrgid_r(gids[static_cast<size_t>(i)], &gr, buf, sizeof buf, &res) == 0 && res) out.emplace_back(gr.gr_name);
  }
  return out;
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
  auto* hl = slurm_hostlist_create(expr);  // hostlist_t differs by release (slurm_compat.h)
  if (!hl) return out;
  while (char* h = slurm_hostlist_shift(hl)) {
    out.emplace_back(h);
    std::free(h);
  }
  slurm_hostlist_destroy(hl);
  return out;
}

}  // namespace

struct SlurmClient::Held {
  slurm_conf_t* conf = nullptr;
  node_info_msg_t* nodes = nullptr;
  partition_info_msg_t* parts = nullptr;
  reserve_info_msg_t* resvs = nullptr;
  job_info_msg_t* jobs = nullptr;
  ~Held() {
    if (conf) slurm_free_ctl_conf(conf);
    if (nodes) slurm_free_node_info_msg(nodes);
    if (parts) slurm_free_partition_info_msg(parts);
    if (resvs) slurm_free_reservation_info_msg(resvs);
    if (jobs) slurm_free_job_info_msg(jobs);
  }
};

namespace {
// `held` made current: `load(since, &fresh)` asks slurmctld for a table newer than the one held
// (since 0: any). Whether `held` is current: the new answer, or the one held if nothing changed.
template <typename Msg, typename Load, typename Free>
bool refresh(Msg*& held, Load&& load, Free&& release) {
  Msg* fresh = nullptr;
  if (load(held ? held->last_update : 0, &fresh) == SLURM_SUCCESS && fresh) {
    if (held) release(held);
    held = fresh;
    return true;
  }
  return held && errno == SLURM_NO_CHANGE_IN_DATA;
}
}  // namespace

SlurmClient::SlurmClient(const std::string& conf) : m_held(std::make_unique<Held>()) {
  slurm_init(conf.empty() ? nullptr : conf.c_str());
}
SlurmClient::~SlurmClient() {
  m_held.reset();
  slurm_fini();
}

Result<SlurmClient::Controllers> SlurmClient::controllers() {
  if (!refresh(m_held->conf, slurm_load_ctl_conf, slurm_free_ctl_conf)) return slurm_failure("slurm_load_ctl_conf");
  const slurm_conf_t* conf = m_held->conf;
  Controllers c;
  for (uint32_t i = 0; conf->control_machine && i < conf->control_cnt; ++i) c.hosts.push_back(str(conf->control_machine[i]));
  c.state_save_location = str(conf->state_save_location);
  c.timeout_s = conf->slurmctld_timeout;
  return c;
}

bool SlurmClient::ping(int index) { return slurm_ping(index) == SLURM_SUCCESS; }

Result<Snapshot> SlurmClient::snapshot() {
  Snapshot snap;
  snap.now = std::time(nullptr);

  Held& held = *m_held;
  // SHOW_DETAIL fills gres_used; node partitions come from the partition table.
  auto load_nodes = [](time_t since, node_info_msg_t** out) { return slurm_load_node(since, out, SHOW_ALL | SHOW_DETAIL); };
  auto load_parts = [](time_t since, partition_info_msg_t** out) { return slurm_load_partitions(since, out, SHOW_ALL); };
  if (!refresh(held.nodes, load_nodes, slurm_free_node_info_msg)) return slurm_failure("slurm_load_node");
  if (!refresh(held.parts, load_parts, slurm_free_partition_info_msg)) return slurm_failure("slurm_load_partitions");
  node_info_msg_t* nodes = held.nodes;
  const partition_info_msg_t* parts = held.parts;
  slurm_populate_node_partitions(nodes, const_cast<partition_info_msg_t*>(parts));
  for (uint32_t i = 0; i < parts->record_count; ++i) {
    const partition_info_t& p = parts->partition_array[i];
    SlurmPartition part;
    part.name = str(p.name);
    part.allow_accounts = name_list(p.allow_accounts);
    part.deny_accounts = name_list(p.deny_accounts);
    part.allow_qos = name_list(p.allow_qos);
    part.deny_qos = name_list(p.deny_qos);
    part.allow_groups = name_list(p.allow_groups);
    part.max_nodes = p.max_nodes == INFINITE || p.max_nodes == NO_VAL ? 0 : static_cast<int>(p.max_nodes);
    part.max_time_s = p.max_time == INFINITE || p.max_time == NO_VAL ? 0 : std::int64_t{p.max_time} * 60;
    part.qos = str(p.qos_char);
    part.up = (p.state_up & PARTITION_UP) == PARTITION_UP;
    resolve_groups(part);
    snap.partitions.push_back(std::move(part));
  }
  for (uint32_t i = 0; i < nodes->record_count; ++i) {
    const node_info_t& n = nodes->node_array[i];
    if (!n.name) continue;
    SlurmNode node;
    node.name = n.name;
    node.partitions = util::split(str(n.partitions), ',', true);
    parse_gres(str(n.gres), &node.gpu, &node.gpus);
    std::string unused_type;
    parse_gres(str(n.gres_used), &unused_type, &node.gpus_used);
    node.features = util::split(str(n.features), ',', true);
    if (node.gpu.empty() && !node.features.empty()) node.gpu = node.features.front();
    uint32_t base = n.node_state & NODE_STATE_BASE;
    bool flagged = n.node_state & (NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_NO_RESPOND);
    node.usable = !flagged && (base == NODE_STATE_IDLE || base == NODE_STATE_ALLOCATED ||
                               base == NODE_STATE_MIXED);
    snap.nodes.push_back(std::move(node));
  }

  if (!refresh(held.resvs, slurm_load_reservations, slurm_free_reservation_info_msg))
    return slurm_failure("slurm_load_reservations");
  const reserve_info_msg_t* resvs = held.resvs;
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

  if (!refresh(held.conf, slurm_load_ctl_conf, slurm_free_ctl_conf)) return slurm_failure("slurm_load_ctl_conf");
  snap.enforce_limits = (held.conf->accounting_storage_enforce & kEnforceLimits) != 0;
  std::map<uint32_t, std::string> users;  // uid -> name, once per snapshot
  auto user_of = [&](uint32_t uid) -> std::string {
    auto it = users.find(uid);
    return it != users.end() ? it->second : users[uid] = user_name(uid);
  };
  read_limits(snap, user_of);

  auto load_jobs = [](time_t since, job_info_msg_t** out) { return slurm_load_jobs(since, out, SHOW_ALL); };
  if (!refresh(held.jobs, load_jobs, slurm_free_job_info_msg)) return slurm_failure("slurm_load_jobs");
  const job_info_msg_t* jobs = held.jobs;
  std::map<std::string, std::vector<std::string>> groups;  // user -> group names, once per snapshot
  const bool any_allow_groups = std::any_of(snap.partitions.begin(), snap.partitions.end(),
                                            [](const SlurmPartition& p) { return !p.allow_groups.empty(); });
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
    if (j.pn_min_memory != NO_VAL64 && j.pn_min_memory != INFINITE64) {
      job.mem_per_cpu = (j.pn_min_memory & MEM_PER_CPU) != 0;
      job.mem_mb = static_cast<std::int64_t>(j.pn_min_memory & ~MEM_PER_CPU);
    }
    job.priority = j.priority;
    // The enum's name ("JobHeldUser", "Dependency"), not English text: the same in every release.
    job.reason = str(compat::job_reason_name(j.state_reason));
    job.begin_time = j.state_reason == WAIT_TIME ? j.start_time : 0;  // --begin in the future
    job.eligible_time = j.eligible_time;
    job.reservation = str(j.resv_name);
    if (j.time_limit != INFINITE && j.time_limit != NO_VAL) job.time_limit_s = std::int64_t{j.time_limit} * 60;
    job.batch = j.batch_flag != 0;
    job.requeue = j.requeue != 0;
    job.user = user_of(j.user_id);
    job.assoc_id = j.assoc_id;
    if (!any_allow_groups) {  // only AllowGroups reads them: no lookups otherwise
    } else if (auto g = groups.find(job.user); g != groups.end()) {
      job.user_groups = g->second;
    } else {
      job.user_groups = groups[job.user] = groups_of(job.user, j.group_id);
    }
    job.account = str(j.account);
    job.qos = str(j.qos);
    snap.jobs.push_back(std::move(job));
  }
  return snap;
}

Result<void> SlurmClient::update_cell(const std::string& id, const estimator::Cell& cell, std::uint16_t cpus_per_task,
                                      const std::string& other_gres, bool clear_requeue_delay,
                                      const std::vector<std::string>* nodes, std::int64_t time_limit_min) {
  job_desc_msg_t d;
  slurm_init_job_desc_msg(&d);
  d.job_id_str = const_cast<char*>(id.c_str());
  std::vector<std::string> strings;  // own the values the job description points to
  strings.reserve(4);
  apply_cell(&d, cell, cpus_per_task, [&](char** field, const std::string& value) {
    strings.push_back(field == &d.tres_per_node && !other_gres.empty() ? value + "," + other_gres : value);
    *field = strings.back().data();
  });
  // Slurm delays a requeued job by the credential lifetime (about two minutes). It may start
  // sooner, but not within the second of its requeue: slurmd refuses a credential of that
  // job created in the second it was revoked, and the job would fail to launch.
  if (clear_requeue_delay) d.begin_time = std::time(nullptr) + 2;
  if (time_limit_min > 0) d.time_limit = static_cast<std::uint32_t>(time_limit_min);
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
