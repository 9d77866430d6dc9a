// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/policies/crius.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

namespace crius::scheduler {

namespace {

struct Candidate {
  int partition;
  Cell shape;
  double score;  // normalised Cell-optimal speed
};

// A job's Cells to choose from, with the orders the objectives take them in
// (preference_order): the first of an order that places now is the objective's choice.
struct Cands {
  std::vector<Candidate> list;
  std::vector<std::size_t> by_speed, by_per_gpu;
  bool empty() const { return list.empty(); }
};

Cands ordered(std::vector<Candidate> list) {
  std::vector<CellOption> options;
  for (const Candidate& c : list) options.push_back({c.score, c.shape.gpus()});
  return Cands{std::move(list), preference_order(options, false), preference_order(options, true)};
}

}  // namespace

// What a round asks of a job's Cells depends only on its class (model, batch, runtime,
// request and the resource manager's bounds) and the cluster's shapes: listed once per class
// and kept while the cluster, the speeds and the options stay (a memo; decisions are those of
// listing them every round).
struct CriusPolicy::Memo {
  struct Key {
    std::string model, req_gpu;
    int batch, stack, req_gpus, cap, max_nodes, max_gpus_per_node;
    std::vector<int> partition_max_nodes;
    std::map<std::string, int> max_gpus_of_type;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      std::size_t h = std::hash<std::string>()(k.model) ^ (std::hash<std::string>()(k.req_gpu) << 1);
      for (int v : {k.batch, k.stack, k.req_gpus, k.cap, k.max_nodes, k.max_gpus_per_node}) h = h * 1000003 + static_cast<std::size_t>(v);
      for (int v : k.partition_max_nodes) h = h * 31 + static_cast<std::size_t>(v + 1);
      for (const auto& [gpu, v] : k.max_gpus_of_type) h = (h * 31 ^ std::hash<std::string>()(gpu)) + static_cast<std::size_t>(v);
      return h;
    }
  };
  struct Class {
    double ref = 1;  // the speed the scores are normalised by
    // Cells of at most kMaxScale x the request, and (listed where asked) of any size (the job's
    // bounds apply): best score first, then fewer GPUs, then fewer nodes.
    Cands scaled;
    std::optional<Cands> all;
    // Of `count` GPUs of a type: the allowed, memory-feasible shapes in shapes_for's order
    // (score: the speed), and the fastest speed of them (0: none).
    struct Shapes {
      std::vector<RatedShape> list;
      double fastest = 0;
    };
    std::unordered_map<std::uint64_t, Shapes> shapes;  // by (type, count)
  };
  // What the memo was listed for: the cluster's shapes (partitions, and the GPU counts of each
  // type: counts_for its total) and the speeds (the bounds are in each class's key).
  struct Signature {
    const ThroughputSource* tput = nullptr;
    std::vector<std::tuple<std::string, int, int>> partitions;  // gpu, nodes, gpus per node
    std::vector<std::string> types;
    std::vector<int> largest_count;  // per type
    bool operator==(const Signature&) const = default;
  };
  Signature signature;
  std::unordered_map<Key, Class, KeyHash> classes;
  // Past this many classes (a long-running criusd meets new ones), the next round starts over.
  static constexpr std::size_t kMaxClasses = 4096;

  void keep_for(const Context& ctx) {
    Signature now{&ctx.tput, {}, ctx.totals.types, {}};
    for (const Partition& p : ctx.cluster.partitions) now.partitions.emplace_back(p.gpu, p.nodes, p.gpus_per_node);
    for (int total : ctx.totals.gpus) now.largest_count.push_back(total > 0 ? counts_for(total).back() : 0);
    if (now == signature && classes.size() <= kMaxClasses) return;
    signature = std::move(now);
    classes.clear();
  }
};

namespace {

// The state of one round of the crius policy.
class Round {
 public:
  Round(const Context& ctx, const PolicyOptions& opt, CriusPolicy::Memo& memo)
      : m_ctx(ctx), m_opt(opt), m_memo(memo), m_targets(keep_running(ctx)), m_free(taken(ctx, m_targets)),
        m_class(ctx.jobs.size(), nullptr) {
    memo.keep_for(ctx);
    for (const Job* j : ctx.jobs) m_unplaced += j->state == JobState::pending;
  }

  std::vector<Target> run();
  std::optional<PlacedShape> arrive(size_t i, int waiting);

