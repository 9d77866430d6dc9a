// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_plugin/free_gpus.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "common/util.h"

namespace crius::slurm {

namespace {
const std::vector<int>* nodes_of(const FreeGpus& f, const std::string& partition) {
  for (const auto& [name, nodes] : f.partitions)
    if (name == partition) return &nodes;
  return nullptr;
}

// The per-job limits that bind `who` in `partition`: of the user's association in this account
// (for this partition, else for all), and of the job's QOS (named, else the association's default).
struct Binding {
  const AssocLimit* assoc = nullptr;
  std::string qos;
  const JobLimit* qos_limit = nullptr;
};
Binding binding(const FreeGpus& f, const std::string& partition, const Submitter& who) {
  Binding b;
  auto [from, to] = std::equal_range(f.assoc_limits.begin(), f.assoc_limits.end(), AssocLimit{who.uid, {}, {}, {}, {}, {}},
                                     [](const AssocLimit& x, const AssocLimit& y) { return x.uid < y.uid; });
  for (auto a = from; a != to; ++a)
    if (a->account == who.account && (a->partition == partition || (a->partition.empty() && !b.assoc))) b.assoc = &*a;
  b.qos = !who.qos.empty() ? who.qos : b.assoc ? b.assoc->default_qos : std::string();
  for (const auto& [name, limit] : f.qos_limits)
    if (name == b.qos) b.qos_limit = &limit;
  return b;
}
}  // namespace

// Whether node `i` of `partition` has no reservation beginning before `until` (0: never ends).
bool FreeGpus::clear_until(const std::string& partition, std::size_t i, std::int64_t until) const {
  for (const auto& [name, from] : reserved_from)
    if (name == partition) {
      if (i >= from.size() || from[i] == 0) return true;
      return until > 0 && from[i] >= until;
    }
  return true;
}

bool FreeGpus::fits(const estimator::Cell& cell, std::int64_t until) const {
  const std::vector<int>* nodes = nodes_of(*this, cell.partition);
  if (!nodes || cell.nodes <= 0) return false;
  int holding = 0;
  for (std::size_t i = 0; i < nodes->size(); ++i)
    holding += (*nodes)[i] >= cell.gpus_per_node && clear_until(cell.partition, i, until);
  return holding >= cell.nodes;
}

void FreeGpus::take(const estimator::Cell& cell, std::int64_t until) {
  for (auto& part : partitions) {
    if (part.first != cell.partition) continue;
    std::vector<int>& nodes = part.second;
    std::vector<std::size_t> order(nodes.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return nodes[a] < nodes[b]; });
    int left = cell.nodes;
    for (std::size_t i : order)
      if (left > 0 && nodes[i] >= cell.gpus_per_node && clear_until(cell.partition, i, until)) {
        nodes[i] -= cell.gpus_per_node;
        --left;
      }
    return;
  }
}

std::string FreeGpus::refusal(const std::string& partition, const Submitter& who, int nodes, int gpus) const {
  auto listed = [](const std::vector<std::string>& l, const std::string& v) {
    return std::find(l.begin(), l.end(), v) != l.end();
  };
  const Submitter& me = who;
  for (const PartitionAccess& a : access) {
    if (a.name != partition) continue;
    const std::string where = "partition " + a.name;
    if (!a.up) return where + " is not up";
    if (a.max_nodes > 0 && nodes > a.max_nodes) return where + " takes jobs of at most " + std::to_string(a.max_nodes) + " nodes";
    if (a.max_time_s > 0 && who.time_limit_s > a.max_time_s)
      return "the job's time limit is over the longest " + where + " allows (its MaxTime, or its QOS's MaxWall)";
    if (!me.account.empty() && !a.allow_accounts.empty() && !listed(a.allow_accounts, me.account))
      return "account " + me.account + " is not in the AllowAccounts of " + where;
    if (!me.account.empty() && listed(a.deny_accounts, me.account))
      return "account " + me.account + " is in the DenyAccounts of " + where;
    if (!who.qos.empty() && !a.allow_qos.empty() && !listed(a.allow_qos, who.qos))
      return "QOS " + who.qos + " is not in the AllowQos of " + where;
    if (!who.qos.empty() && listed(a.deny_qos, who.qos)) return "QOS " + who.qos + " is in the DenyQos of " + where;
    if (a.groups && !who.privileged &&
        std::find(a.allow_gids.begin(), a.allow_gids.end(), who.gid) == a.allow_gids.end() &&
        std::find(a.allow_uids.begin(), a.allow_uids.end(), who.uid) == a.allow_uids.end())
      return "the user is in none of the AllowGroups of " + where;
    break;
  }
  const Binding b = binding(*this, partition, who);
  auto over = [&](const JobLimit& l, const std::string& whose) -> std::string {
    if (l.gpus >= 0 && gpus > l.gpus) return whose + " allows at most " + std::to_string(l.gpus) + " GPUs per job";
    if (l.nodes >= 0 && nodes > l.nodes) return whose + " allows at most " + std::to_string(l.nodes) + " nodes per job";
    return "";
  };
  if (b.assoc)
    if (std::string no = over(b.assoc->limit, "the association of account " + who.account); !no.empty()) return no;
  if (b.qos_limit)
    if (std::string no = over(*b.qos_limit, "QOS " + b.qos); !no.empty()) return no;
  return "";
}

