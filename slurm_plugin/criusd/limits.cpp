// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/criusd/limits.h"

#include <algorithm>

namespace crius::slurm {

namespace {

bool listed(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// The smaller of two limits, -1 being none.
// GPUs of `type` in a count (0 where absent).
std::int64_t typed_of(const GpusNodes& g, const std::string& type) {
  auto it = g.typed.find(type);
  return it == g.typed.end() ? 0 : std::max<std::int64_t>(0, it->second);
}

std::int64_t tighter(std::int64_t a, std::int64_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return std::min(a, b);
}

// The association and its parents, the job's own first (a cycle or a missing parent ends it).
template <typename Find>
std::vector<const SlurmAssoc*> chain(std::uint32_t id, Find&& find) {
  std::vector<const SlurmAssoc*> out;
  for (const SlurmAssoc* a = find(id); a && out.size() < 64; a = find(a->parent_id)) {
    if (std::find(out.begin(), out.end(), a) != out.end()) break;
    out.push_back(a);
  }
  return out;
}

}  // namespace

std::string partition_refusal(const SlurmPartition& p, const SlurmJob& job, std::int64_t longest_s) {
  const std::string where = "partition " + p.name;
  if (!p.up) return where + " is not up";
  if (!p.allow_accounts.empty() && !listed(p.allow_accounts, job.account))
    return "account " + job.account + " is not in the AllowAccounts of " + where;
  if (listed(p.deny_accounts, job.account)) return "account " + job.account + " is in the DenyAccounts of " + where;
  if (!p.allow_qos.empty() && !listed(p.allow_qos, job.qos)) return "QOS " + job.qos + " is not in the AllowQos of " + where;
  if (listed(p.deny_qos, job.qos)) return "QOS " + job.qos + " is in the DenyQos of " + where;
  // Slurm lets root (a super-user) in whatever AllowGroups says (partition_mgr.c, validate_group).
  if (!p.allow_groups.empty() && job.user != "root" &&
      std::none_of(job.user_groups.begin(), job.user_groups.end(),
                   [&](const std::string& g) { return listed(p.allow_groups, g); }))
    return "user " + job.user + " is in none of the AllowGroups of " + where;
  if (longest_s > 0 && job.time_limit_s > longest_s)
    return "its time limit is over the longest " + where + " allows (its MaxTime, or its QOS's MaxWall)";
  return "";
}

namespace {
// The shorter of two time limits in seconds, 0 or less being none (a result of 0: none).
std::int64_t shorter(std::int64_t a, std::int64_t b) {
  if (a <= 0) return b > 0 ? b : 0;
  if (b <= 0) return a;
  return std::min(a, b);
}
}  // namespace

std::int64_t partition_time_limit_s(const Snapshot& s, const SlurmPartition& p) {
  std::int64_t limit = p.max_time_s;
  if (s.enforce_limits && !p.qos.empty())
    for (const SlurmQos& q : s.qos)
      if (q.name == p.qos) limit = shorter(limit, q.max_wall_s);
  return limit;
}

std::int64_t longest_time_limit_s(const Snapshot& s, const SlurmJob& job, const SlurmPartition& p) {
  std::int64_t limit = partition_time_limit_s(s, p);
  if (!s.enforce_limits) return limit;
  for (const SlurmQos& q : s.qos)
    if (q.name == job.qos) limit = shorter(limit, q.max_wall_s);
  auto find = [&](std::uint32_t id) -> const SlurmAssoc* {
    for (const SlurmAssoc& a : s.assocs)
      if (id != 0 && a.id == id) return &a;
    return nullptr;
  };
  for (const SlurmAssoc* a : chain(job.assoc_id, find)) limit = shorter(limit, a->max_wall_s);
  return limit;
}

namespace {
// `limit` bounded by `by` too, each TRES the smaller.
void tighten(GpusNodes& limit, const GpusNodes& by) {
  limit.gpus = tighter(limit.gpus, by.gpus);
  limit.nodes = tighter(limit.nodes, by.nodes);
  limit.cpus = tighter(limit.cpus, by.cpus);
  limit.mem_mb = tighter(limit.mem_mb, by.mem_mb);
  for (const auto& [type, n] : by.typed) {
    auto [at, added] = limit.typed.try_emplace(type, n);
    if (!added) at->second = tighter(at->second, n);
  }
}

// The smallest of one limit (`of`) of the job's QOS and of its association and each parent.
template <typename Of>
GpusNodes smallest_limit(const Snapshot& s, const SlurmJob& job, Of&& of) {
  GpusNodes limit;
  if (!s.enforce_limits) return limit;
  for (const SlurmQos& q : s.qos)
    if (q.name == job.qos) tighten(limit, of(q));
  auto find = [&](std::uint32_t id) -> const SlurmAssoc* {
    for (const SlurmAssoc& a : s.assocs)
      if (id != 0 && a.id == id) return &a;
    return nullptr;
  };
  for (const SlurmAssoc* a : chain(job.assoc_id, find)) tighten(limit, of(*a));
  return limit;
}
}  // namespace

GpusNodes per_job_limit(const Snapshot& s, const SlurmJob& job) {
  return smallest_limit(s, job, [](const auto& q_or_a) { return q_or_a.max_per_job; });
}

GpusNodes per_node_limit(const Snapshot& s, const SlurmJob& job) {
  return smallest_limit(s, job, [](const auto& q_or_a) { return q_or_a.max_per_node; });
}

GpusNodes held_in(const SlurmJob& job, const std::string& type, std::int64_t gpus, std::int64_t nodes) {
  const std::int64_t cpus = gpus * std::max<std::int64_t>(1, job.cpus_per_task);
  GpusNodes out{gpus, nodes, {{type, gpus}}, cpus};
  out.mem_mb = job.mem_per_cpu ? job.mem_mb * cpus : job.mem_mb * nodes;
  return out;
}

CpuMemBound cpu_mem_bound(const SlurmJob& job, const GpusNodes& limit, const GpusNodes& per_node) {
  CpuMemBound b;
  const std::int64_t cpt = std::max<std::int64_t>(1, job.cpus_per_task);
  if (limit.cpus >= 0) b.gpus = limit.cpus / cpt;
  if (per_node.cpus >= 0) b.gpus_per_node = per_node.cpus / cpt;
  if (job.mem_mb > 0) {
    if (job.mem_per_cpu) {
      if (limit.mem_mb >= 0) b.gpus = tighter(b.gpus, limit.mem_mb / (job.mem_mb * cpt));
      if (per_node.mem_mb >= 0) b.gpus_per_node = tighter(b.gpus_per_node, per_node.mem_mb / (job.mem_mb * cpt));
    } else {
      if (limit.mem_mb >= 0) b.nodes = limit.mem_mb / job.mem_mb;
      if (per_node.mem_mb >= 0 && per_node.mem_mb < job.mem_mb) b.gpus_per_node = 0;
    }
  }
  return b;
}

void publish_job_limits(const Snapshot& s, FreeGpus& report) {
  if (!s.enforce_limits) return;
  std::map<std::uint32_t, const SlurmQos*> qos_by_id;
  for (const SlurmQos& q : s.qos) {
    qos_by_id[q.id] = &q;
    if (q.max_per_job.gpus >= 0 || q.max_per_job.nodes >= 0 || q.max_wall_s > 0)
      report.qos_limits.emplace_back(q.name, JobLimit{q.max_per_job.gpus, q.max_per_job.nodes, q.max_wall_s > 0 ? q.max_wall_s : -1});
  }
  std::map<std::uint32_t, const SlurmAssoc*> by_id;
  for (const SlurmAssoc& a : s.assocs) by_id[a.id] = &a;
  auto find = [&](std::uint32_t id) -> const SlurmAssoc* {
    auto it = by_id.find(id);
    return id != 0 && it != by_id.end() ? it->second : nullptr;
  };
  for (const SlurmAssoc& a : s.assocs) {
    if (a.user.empty()) continue;
    JobLimit limit;
    std::map<std::string, std::int64_t> typed_left;  // per-type group headroom, along the chain
    std::uint32_t default_qos = 0;
    for (const SlurmAssoc* c : chain(a.id, find)) {
      limit.gpus = tighter(limit.gpus, c->max_per_job.gpus);
      limit.nodes = tighter(limit.nodes, c->max_per_job.nodes);
      if (c->max_wall_s > 0) limit.wall_s = tighter(limit.wall_s, c->max_wall_s);
      if (!default_qos) default_qos = c->default_qos_id;  // inherited from the nearest that sets one
      for (const auto& [type, n] : c->grp.typed) {
        const std::int64_t left = std::max<std::int64_t>(0, n - typed_of(c->used, type));
        auto [at, added] = typed_left.try_emplace(type, left);
        if (!added) at->second = std::min(at->second, left);
      }
    }
    const SlurmQos* q = default_qos ? qos_by_id[default_qos] : nullptr;
    const bool qos_bounds = q && (q->max_per_job.gpus >= 0 || q->max_per_job.nodes >= 0 || q->max_wall_s > 0);
    if (limit.gpus < 0 && limit.nodes < 0 && limit.wall_s < 0 && !qos_bounds && typed_left.empty()) continue;
    report.assoc_limits.push_back({a.uid, a.account, a.partition, limit, q ? q->name : "", typed_left});
  }
  std::stable_sort(report.assoc_limits.begin(), report.assoc_limits.end(),
                   [](const AssocLimit& x, const AssocLimit& y) { return x.uid < y.uid; });
}

GroupLimits::GroupLimits(const Snapshot& s) : m_enforced(s.enforce_limits) {
  if (!m_enforced) return;
  for (const SlurmAssoc& a : s.assocs) {
    m_assoc[a.id] = &a;
    const std::string who = a.user.empty() ? "account " + a.account : "user " + a.user + " in account " + a.account;
    m_counters["assoc/" + std::to_string(a.id)] = {"GrpTRES of " + who, a.grp, a.used};
  }
  for (const SlurmQos& q : s.qos) {
    m_counters["qos/" + q.name] = {"GrpTRES of QOS " + q.name, q.grp, q.used};
    if (q.max_per_user.gpus < 0 && q.max_per_user.nodes < 0 && q.max_per_user.typed.empty()) continue;
    m_per_user[q.name] = q.max_per_user;
    for (const auto& [user, used] : q.used_by_user)
      m_counters["qos/" + q.name + "/" + user] = {"MaxTRESPerUser of QOS " + q.name + " for user " + user,
                                                  q.max_per_user, used};
  }
}

std::vector<GroupLimits::Counter*> GroupLimits::counters_of(const SlurmJob& job) {
  std::vector<Counter*> out;
  auto find = [&](std::uint32_t id) -> const SlurmAssoc* {
    auto it = m_assoc.find(id);
    return id != 0 && it != m_assoc.end() ? it->second : nullptr;
  };
  for (const SlurmAssoc* a : chain(job.assoc_id, find)) out.push_back(&m_counters["assoc/" + std::to_string(a->id)]);
  if (auto it = m_counters.find("qos/" + job.qos); it != m_counters.end()) out.push_back(&it->second);
  if (auto it = m_per_user.find(job.qos); it != m_per_user.end()) {
    auto [user, added] = m_counters.try_emplace("qos/" + job.qos + "/" + job.user);
    if (added) user->second = {"MaxTRESPerUser of QOS " + job.qos + " for user " + job.user, it->second, {0, 0, {}}};
    out.push_back(&user->second);
  }
  return out;
}

namespace {
// What others hold of a counter's TRES: what Slurm counts in use less what the job holds, never
// below 0 (Slurm may count less than the job asks: memory, where it is not a consumable resource).
std::int64_t others(std::int64_t used, std::int64_t mine) {
  return std::max<std::int64_t>(0, std::max<std::int64_t>(0, used) - std::max<std::int64_t>(0, mine));
}
}  // namespace

GpusNodes GroupLimits::most(const SlurmJob& job, GpusNodes holding) {
  GpusNodes out;
  if (!m_enforced) return out;
  for (const Counter* c : counters_of(job)) {
    auto left = [](std::int64_t limit, std::int64_t used, std::int64_t mine) -> std::int64_t {
      return limit < 0 ? -1 : std::max<std::int64_t>(0, limit - others(used, mine));
    };
    out.gpus = tighter(out.gpus, left(c->limit.gpus, c->used.gpus, holding.gpus));
    out.nodes = tighter(out.nodes, left(c->limit.nodes, c->used.nodes, holding.nodes));
    out.cpus = tighter(out.cpus, left(c->limit.cpus, c->used.cpus, holding.cpus));
    out.mem_mb = tighter(out.mem_mb, left(c->limit.mem_mb, c->used.mem_mb, holding.mem_mb));
    for (const auto& [type, limit] : c->limit.typed) {
      const std::int64_t most = left(limit, typed_of(c->used, type), typed_of(holding, type));
      auto [at, added] = out.typed.try_emplace(type, most);
      if (!added) at->second = tighter(at->second, most);
    }
  }
  return out;
}

std::string GroupLimits::change(const SlurmJob& job, GpusNodes from, GpusNodes to) {
  if (!m_enforced) return "";
  // One TRES of one counter: the job going from `was` to `will` under `limit`, with `used` in use.
  struct Tres {
    std::string name, key, unit;  // "its memory", "mem=", "M"
    std::int64_t limit, used, was, will;
  };
  auto tres_of = [&](const Counter& c) {
    std::vector<Tres> t = {{"its GPUs", "gres/gpu=", "", c.limit.gpus, c.used.gpus, from.gpus, to.gpus},
                           {"its nodes", "node=", "", c.limit.nodes, c.used.nodes, from.nodes, to.nodes},
                           {"its CPUs", "cpu=", "", c.limit.cpus, c.used.cpus, from.cpus, to.cpus},
                           {"its memory", "mem=", "M", c.limit.mem_mb, c.used.mem_mb, from.mem_mb, to.mem_mb}};
    // Per type (gres/gpu:a100=8): Slurm 22.05 does not check them for crius's untyped request.
    for (const auto& [type, limit] : c.limit.typed)
      t.push_back({"its " + type + " GPUs", "gres/gpu:" + type + "=", "", limit, typed_of(c.used, type),
                   typed_of(from, type), typed_of(to, type)});
    return t;
  };
  std::vector<Counter*> counters = counters_of(job);
  for (const Counter* c : counters)
    for (const Tres& t : tres_of(*c)) {
      const std::int64_t will = std::max<std::int64_t>(0, t.will), was = std::max<std::int64_t>(0, t.was);
      if (will > was && t.limit >= 0 && others(t.used, was) + will > t.limit)
        return t.name + " would be over the " + c->name + " (" + t.key + std::to_string(t.limit) + t.unit + ", " +
               std::to_string(std::max<std::int64_t>(0, t.used)) + t.unit + " in use)";
    }
  auto count = [](std::int64_t& used, std::int64_t was, std::int64_t will) {
    used = others(used, was) + std::max<std::int64_t>(0, will);
  };
  for (Counter* c : counters) {
    count(c->used.gpus, from.gpus, to.gpus);
    count(c->used.nodes, from.nodes, to.nodes);
    count(c->used.cpus, from.cpus, to.cpus);
    count(c->used.mem_mb, from.mem_mb, to.mem_mb);
    std::map<std::string, std::int64_t> typed = c->used.typed;
    for (const auto& [type, n] : from.typed) typed.try_emplace(type, 0);
    for (const auto& [type, n] : to.typed) typed.try_emplace(type, 0);
    for (auto& [type, used] : typed) count(used, typed_of(from, type), typed_of(to, type));
    c->used.typed = std::move(typed);
  }
  return "";
}

}  // namespace crius::slurm