 private:
  using Class = CriusPolicy::Memo::Class;
  const Job& job(size_t i) const { return *m_ctx.jobs[i]; }
  double speed(size_t i, const Cell& s) const { return decision_speed(m_ctx, job(i), s, false); }
  Class& job_class(size_t i);
  double ref(size_t i) { return job_class(i).ref; }
  // The share of its remaining work job i does per second on `a`.
  double rate(size_t i, const Allocation& a) const {
    return a.empty() ? 0 : std::max(0.0, speed(i, a.shape)) / std::max(1.0, job(i).remaining());
  }
  double score(size_t i, const Allocation& a) {
    return a.empty() ? 0 : std::max(0.0, speed(i, a.shape)) / ref(i);
  }
  // Every memory-feasible Cell of the job the resource manager allows, of at most
  // kMaxScale x its request where there are such (else of any size), and of any size.
  const Cands& fit_candidates(size_t i) {
    const Class& c = job_class(i);
    return c.scaled.empty() ? all_candidates(i) : c.scaled;
  }
  const Cands& all_candidates(size_t i);
  std::vector<Candidate> listed(size_t i, int most) const;
  // The shapes of `count` GPUs of type `type` (index in gpu_types()) the job is allowed.
  const Class::Shapes& shapes(size_t i, int type, int count);
  std::optional<Allocation> best_fit(const Cands& cands) const;
  // The Cell the objective takes among `cands` that place now (throughput: best_fit), and the
  // one it takes where none places (the job's ideal). For job m_job, whose decision it is.
  std::optional<Allocation> pick_fit(const Cands& cands) const;
  const Candidate& ideal(const Cands& cands) const;
  // Another pending job than m_job waits for GPUs: not placed (yet) in this round.
  bool others_wait() const;
  // The fastest shape of `gpus` GPUs of `gpu` the job is allowed that places now (place_best),
  // and its speed.
  std::optional<Allocation> place_on(size_t i, const std::string& gpu, int gpus, double* speed = nullptr);
  double restart_s(const Allocation& next) const { return restart_cost(m_opt, true, next.shape.gpus()); }
  double restart_penalty(size_t i, const Allocation& next) {
    return job(i).state == JobState::running ? score(i, next) * restart_s(next) / m_opt.interval_s : 0;
  }
  bool deadline_aware() const { return m_opt.deadline_mode || m_opt.deadline_cells; }
  bool has_deadline(size_t i) const { return deadline_aware() && std::isfinite(job(i).deadline); }
  // Job i, on `s` from now (paying a restart when `restart`), finishes by its deadline.
  bool finishes_by_deadline(size_t i, const Cell& s, bool restart) const;
  bool restarts(size_t i) const { return job(i).state == JobState::running || job(i).first_start >= 0; }
  // The Cells of `cands` on which job i, started or moved now, meets its deadline:
  // the fewest GPUs first (they leave the most to others), then the best score.
  Cands meeting(size_t i, const Cands& cands) const;
  bool can_meet(size_t i) { return !meeting(i, all_candidates(i)).empty(); }
  bool fit_deadline(size_t i, bool& searched);
  void rescue_deadline(size_t i);
  bool fit(size_t i, bool& searched);
  bool search(size_t i, const Cands& cands, double floor);
  bool search_shrinks(size_t i, const Cands& cands);
  // The blocked queue head i takes GPUs back from opportunistic jobs, latest first, until
  // `place` (on m_free) gives it an allocation.
  bool preempt_for_head(size_t i, const std::function<std::optional<Allocation>()>& place);
  // A pending plain job: the resource manager starts it on its request; the policy holds those
  // GPUs for it where they are free (or, its queue head, freed from opportunistic jobs).
  bool hold_for_plain(size_t i, bool head);
  void upgrade();
  // Every change of a target goes through here, which keeps m_unplaced.
  void set(size_t i, const Allocation& a, std::string reason) {
    if (job(i).state == JobState::pending) m_unplaced += int(a.empty()) - int(m_targets[i].alloc.empty());
    m_targets[i].alloc = a;
    m_targets[i].reason = std::move(reason);
  }

  const Context& m_ctx;
  const PolicyOptions& m_opt;
  CriusPolicy::Memo& m_memo;
  std::vector<Target> m_targets;
  FreeMap m_free;
  std::vector<Class*> m_class;  // per job, once looked up
  int m_unplaced = 0;   // pending jobs without a target (yet)
  size_t m_job = 0;     // the job whose Cell is being chosen
  int m_waiting = -1;   // arrive: others waiting, as job_submit knows it (-1: m_unplaced's)
};

// Every allowed, memory-feasible Cell of job i of at most `most` GPUs, by speed (in `score`):
// best first; among equals fewer GPUs, then fewer nodes.
std::vector<Candidate> Round::listed(size_t i, int most) const {
  if (const int cap = m_ctx.max_gpus(job(i)); cap > 0) most = std::min(most, cap);
  std::vector<Candidate> out;
  for (const std::string& gpu : m_ctx.gpu_types())
    for (int n : counts_for(m_ctx.total_gpus(gpu))) {
      if (n > most) break;
      for (const PlacedShape& ps : shapes_for(m_ctx.cluster, gpu, n)) {
        if (!m_ctx.allowed(job(i), ps.partition, ps.shape)) continue;
        double s = speed(i, ps.shape);
        if (s > 0) out.push_back(Candidate{ps.partition, ps.shape, s});
      }
    }
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.shape.gpus() != b.shape.gpus()) return a.shape.gpus() < b.shape.gpus();
    return a.shape.nodes < b.shape.nodes;
  });
  return out;
}