bool FreeGpus::typed_room(const std::string& partition, const Submitter& who, const std::string& gpu, int gpus) const {
  const Binding b = binding(*this, partition, who);
  if (!b.assoc) return true;
  auto it = b.assoc->typed_left.find(gpu);
  return it == b.assoc->typed_left.end() || gpus <= it->second;
}

std::int64_t FreeGpus::longest_time_limit_s(const std::string& partition, const Submitter& who) const {
  std::int64_t limit = 0;
  auto shorter = [&](std::int64_t l) {
    if (l > 0 && (limit <= 0 || l < limit)) limit = l;
  };
  for (const PartitionAccess& a : access)
    if (a.name == partition) shorter(a.max_time_s);
  const Binding b = binding(*this, partition, who);
  if (b.assoc) shorter(b.assoc->limit.wall_s);
  if (b.qos_limit) shorter(b.qos_limit->wall_s);
  return limit;
}

std::string FreeGpus::default_account(std::uint32_t uid) const {
  auto it = std::lower_bound(default_accounts.begin(), default_accounts.end(), uid,
                             [](const auto& e, std::uint32_t u) { return e.first < u; });
  return it != default_accounts.end() && it->first == uid ? it->second : std::string();
}

int FreeGpus::free_gpus(const std::string& partition) const {
  const std::vector<int>* nodes = nodes_of(*this, partition);
  int n = 0;
  if (nodes)
    for (int f : *nodes) n += f;
  return n;
}

std::string to_text(const FreeGpus& f) {
  std::ostringstream o;
  o << "# the GPUs criusd's policy left free, per node, and who each partition lets in (criusd(8))\n";
  o << "crius-free-gpus 6\n";
  o << "time " << f.time << "\n";
  o << "interval_s " << util::fmt(f.interval_s, 9) << "\n";
  o << "waiting " << f.waiting << "\n";
  for (const auto& [name, nodes] : f.partitions) {
    o << "partition " << name;
    for (int n : nodes) o << ' ' << n;
    o << "\n";
  }
  for (const auto& [name, from] : f.reserved_from) {
    o << "reserved " << name;
    for (std::int64_t t : from) o << ' ' << t;
    o << "\n";
  }
  auto names = [](const std::vector<std::string>& l) { return util::join(l, ","); };
  auto ids = [](const std::vector<std::uint32_t>& l) {
    std::string out;
    for (std::uint32_t v : l) out += (out.empty() ? "" : ",") + std::to_string(v);
    return out;
  };
  for (const PartitionAccess& a : f.access)
    o << "access " << a.name << " up=" << a.up << " max_nodes=" << a.max_nodes << " max_time_s=" << a.max_time_s
      << " allow_accounts=" << names(a.allow_accounts) << " deny_accounts=" << names(a.deny_accounts)
      << " allow_qos=" << names(a.allow_qos) << " deny_qos=" << names(a.deny_qos) << " groups=" << a.groups
      << " allow_gids=" << ids(a.allow_gids) << " allow_uids=" << ids(a.allow_uids) << "\n";
  for (const auto& [uid, account] : f.default_accounts) o << "account " << uid << ' ' << account << "\n";
  for (const auto& [name, l] : f.qos_limits)
    o << "qos " << name << " gpus=" << l.gpus << " nodes=" << l.nodes << " wall_s=" << l.wall_s << "\n";
  for (const AssocLimit& a : f.assoc_limits) {
    o << "assoc " << a.uid << ' ' << a.account << ' ' << (a.partition.empty() ? "-" : a.partition) << " gpus=" << a.limit.gpus
      << " nodes=" << a.limit.nodes << " default_qos=" << (a.default_qos.empty() ? "-" : a.default_qos)
      << " wall_s=" << a.limit.wall_s;
    for (const auto& [type, left] : a.typed_left) o << " left:" << type << '=' << left;
    o << "\n";
  }
  return o.str();
}

