// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "launcher/layout.h"

#include <algorithm>
#include <sstream>

#include "common/util.h"
#include "launcher/plan_source.h"

namespace crius::launcher {

using util::split;
using util::to_int;
using util::trim;

Result<std::vector<std::string>> expand_hostlist(std::string_view list) {
  std::vector<std::string> out;
  std::string item;
  int depth = 0;
  auto flush = [&](const std::string& word) -> Result<void> {
    if (word.empty()) return {};
    auto lb = word.find('[');
    if (lb == std::string::npos) {
      out.push_back(word);
      return {};
    }
    auto rb = word.find(']', lb);
    if (rb == std::string::npos) return make_error("host list '" + std::string(list) + "': missing ']'");
    std::string prefix = word.substr(0, lb), suffix = word.substr(rb + 1);
    std::vector<std::string> tails;
    if (suffix.find('[') != std::string::npos) {
      auto rest = expand_hostlist(suffix);
      if (!rest) return make_error(rest.error());
      tails = *rest;
    } else {
      tails.push_back(suffix);
    }
    for (const auto& part : split(std::string_view(word).substr(lb + 1, rb - lb - 1), ',')) {
      auto dash = part.find('-');
      std::string a = part.substr(0, dash), b = dash == std::string::npos ? a : part.substr(dash + 1);
      auto lo = to_int(a), hi = to_int(b);
      if (!lo || !hi || *hi < *lo || *hi - *lo > 100000)
        return make_error("host list '" + std::string(list) + "': bad range '" + part + "'");
      for (long long n = *lo; n <= *hi; ++n) {
        std::string num = std::to_string(n);
        if (num.size() < a.size()) num.insert(0, a.size() - num.size(), '0');  // keep zero padding
        for (const auto& t : tails) out.push_back(prefix + num + t);
      }
    }
    return {};
  };
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      if (auto r = flush(std::string(trim(item))); !r) return make_error(r.error());
      item.clear();
    } else {
      item += c;
    }
  }
  if (auto r = flush(std::string(trim(item))); !r) return make_error(r.error());
  return out;
}

Result<Layout> Layout::make(const Plan& plan, std::vector<std::string> hosts, int gpus_per_node) {
  if (auto r = estimator::validate(plan, "plan"); !r) return make_error(r.error());
  Layout l;
  l.m_plan = plan;
  l.m_world = plan.world_size();
  int base = 0;
  for (const auto& s : plan.stages) {
    l.m_base.push_back(base);
    base += s.gpus();
  }
  if (hosts.empty()) {
    hosts.push_back("localhost");
    if (gpus_per_node <= 0) gpus_per_node = l.m_world;
  }
  if (gpus_per_node <= 0) return make_error("GPUs per node must be >= 1 (got " + std::to_string(gpus_per_node) + ")");
  long long slots = static_cast<long long>(hosts.size()) * gpus_per_node;
  if (l.m_world > slots)
    return make_error("the plan needs " + std::to_string(l.m_world) + " ranks but the allocation has " +
                      std::to_string(hosts.size()) + " node(s) x " + std::to_string(gpus_per_node) + " GPU(s) = " +
                      std::to_string(slots) + " slots");
  l.m_hosts = std::move(hosts);
  l.m_gpus_per_node = gpus_per_node;
  l.m_ranks.resize(l.m_world);
  for (int s = 0; s < plan.pp(); ++s) {
    const auto& st = plan.stages[s];
    for (int d = 0; d < st.dp; ++d)
      for (int c = 0; c < st.cp; ++c)
        for (int t = 0; t < st.tp; ++t) {
          const int r = l.m_base[s] + t + st.tp * (c + st.cp * d);
          RankInfo& ri = l.m_ranks[r];
          ri.rank = r;
          ri.stage = s;
          ri.dp_rank = d;
          ri.tp_rank = t;
          ri.cp_rank = c;
          ri.node = r / gpus_per_node;
          ri.local_rank = r % gpus_per_node;
          ri.host = l.m_hosts[ri.node];
        }
  }
  for (const auto& g : l.tp_groups()) {
    const auto& a = l.m_ranks[g.front()];
    const auto& b = l.m_ranks[g.back()];
    if (a.node != b.node)
      return make_error("TP group " + format_int_list(g) + " of stage " + std::to_string(a.stage) +
                        " would span nodes " + a.host + " and " + b.host + " (" + std::to_string(gpus_per_node) +
                        " GPUs per node; a stage's TP size must divide the GPUs per node and its block must not "
                        "straddle a node boundary)");
  }
  return l;
}

int Layout::rank_of(int stage, int dp_rank, int tp_rank, int cp_rank) const {
  if (stage < 0 || stage >= m_plan.pp()) return -1;
  const auto& st = m_plan.stages[stage];
  if (dp_rank < 0 || dp_rank >= st.dp || tp_rank < 0 || tp_rank >= st.tp || cp_rank < 0 || cp_rank >= st.cp) return -1;
  return m_base[stage] + tp_rank + st.tp * (cp_rank + st.cp * dp_rank);
}

int Layout::ranks_on_node(int node) const {
  int n = 0;
  for (const auto& r : m_ranks) n += r.node == node;
  return n;
}