Round::Class& Round::job_class(size_t i) {
  if (m_class[i]) return *m_class[i];
  const Job& j = job(i);
  CriusPolicy::Memo::Key key{j.model,    j.req_gpu,           j.global_batch, j.stack().key(),
                             j.req_gpus, m_ctx.max_gpus(j), j.max_nodes,    j.max_gpus_per_node,
                             j.partition_max_nodes, j.max_gpus_of_type};
  auto [at, fresh] = m_memo.classes.try_emplace(std::move(key));
  Class& c = at->second;
  m_class[i] = &c;
  if (!fresh) return c;
  std::vector<Candidate> scaled = listed(i, CriusPolicy::kMaxScale * std::max(1, j.req_gpus));
  // Scores are normalised by the speed of what the job requested; where the request itself
  // cannot run, by its best Cell of at most as many GPUs.
  double r = -1;
  for (const PlacedShape& ps : shapes_for(m_ctx.cluster, j.req_gpu, j.req_gpus)) r = std::max(r, speed(i, ps.shape));
  if (r <= 0)
    for (const Candidate& a : scaled)
      if (a.shape.gpus() <= j.req_gpus) r = std::max(r, a.score);
  c.ref = r > 0 ? r : 1;
  for (Candidate& a : scaled) a.score /= c.ref;
  c.scaled = ordered(std::move(scaled));
  return c;
}

const Cands& Round::all_candidates(size_t i) {
  Class& c = job_class(i);
  if (!c.all) {
    std::vector<Candidate> all = listed(i, std::numeric_limits<int>::max());
    for (Candidate& a : all) a.score /= c.ref;
    c.all = ordered(std::move(all));
  }
  return *c.all;
}

const Round::Class::Shapes& Round::shapes(size_t i, int type, int count) {
  Class& c = job_class(i);
  const std::uint64_t key = (static_cast<std::uint64_t>(type) << 32) | static_cast<std::uint32_t>(count);
  auto [at, fresh] = c.shapes.try_emplace(key);
  Class::Shapes& out = at->second;
  if (fresh)
    for (const PlacedShape& ps : shapes_for(m_ctx.cluster, m_ctx.gpu_types()[type], count)) {
      if (!m_ctx.allowed(job(i), ps.partition, ps.shape)) continue;
      const double s = speed(i, ps.shape);
      if (s <= 0) continue;
      out.list.push_back(RatedShape{ps.partition, ps.shape, s});
      out.fastest = std::max(out.fastest, s);
    }
  return out;
}

std::optional<Allocation> Round::place_on(size_t i, const std::string& gpu, int gpus, double* speed) {
  const std::vector<std::string>& types = m_ctx.gpu_types();
  const auto t = std::find(types.begin(), types.end(), gpu);
  if (t == types.end() || gpus <= 0) return std::nullopt;
  return place_fastest(m_free, shapes(i, static_cast<int>(t - types.begin()), gpus).list, speed);
}

std::optional<Allocation> Round::best_fit(const Cands& cands) const {
  for (const Candidate& c : cands.list)
    if (auto a = m_free.place(c.partition, c.shape)) return a;
  return std::nullopt;
}

bool Round::others_wait() const {
  if (m_waiting >= 0) return m_waiting > 0;
  const bool self = job(m_job).state == JobState::pending && m_targets[m_job].alloc.empty();
  return m_unplaced - int(self) > 0;
}

// choose_cell over the Cells that place: the first of the objective's order that places (a
// fixed job, which keeps it for life: of those at least kKeptCellFloor of its fastest, first).
std::optional<Allocation> Round::pick_fit(const Cands& cands) const {
  if (m_opt.objective == Objective::throughput) return best_fit(cands);
  const bool per_gpu = efficient(m_opt.objective, others_wait());
  if (per_gpu && job(m_job).kind == JobKind::fixed) {
    const double floor = kKeptCellFloor * cands.list[cands.by_speed[0]].score;
    for (std::size_t k : cands.by_per_gpu)
      if (cands.list[k].score >= floor)
        if (auto a = m_free.place(cands.list[k].partition, cands.list[k].shape)) return a;
  }
  for (std::size_t k : per_gpu ? cands.by_per_gpu : cands.by_speed)
    if (auto a = m_free.place(cands.list[k].partition, cands.list[k].shape)) return a;
  return std::nullopt;
}