Result<FreeGpus> parse_free_gpus(std::string_view text, const std::string& source) {
  if (text.size() > kMaxFreeGpusBytes)
    return make_error(source + ": larger than " + std::to_string(kMaxFreeGpusBytes) + " bytes");
  FreeGpus f;
  bool header = false, have_time = false, have_interval = false;
  int line_no = 0, nodes = 0, reserved = 0, access_names = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = util::trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    auto bad = [&](const std::string& why) {
      return make_error(source + ":" + std::to_string(line_no) + ": " + why);
    };
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> words = util::split(line, ' ', true);
    if (!header) {
      if (words.size() != 2 || words[0] != "crius-free-gpus" || words[1].size() != 1 || words[1][0] < '1' || words[1][0] > '6')
        return bad("not a crius free-GPU report (expected \"crius-free-gpus 6\")");
      header = true;
    } else if (words[0] == "time" && words.size() == 2) {
      auto v = util::to_int(words[1]);
      if (!v || *v < 0) return bad("time must be Unix seconds");
      f.time = *v;
      have_time = true;
    } else if (words[0] == "interval_s" && words.size() == 2) {
      auto v = util::to_double(words[1]);
      if (!v || *v < 1 || *v > 86400) return bad("interval_s must be a number of seconds in [1, 86400]");
      f.interval_s = *v;
      have_interval = true;
    } else if (words[0] == "waiting" && words.size() == 2) {
      auto v = util::to_int(words[1]);
      if (!v || *v < 0 || *v > 100'000'000) return bad("waiting must be a whole number of jobs");
      f.waiting = static_cast<int>(*v);
    } else if (words[0] == "partition" && words.size() >= 2) {
      if (static_cast<int>(f.partitions.size()) >= kMaxFreeGpusPartitions)
        return bad("more than " + std::to_string(kMaxFreeGpusPartitions) + " partitions");
      if (words[1].size() > 64) return bad("partition name longer than 64 characters");
      std::vector<int> free;
      for (std::size_t i = 2; i < words.size(); ++i) {
        auto v = util::to_int(words[i]);
        if (!v || *v < 0 || *v > estimator::kMaxGpusPerNode)
          return bad("free GPUs of a node must be a whole number from 0 to " +
                     std::to_string(estimator::kMaxGpusPerNode));
        if (++nodes > kMaxFreeGpusNodes) return bad("more than " + std::to_string(kMaxFreeGpusNodes) + " nodes");
        free.push_back(static_cast<int>(*v));
      }
      f.partitions.emplace_back(words[1], std::move(free));
    } else if (words[0] == "reserved" && words.size() >= 2) {
      if (static_cast<int>(f.reserved_from.size()) >= kMaxFreeGpusPartitions)
        return bad("more than " + std::to_string(kMaxFreeGpusPartitions) + " reserved lines");
      if (words[1].size() > 64) return bad("partition name longer than 64 characters");
      std::vector<std::int64_t> from;
      for (std::size_t i = 2; i < words.size(); ++i) {
        auto v = util::to_int(words[i]);
        if (!v || *v < 0 || *v > (std::int64_t{1} << 40)) return bad("a reservation's start must be Unix seconds");
        if (++reserved > kMaxFreeGpusNodes) return bad("more than " + std::to_string(kMaxFreeGpusNodes) + " nodes");
        from.push_back(*v);
      }
      f.reserved_from.emplace_back(words[1], std::move(from));
    } else if (words[0] == "access" && words.size() == 12) {
      if (static_cast<int>(f.access.size()) >= kMaxFreeGpusPartitions)
        return bad("more than " + std::to_string(kMaxFreeGpusPartitions) + " access lines");
      if (words[1].size() > 64) return bad("partition name longer than 64 characters");
      PartitionAccess a;
      a.name = words[1];
      const char* keys[] = {"up", "max_nodes", "max_time_s", "allow_accounts", "deny_accounts", "allow_qos",
                            "deny_qos", "groups", "allow_gids", "allow_uids", nullptr};
      for (std::size_t i = 2; i < words.size(); ++i) {
        const std::string& w = words[i];
        const std::size_t eq = w.find('=');
        const std::string key = w.substr(0, eq), value = eq == std::string::npos ? "" : w.substr(eq + 1);
        if (eq == std::string::npos || !keys[i - 2] || key != keys[i - 2])
          return bad("access: expected " + std::string(keys[i - 2] ? keys[i - 2] : "nothing") + "=..., got " + util::shown(w));
        auto number = [&](std::int64_t hi) -> std::optional<std::int64_t> {
          auto v = util::to_int(value);
          if (!v || *v < 0 || *v > hi) return std::nullopt;
          return *v;
        };
        auto list = [&](auto&& add) -> bool {
          for (const std::string& item : util::split(value, ',', true)) {
            if (++access_names > kMaxAccessNames || item.size() > 64 || !add(item)) return false;
          }
          return true;
        };
        auto name = [](std::vector<std::string>& to) { return [&to](const std::string& v) { to.push_back(v); return true; }; };
        auto id = [](std::vector<std::uint32_t>& to) {
          return [&to](const std::string& v) {
            auto n = util::to_int(v);
            if (!n || *n < 0 || *n > 0xffffffffLL) return false;
            to.push_back(static_cast<std::uint32_t>(*n));
            return true;
          };
        };
        bool ok = true;
        if (key == "up" || key == "groups") {
          auto v = number(1);
          ok = v.has_value();
          (key == "up" ? a.up : a.groups) = ok && *v == 1;
        } else if (key == "max_nodes") {
          auto v = number(1'000'000);
          ok = v.has_value();
          a.max_nodes = ok ? static_cast<int>(*v) : 0;
        } else if (key == "max_time_s") {
          auto v = number(std::int64_t{1} << 40);
          ok = v.has_value();
          a.max_time_s = ok ? *v : 0;
        } else if (key == "allow_accounts") ok = list(name(a.allow_accounts));
        else if (key == "deny_accounts") ok = list(name(a.deny_accounts));
        else if (key == "allow_qos") ok = list(name(a.allow_qos));
        else if (key == "deny_qos") ok = list(name(a.deny_qos));
        else if (key == "allow_gids") ok = list(id(a.allow_gids));
        else ok = list(id(a.allow_uids));
        if (!ok) return bad("access " + a.name + ": bad " + key + " (or more than " + std::to_string(kMaxAccessNames) + " names and ids)");
      }
      f.access.push_back(std::move(a));
    } else if (words[0] == "account" && words.size() == 3) {
      auto uid = util::to_int(words[1]);
      if (!uid || *uid < 0 || *uid > 0xffffffffLL) return bad("account: a uid must be a whole number");
      if (words[2].size() > 64) return bad("account name longer than 64 characters");
      if (++access_names > kMaxAccessNames)
        return bad("more than " + std::to_string(kMaxAccessNames) + " names and ids");
      f.default_accounts.emplace_back(static_cast<std::uint32_t>(*uid), words[2]);
    } else if ((words[0] == "qos" && (words.size() == 4 || words.size() == 5)) ||
               (words[0] == "assoc" && words.size() >= 7 && words.size() <= 8 + kMaxTypedLeft)) {
      if (++access_names > kMaxAccessNames)
        return bad("more than " + std::to_string(kMaxAccessNames) + " names and ids");
      const bool is_qos = words[0] == "qos";
      // "gpus=N nodes=N": -1 (none) or a count
      auto count = [&](const std::string& w, const char* key) -> std::optional<std::int64_t> {
        const std::string k = std::string(key) + "=";
        if (w.rfind(k, 0) != 0) return std::nullopt;
        auto v = util::to_int(w.substr(k.size()));
        if (!v || *v < -1 || *v > (std::int64_t{1} << 40)) return std::nullopt;
        return *v;
      };
      const std::size_t at = is_qos ? 2 : 4;
      auto g = count(words[at], "gpus"), n = count(words[at + 1], "nodes");
      if (!g || !n) return bad(words[0] + ": expected gpus=N nodes=N, got " + util::shown(words[at] + " " + words[at + 1]));
      for (std::size_t i = 1; i < words.size(); ++i)
        if (words[i].size() > 72) return bad(words[0] + ": a name longer than 64 characters");
      // "wall_s=N" last (report version 4): the longest time limit, -1 (none) or seconds
      std::int64_t wall_s = -1;
      if (words.size() >= (is_qos ? 5u : 8u)) {
        const std::string& w_word = words[is_qos ? 4 : 7];
        auto w = count(w_word, "wall_s");
        if (!w) return bad(words[0] + ": expected wall_s=N, got " + util::shown(w_word));
        wall_s = *w;
      }
      // "left:TYPE=N" after it (assoc, report version 5): GPUs of TYPE the group may still hold
      std::map<std::string, std::int64_t> typed_left;
      for (std::size_t i = 8; !is_qos && i < words.size(); ++i) {
        const std::size_t eq = words[i].find('=');
        if (words[i].rfind("left:", 0) != 0 || eq == std::string::npos || eq <= 5)
          return bad("assoc: expected left:TYPE=N, got " + util::shown(words[i]));
        auto v = util::to_int(words[i].substr(eq + 1));
        if (!v || *v < 0 || *v > (std::int64_t{1} << 40))
          return bad("assoc: expected left:TYPE=N, got " + util::shown(words[i]));
        typed_left[words[i].substr(5, eq - 5)] = *v;
      }
      if (is_qos) {
        f.qos_limits.emplace_back(words[1], JobLimit{*g, *n, wall_s});
      } else {
        auto uid = util::to_int(words[1]);
        if (!uid || *uid < 0 || *uid > 0xffffffffLL) return bad("assoc: a uid must be a whole number");
        if (words[6].rfind("default_qos=", 0) != 0) return bad("assoc: expected default_qos=NAME");
        AssocLimit a;
        a.uid = static_cast<std::uint32_t>(*uid);
        a.account = words[2];
        a.partition = words[3] == "-" ? "" : words[3];
        a.limit = {*g, *n, wall_s};
        a.default_qos = words[6].substr(12) == "-" ? "" : words[6].substr(12);
        a.typed_left = std::move(typed_left);
        f.assoc_limits.push_back(std::move(a));
      }
    } else {
      return bad("unknown line " + util::shown(line));
    }
  }
  if (!header) return make_error(source + ": empty (expected \"crius-free-gpus 6\")");
  if (!have_time || !have_interval) return make_error(source + ": no time or interval_s line");
  for (const auto& [name, from] : f.reserved_from) {
    const std::vector<int>* of = nodes_of(f, name);
    if (!of || of->size() != from.size())
      return make_error(source + ": reserved " + name + ": not one start per node of a partition line");
  }
  std::stable_sort(f.default_accounts.begin(), f.default_accounts.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::stable_sort(f.assoc_limits.begin(), f.assoc_limits.end(),
                   [](const AssocLimit& a, const AssocLimit& b) { return a.uid < b.uid; });
  return f;
}