std::vector<int> Layout::tp_group(int r) const {
  const auto& ri = m_ranks.at(r);
  std::vector<int> g;
  for (int t = 0; t < m_plan.stages[ri.stage].tp; ++t) g.push_back(rank_of(ri.stage, ri.dp_rank, t, ri.cp_rank));
  return g;
}

std::vector<int> Layout::dp_group(int r) const {
  const auto& ri = m_ranks.at(r);
  std::vector<int> g;
  for (int d = 0; d < m_plan.stages[ri.stage].dp; ++d) g.push_back(rank_of(ri.stage, d, ri.tp_rank, ri.cp_rank));
  return g;
}

std::vector<int> Layout::cp_group(int r) const {
  const auto& ri = m_ranks.at(r);
  std::vector<int> g;
  for (int c = 0; c < m_plan.stages[ri.stage].cp; ++c) g.push_back(rank_of(ri.stage, ri.dp_rank, ri.tp_rank, c));
  return g;
}

std::vector<std::vector<int>> Layout::pp_groups() const {
  int chains = 0;
  for (const auto& s : m_plan.stages) chains = std::max(chains, s.gpus());
  std::vector<std::vector<int>> out(chains);
  for (int g = 0; g < chains; ++g)
    for (int s = 0; s < m_plan.pp(); ++s)
      out[g].push_back(m_base[s] + static_cast<int>(static_cast<long long>(g) * m_plan.stages[s].gpus() / chains));
  return out;
}

int Layout::pp_chain_of(int r) const {
  const auto& ri = m_ranks.at(r);
  int chains = 0;
  for (const auto& s : m_plan.stages) chains = std::max(chains, s.gpus());
  int local = r - m_base[ri.stage];
  int size = m_plan.stages[ri.stage].gpus();
  // lowest g with floor(g*size/chains) == local
  long long g = (static_cast<long long>(local) * chains + size - 1) / size;
  return static_cast<int>(g);
}

std::vector<int> Layout::pp_group(int r) const {
  int chains = 0;
  for (const auto& s : m_plan.stages) chains = std::max(chains, s.gpus());
  int g = pp_chain_of(r);
  std::vector<int> out;
  for (int s = 0; s < m_plan.pp(); ++s)
    out.push_back(m_base[s] + static_cast<int>(static_cast<long long>(g) * m_plan.stages[s].gpus() / chains));
  return out;
}

std::vector<std::vector<int>> Layout::tp_groups() const {
  std::vector<std::vector<int>> out;
  for (int s = 0; s < m_plan.pp(); ++s)
    for (int d = 0; d < m_plan.stages[s].dp; ++d)
      for (int c = 0; c < m_plan.stages[s].cp; ++c) out.push_back(tp_group(rank_of(s, d, 0, c)));
  return out;
}

std::vector<std::vector<int>> Layout::dp_groups() const {
  std::vector<std::vector<int>> out;
  for (int s = 0; s < m_plan.pp(); ++s)
    for (int c = 0; c < m_plan.stages[s].cp; ++c)
      for (int t = 0; t < m_plan.stages[s].tp; ++t) out.push_back(dp_group(rank_of(s, 0, t, c)));
  return out;
}

nlohmann::json Layout::to_json() const {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : m_ranks) {
    nlohmann::json j = {{"rank", r.rank},         {"host", r.host},       {"local_rank", r.local_rank},
                        {"stage", r.stage},       {"dp_rank", r.dp_rank}, {"tp_rank", r.tp_rank},
                        {"tp_group", tp_group(r.rank)}, {"dp_group", dp_group(r.rank)},
                        {"pp_group", pp_group(r.rank)}};
    const auto& st = m_plan.stages[r.stage];
    if (st.cp > 1) j["cp_rank"] = r.cp_rank, j["cp_group"] = cp_group(r.rank);
    if (m_plan.has_layers()) j["layers"] = {st.layer_begin, st.layer_end};  // [begin, end)
    ranks.push_back(j);
  }
  return {{"ranks", ranks}, {"plan", estimator::to_json(m_plan)}};
}

std::string Layout::table() const {
  std::ostringstream o;
  size_t hw = 4;
  for (const auto& h : m_hosts) hw = std::max(hw, h.size());
  auto pad = [](std::string s, size_t w) {
    if (s.size() < w) s.append(w - s.size(), ' ');
    return s;
  };
  o << pad("RANK", 6) << pad("HOST", hw + 2) << pad("LOCAL", 7) << pad("STAGE", 7) << pad("LAYERS", 10)
    << pad("DP", 4) << pad("TP", 4) << pad("TP_GROUP", 14) << pad("DP_GROUP", 14) << "PP_GROUP\n";
  for (const auto& r : m_ranks) {
    const auto& st = m_plan.stages[r.stage];
    std::string layers =
        m_plan.has_layers() ? std::to_string(st.layer_begin) + "-" + std::to_string(st.layer_end - 1) : "-";
    o << pad(std::to_string(r.rank), 6) << pad(r.host, hw + 2) << pad(std::to_string(r.local_rank), 7)
      << pad(std::to_string(r.stage), 7) << pad(layers, 10) << pad(std::to_string(r.dp_rank), 4)
      << pad(std::to_string(r.tp_rank), 4) << pad(format_int_list(tp_group(r.rank)), 14)
      << pad(format_int_list(dp_group(r.rank)), 14) << format_int_list(pp_group(r.rank)) << "\n";
  }
  return o.str();
}

}  // namespace crius::launcher