// Where nothing places, the job waits: adaptive waits in its most efficient Cell.
const Candidate& Round::ideal(const Cands& cands) const {
  return cands.list[(efficient(m_opt.objective, true) ? cands.by_per_gpu : cands.by_speed)[0]];
}

bool Round::finishes_by_deadline(size_t i, const Cell& s, bool restart) const {
  const double sp = speed(i, s);
  if (sp <= 0) return false;
  const double run = job(i).remaining() * job(i).global_batch / sp;
  return m_ctx.now + (restart ? restart_cost(m_opt, true, s.gpus()) : 0) + run <= job(i).deadline;
}

Cands Round::meeting(size_t i, const Cands& cands) const {
  std::vector<Candidate> out;
  for (const Candidate& c : cands.list)
    if (finishes_by_deadline(i, c.shape, restarts(i))) out.push_back(c);
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    if (a.shape.gpus() != b.shape.gpus()) return a.shape.gpus() < b.shape.gpus();
    return a.score > b.score;
  });
  return ordered(std::move(out));
}

// A pending job with a deadline: the fewest GPUs that meet it and place now, else (once per
// round's search budget) a change of one running job that makes room for such a Cell.
bool Round::fit_deadline(size_t i, bool& searched) {
  const Cands meet = meeting(i, all_candidates(i));
  if (meet.empty()) return false;
  if (auto a = best_fit(meet)) {
    m_free.take(*a);
    set(i, *a, "meets its deadline on " + std::to_string(a->shape.gpus()) + " " + a->shape.gpu);
    return true;
  }
  if (searched) return false;
  searched = true;
  return search(i, meet, 0);
}

// A running job that would miss its deadline where it is moves to the fewest GPUs that meet
// it among those free.
void Round::rescue_deadline(size_t i) {
  const Allocation old = m_targets[i].alloc;
  if (old.empty() || !has_deadline(i) || finishes_by_deadline(i, old.shape, false)) return;
  m_free.give(old);
  std::optional<Allocation> a = best_fit(meeting(i, all_candidates(i)));
  if (a && !(*a == old)) {
    m_free.take(*a);
    set(i, *a, "moved to meet its deadline on " + std::to_string(a->shape.gpus()) + " " + a->shape.gpu);
  } else {
    m_free.take(old);
  }
}

// The bounded search for a job that does not fit well: change one running job
// (shrink it, move it to another GPU type, or migrate it on its type) if the
// total normalised speed gains more than starting the job where it fits now.
bool Round::search(size_t i, const Cands& cands, double floor) {
  std::vector<size_t> running;
  for (size_t k = 0; k < m_targets.size(); ++k)
    if (k != i && !m_targets[k].alloc.empty() && job(k).kind != JobKind::plain) running.push_back(k);
  // The search_jobs largest, in queue order among equals.
  const size_t tried = std::min(running.size(), static_cast<size_t>(m_opt.crius.search_jobs));
  std::partial_sort(running.begin(), running.begin() + static_cast<std::ptrdiff_t>(tried), running.end(),
                    [&](size_t a, size_t b) {
                      const int ga = m_targets[a].alloc.shape.gpus(), gb = m_targets[b].alloc.shape.gpus();
                      return ga != gb ? ga > gb : a < b;
                    });
  running.resize(tried);

  double best_gain = floor + 1e-9;
  std::optional<std::pair<size_t, Allocation>> best_other;
  std::optional<Allocation> best_mine;
  std::string best_why;
  auto consider = [&](size_t k, const Allocation& old, const Allocation& moved, bool mine_first,
                      const char* why) {
    // Evaluate with k on `moved`; `old` already released from m_free.
    std::optional<Allocation> mine;
    if (mine_first) {
      mine = pick_fit(cands);
      if (!mine) return;
      m_free.take(*mine);
      bool ok = m_free.fits(moved);
      m_free.give(*mine);
      if (!ok) return;
    } else {
      if (!m_free.fits(moved)) return;
      m_free.take(moved);
      mine = pick_fit(cands);
      m_free.give(moved);
      if (!mine) return;
    }
    // Never at the cost of another job's deadline.
    if (has_deadline(k) && finishes_by_deadline(k, old.shape, false) && !finishes_by_deadline(k, moved.shape, true))
      return;
    double gain = score(i, *mine) - (score(k, old) - score(k, moved)) - restart_penalty(k, moved);
    if (gain > best_gain) {
      best_gain = gain;
      best_other = {k, moved};
      best_mine = mine;
      best_why = why;
    }
  };
  for (size_t k : running) {
    Allocation old = m_targets[k].alloc;
    m_free.give(old);
    const CriusMechanisms& use = m_opt.crius;
    if (use.scaling && old.shape.gpus() >= 2)
      if (auto a = place_on(k, old.shape.gpu, old.shape.gpus() / 2))
        consider(k, old, *a, false, "shrink");
    for (const std::string& gpu : m_ctx.gpu_types())
      if (use.type_change && gpu != old.shape.gpu)
        if (auto a = place_on(k, gpu, old.shape.gpus())) consider(k, old, *a, false, "change type");
    // Migrate on the same type: the new job takes its best fit first.
    if (use.migration)
      if (auto mine = pick_fit(cands)) {
        m_free.take(*mine);
        auto a = place_on(k, old.shape.gpu, old.shape.gpus());
        m_free.give(*mine);
        if (a && !(*a == old)) consider(k, old, *a, true, "migrate");
      }
    m_free.take(old);
  }
  if (!best_other) return m_opt.crius.scaling && m_opt.crius.search_depth > 1 && search_shrinks(i, cands);
  auto [k, moved] = *best_other;
  m_free.give(m_targets[k].alloc);
  m_free.take(moved);
  set(k, moved, best_why + " to make room for job " + job(i).name);
  m_free.take(*best_mine);
  set(i, *best_mine, "fit after " + best_why + " of job " + job(k).name);
  return true;
}