std::optional<std::string> free_gpus_file_override() {
  const char* e = std::getenv("CRIUS_FREE_GPUS_FILE");
  if (!e || *e != '/' || std::strlen(e) > 4096) return std::nullopt;
  return std::string(e);
}

Result<std::optional<FreeGpus>> read_free_gpus(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<FreeGpus>();
    return make_error(path + ": cannot open (" + std::strerror(errno) + ")");
  }
  struct stat st{};
  std::string text;
  std::string why;
  if (::fstat(fd, &st) != 0) why = std::string("cannot stat (") + std::strerror(errno) + ")";
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  else if (st.st_uid != 0 && st.st_uid != ::geteuid()) why = "not owned by root or by this daemon's user";
  else if (st.st_mode & (S_IWGRP | S_IWOTH)) why = "writable by its group or by others";
  else if (static_cast<std::size_t>(st.st_size) > kMaxFreeGpusBytes)
    why = "larger than " + std::to_string(kMaxFreeGpusBytes) + " bytes";
  if (why.empty()) {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  if (!why.empty()) return make_error(path + ": " + why);
  auto f = parse_free_gpus(text, path);
  if (!f) return make_error(f.error());
  return std::optional<FreeGpus>(std::move(*f));
}

Result<void> write_free_gpus(const std::string& path, const FreeGpus& f) {
  const std::string tmp = path + ".tmp";
  const std::string text = to_text(f);
  if (auto slash = path.rfind('/'); slash != std::string::npos && slash > 0)
    if (::mkdir(path.substr(0, slash).c_str(), 0755) != 0 && errno != EEXIST)
      return make_error(path.substr(0, slash) + ": cannot create (" + std::strerror(errno) + ")");
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(tmp + ": cannot create (" + std::strerror(errno) + ")");
  bool ok = ::fchmod(fd, 0644) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return make_error(path + ": cannot write (" + why + ")");
  }
  return {};
}

}  // namespace crius::slurm