// The multi-step search (the Crius artifact's downgrade search, greedy): where no one change
// makes room, running jobs shrink to half their GPUs one after another until the job fits, at
// most search_depth of them. Gains here are shares of each job's remaining work done per
// second (speed / iterations left), which a shrink of a job near its end costs the most of:
// the cheapest shrink per GPU freed goes first, and the plan stands only where the job's
// share gains more than the shrunk jobs' lose, the running ones' restarts included.
bool Round::search_shrinks(size_t i, const Cands& cands) {
  struct Step {
    size_t k;
    Allocation old;
  };
  std::vector<Step> steps;
  std::vector<char> changed(m_targets.size(), 0);
  double loss = 0;
  const auto now = pick_fit(cands);
  const double floor_rate = now ? rate(i, *now) : 0;
  auto undo = [&] {
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      m_free.give(m_targets[it->k].alloc);
      m_free.take(it->old);
      m_targets[it->k].alloc = it->old;
    }
  };
  for (int depth = 0; depth < m_opt.crius.search_depth; ++depth) {
    std::optional<std::pair<size_t, Allocation>> best;
    double best_cost = 0, best_loss = 0;
    for (size_t k = 0; k < m_targets.size(); ++k) {
      const Allocation& old = m_targets[k].alloc;
      if (k == i || changed[k] || old.empty() || job(k).kind == JobKind::plain || old.shape.gpus() < 2) continue;
      m_free.give(old);
      auto a = place_on(k, old.shape.gpu, old.shape.gpus() / 2);
      m_free.take(old);
      if (!a) continue;
      if (has_deadline(k) && finishes_by_deadline(k, old.shape, false) && !finishes_by_deadline(k, a->shape, true))
        continue;
      const double restart = job(k).state == JobState::running ? rate(k, *a) * restart_s(*a) / m_opt.interval_s : 0;
      const double l = rate(k, old) - rate(k, *a) + restart;
      const double cost = l / (old.shape.gpus() - a->shape.gpus());
      if (!best || cost < best_cost) best = {k, *a}, best_cost = cost, best_loss = l;
    }
    if (!best) break;
    auto [k, a] = *best;
    steps.push_back({k, m_targets[k].alloc});
    changed[k] = 1;
    m_free.give(m_targets[k].alloc);
    m_free.take(a);
    m_targets[k].alloc = a;
    loss += best_loss;
    if (auto mine = pick_fit(cands)) {
      if (rate(i, *mine) - loss <= floor_rate + 1e-12) break;
      std::vector<Step> done = steps;
      for (const Step& st : done) {
        Allocation shrunk = m_targets[st.k].alloc;
        m_targets[st.k].alloc = st.old;
        set(st.k, shrunk, "shrink to make room for job " + job(i).name);
      }
      m_free.take(*mine);
      set(i, *mine, "fit after " + std::to_string(done.size()) + " shrinks");
      return true;
    }
  }
  undo();
  return false;
}

bool Round::preempt_for_head(size_t i, const std::function<std::optional<Allocation>()>& place) {
  // Only jobs that may change now, and no more than the round's budget of moves leaves: a head
  // that gets some of the GPUs it needs, not all, waits all the same, and the jobs preempted for
  // it would start again where they were.
  std::vector<size_t> opp;
  int changes = 0;
  for (size_t k = 0; k < m_targets.size(); ++k) {
    const bool running = job(k).state == JobState::running;
    changes += running && !(m_targets[k].alloc == job(k).alloc);
    if (!m_targets[k].alloc.empty() && m_targets[k].opportunistic &&
        (!running || may_change(job(k), m_opt, m_ctx.now)))
      opp.push_back(k);
  }
  std::stable_sort(opp.begin(), opp.end(), [&](size_t a, size_t b) {
    return job(a).first_start > job(b).first_start;
  });
  std::vector<size_t> released;
  for (size_t k : opp) {
    m_free.give(m_targets[k].alloc);
    released.push_back(k);
    if (auto a = place()) {
      // Give back what was not needed.
      m_free.take(*a);
      std::vector<size_t> victims;
      for (size_t r : released) {
        if (m_free.fits(m_targets[r].alloc)) m_free.take(m_targets[r].alloc);
        else victims.push_back(r);
      }
      const long moves = std::count_if(victims.begin(), victims.end(),
                                       [&](size_t r) { return job(r).state == JobState::running; });
      if (m_opt.max_moves_per_round >= 0 && changes + moves > m_opt.max_moves_per_round) {
        m_free.give(*a);
        for (size_t r : victims) m_free.take(m_targets[r].alloc);
        return false;
      }
      for (size_t r : victims) {
        set(r, Allocation{}, "preempted by the blocked queue head " + job(i).name);
        m_targets[r].opportunistic = false;
        m_targets[r].given_way_to = static_cast<int>(i);
      }
      set(i, *a, "queue head: preempted opportunistic jobs");
      return true;
    }
  }
  for (size_t r : released) m_free.take(m_targets[r].alloc);
  return false;
}

bool Round::hold_for_plain(size_t i, bool head) {
  const Job& j = job(i);
  auto place = [&] { return m_free.place(j.held_partition, j.held); };
  if (auto a = place()) {
    m_free.take(*a);
    set(i, *a, "the resource manager starts it on its request");
    return true;
  }
  return head && preempt_for_head(i, place);
}

bool Round::fit(size_t i, bool& searched) {
  m_job = i;
  if (has_deadline(i) && fit_deadline(i, searched)) return true;
  const Cands& cands = fit_candidates(i);
  if (cands.empty()) return false;
  std::optional<Allocation> now = pick_fit(cands);
  double now_score = now ? score(i, *now) : 0;
  // Well: close to its ideal Cell, or to the speed it asked for.
  double good = CriusPolicy::kWellFit * std::min(ideal(cands).score, 1.0);
  if (now && now_score >= good) {
    m_free.take(*now);
    set(i, *now, "fit");
    return true;
  }
  if (!searched && m_opt.crius.search) {
    searched = true;
    if (search(i, cands, now_score)) return true;
  }
  if (now) {
    m_free.take(*now);
    set(i, *now, "fit (below its ideal Cell)");
    return true;
  }
  return false;
}

// Upgrades, best gain per added GPU first, one at a time, while one pays: the choice of a scan
// of every running job's options each time (the largest gain; the first job, type and count on
// a tie), without the scan. Each option sits in a heap under a bound of its gain: first the
// fastest allowed shape of its type and count as if it placed; once evaluated, its gain then,
// which stays a bound while no node of its type gets GPUs back (fewer shapes place). The type
// an upgraded job leaves nodes of (another type, or the same on other nodes) puts its options
// back under the first bound. Each step
// evaluates options in bound order until the best gain beats every bound left; a budget of
// evaluations (kUpgradeEvaluations) ends the pass on the largest clusters.
void Round::upgrade() {
  const std::vector<std::string>& types = m_ctx.gpu_types();
  struct Option {
    size_t i;
    int type, doubled;  // doubled: twice the job's GPUs, else as many
    double first_bound;
    auto order() const { return std::tie(i, type, doubled); }
  };
  struct Entry {
    double bound;
    size_t option;
    int generation;  // of the option when pushed: an older entry is dropped
  };
  std::vector<Option> options;
  std::vector<int> generation;                    // per option; -1: gone (its job moved)
  std::vector<std::vector<size_t>> of_type(types.size());
  std::vector<std::vector<size_t>> of_job(m_targets.size());
  auto lower = [&](const Entry& a, const Entry& b) {
    if (a.bound != b.bound) return a.bound < b.bound;
    return options[a.option].order() > options[b.option].order();
  };
  // One heap per type, so that a type getting GPUs back is rebuilt alone, in linear time.
  std::vector<std::vector<Entry>> heaps(types.size());
  auto push = [&](size_t k, double bound) {
    auto& h = heaps[options[k].type];
    h.push_back(Entry{bound, k, ++generation[k]});
    std::push_heap(h.begin(), h.end(), lower);
  };
  auto rebuild = [&](int t) {
    std::erase_if(of_type[t], [&](size_t k) { return generation[k] < 0; });
    auto& h = heaps[t];
    h.clear();
    for (size_t k : of_type[t]) h.push_back(Entry{options[k].first_bound, k, ++generation[k]});
    std::make_heap(h.begin(), h.end(), lower);
  };
  // The entry of the largest bound over the heaps (stale ones dropped), if any.
  auto top = [&]() -> std::vector<Entry>* {
    std::vector<Entry>* best = nullptr;
    for (auto& h : heaps) {
      while (!h.empty() && h.front().generation != generation[h.front().option]) {
        std::pop_heap(h.begin(), h.end(), lower);
        h.pop_back();
      }
      if (!h.empty() && (!best || lower(best->front(), h.front()))) best = &h;
    }
    return best;
  };
  std::vector<double> s_held(m_targets.size(), 0);  // each job's speed where it is (offer)
  auto offer = [&](size_t i) {
    const Allocation& old = m_targets[i].alloc;
    if (old.empty() || job(i).kind == JobKind::plain) return;  // a plain job's GPUs are its request's
    const Job& j = job(i);
    const double s_old = s_held[i] = speed(i, old.shape);
    if (s_old <= 0) return;
    const double left_old = j.remaining() * j.global_batch / s_old;
    const int cap = m_ctx.max_gpus(j);
    for (int t = 0; t < static_cast<int>(types.size()); ++t)
      for (int doubled : {0, 1}) {
        const int c = doubled ? 2 * old.shape.gpus() : old.shape.gpus();
        if ((types[t] == old.shape.gpu && !doubled) || (cap > 0 && c > cap)) continue;
        if ((doubled && !m_opt.crius.scaling) || (types[t] != old.shape.gpu && !m_opt.crius.type_change)) continue;
        const double s_max = shapes(i, t, c).fastest;
        if (s_max <= 0 || s_max < (doubled ? CriusPolicy::kDoubleGain : 1.05) * s_old) continue;
        const double cost = restart_cost(m_opt, true, c);
        const double restart = j.state == JobState::running ? cost : 0;
        if (left_old - (restart + j.remaining() * j.global_batch / s_max) <= 2 * cost) continue;
        const size_t k = options.size();
        options.push_back(Option{i, t, doubled, (s_max - s_old) / s_old / std::max(1, c - old.shape.gpus())});
        generation.push_back(0);
        of_type[t].push_back(k);
        of_job[i].push_back(k);
        push(k, options[k].first_bound);
      }
  };
  // The gain of an option as things stand (0: none), and where.
  auto evaluate = [&](const Option& o, std::optional<Allocation>* where) -> double {
    const Allocation& old = m_targets[o.i].alloc;
    const Job& j = job(o.i);
    const double s_old = s_held[o.i];
    const std::string& gpu = types[o.type];
    const int c = o.doubled ? 2 * old.shape.gpus() : old.shape.gpus();
    const bool same_type = gpu == old.shape.gpu;  // its own GPUs count as free
    double gain = 0;
    if (c <= m_free.free_gpus(gpu) + (same_type ? old.shape.gpus() : 0)) {
      if (same_type) m_free.give(old);
      double s_new = 0;
      if (auto a = place_on(o.i, gpu, c, &s_new)) {
        const double cost = restart_s(*a);
        const double restart = j.state == JobState::running ? cost : 0;
        const double saved = j.remaining() * j.global_batch / s_old - (restart + j.remaining() * j.global_batch / s_new);
        if (s_new >= (c > old.shape.gpus() ? CriusPolicy::kDoubleGain : 1.05) * s_old && saved > 2 * cost) {
          gain = (s_new - s_old) / s_old / std::max(1, c - old.shape.gpus());
          if (where) *where = std::move(a);
        }
      }
      if (same_type) m_free.take(old);
    }
    return gain;
  };
  for (size_t i = 0; i < m_targets.size(); ++i) offer(i);
  long evaluations = 0;
  for (size_t iter = 0; iter < 4 * m_targets.size() && evaluations < CriusPolicy::kUpgradeEvaluations; ++iter) {
    std::optional<size_t> best;
    double best_gain = 0;
    std::vector<std::pair<size_t, double>> looked;  // (option, its gain now)
    while (std::vector<Entry>* h = top()) {
      const Entry e = h->front();
      const Option& o = options[e.option];
      // None left can win: a lower bound, or an equal one after the best on a tie (equal bounds
      // come in (job, type, count) order).
      if (e.bound <= 0 || e.bound < best_gain || (best && e.bound == best_gain && options[*best].order() < o.order()))
        break;
      std::pop_heap(h->begin(), h->end(), lower);
      h->pop_back();
      const double gain = evaluate(o, nullptr);
      ++evaluations;
      looked.emplace_back(e.option, gain);
      if (gain > best_gain || (best && gain == best_gain && o.order() < options[*best].order())) {
        best = e.option;
        best_gain = gain;
      }
    }
    for (auto [k, gain] : looked) push(k, gain);
    if (!best) return;
    const Option chosen = options[*best];
    const size_t i = chosen.i;
    std::optional<Allocation> to;
    evaluate(chosen, &to);
    const Allocation from = m_targets[i].alloc;
    m_free.give(from);
    m_free.take(*to);
    set(i, *to, "upgrade: " + std::to_string(to->shape.gpus()) + " " + to->shape.gpu);
    for (size_t k : of_job[i]) generation[k] = -1;
    of_job[i].clear();
    // The nodes it left have GPUs back, even where it doubled on its type: the options of that
    // type may gain again.
    const int t = static_cast<int>(std::find(types.begin(), types.end(), from.shape.gpu) - types.begin());
    if (t < static_cast<int>(types.size())) rebuild(t);
    offer(i);
  }
}

std::vector<Target> Round::run() {
  // Deadline mode (the queue is earliest deadline first): running jobs that would miss their
  // deadline are rescued first, then the jobs that can meet theirs go before those no Cell
  // brings in on time, which run best effort. Otherwise (criusd: the resource manager's
  // priority order) a running job is rescued where it stands in that order, so a declared
  // deadline never takes GPUs from a pending job ahead of it.
  std::vector<size_t> queue;
  for (size_t i = 0; i < m_ctx.jobs.size(); ++i)
    if (job(i).state == JobState::pending || (deadline_aware() && !m_opt.deadline_mode)) queue.push_back(i);
  if (m_opt.deadline_mode) {
    std::stable_partition(queue.begin(), queue.end(), [&](size_t i) { return has_deadline(i) && can_meet(i); });
    for (size_t i = 0; i < m_targets.size(); ++i) rescue_deadline(i);
  }
  bool blocked = false;
  int searches = 0;
  for (size_t i : queue) {
    if (job(i).state != JobState::pending) {
      rescue_deadline(i);
      continue;
    }
    if (job(i).kind == JobKind::plain) {  // a plain job ahead blocks as any job does
      if (!hold_for_plain(i, !blocked)) blocked = true;
      continue;
    }
    if (blocked && !m_opt.crius.opportunistic) continue;
    bool searched = searches >= m_opt.crius.search_fits;
    bool was_searched = searched;
    bool placed = fit(i, searched);
    if (searched && !was_searched) ++searches;
    if (!placed && !blocked) {
      const Cands& cands = job_class(i).scaled;
      // Enough once it reaches most of the speed it asked for.
      auto place = [&]() -> std::optional<Allocation> {
        auto a = pick_fit(cands);
        if (a && score(i, *a) < CriusPolicy::kWellFit * std::min(ideal(cands).score, 1.0)) return std::nullopt;
        return a;
      };
      if (!cands.empty()) placed = preempt_for_head(i, place);
    }
    if (placed && blocked) m_targets[i].opportunistic = true;
    if (!placed) blocked = true;
  }
  if (!blocked && m_opt.crius.upgrade) upgrade();
  return std::move(m_targets);
}

// The fit step of a round for one new job, without the search (job_submit moves no one): the
// Cell the objective takes among those that place now, else its ideal Cell, which waits. The
// GPUs a plain job ahead of it starts on now are not among them.
std::optional<PlacedShape> Round::arrive(size_t i, int waiting) {
  for (size_t k = 0; k < i; ++k)  // the plain jobs ahead that start now (criusd's report holds them)
    if (job(k).kind == JobKind::plain && job(k).state == JobState::pending) hold_for_plain(k, false);
  m_job = i;
  m_waiting = waiting;
  const Cands& cands = fit_candidates(i);
  if (cands.empty()) return std::nullopt;
  if (auto a = pick_fit(cands)) return PlacedShape{a->partition, a->shape};
  const Candidate& c = ideal(cands);
  return PlacedShape{c.partition, c.shape};
}

}  // namespace

CriusPolicy::CriusPolicy(const PolicyOptions& options) : m_options(options), m_memo(std::make_unique<Memo>()) {}
CriusPolicy::~CriusPolicy() = default;

std::vector<Target> CriusPolicy::schedule(const Context& ctx) { return Round(ctx, m_options, *m_memo).run(); }

std::optional<PlacedShape> CriusPolicy::arrive(const Context& ctx, std::size_t i, int waiting) {
  return Round(ctx, m_options, *m_memo).arrive(i, waiting);
}

}  // namespace crius::scheduler
