#include "scheduler/policies/crius.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

namespace crius::scheduler {

namespace {

struct Candidate {
  int partition;
  Cell shape;
  double score;  // normalised Cell-optimal speed
};

// The state of one round of the crius policy.
class Round {
 public:
  Round(const Context& ctx, const PolicyOptions& opt)
      : m_ctx(ctx), m_opt(opt), m_targets(keep_running(ctx)), m_free(taken(ctx, m_targets)),
        m_ref(ctx.jobs.size(), -1) {
    for (const Job* j : ctx.jobs) m_unplaced += j->state == JobState::pending;
  }

  std::vector<Target> run();
  std::optional<PlacedShape> arrive(size_t i, int waiting);

 private:
  const Job& job(size_t i) const { return *m_ctx.jobs[i]; }
  double speed(size_t i, const Cell& s) const { return decision_speed(m_ctx, job(i), s, false); }
  double ref(size_t i);
  double score(size_t i, const Allocation& a) {
    return a.empty() ? 0 : std::max(0.0, speed(i, a.shape)) / ref(i);
  }
  // Every memory-feasible Cell of at most max_gpus GPUs, best score first.
  std::vector<Candidate> candidates(size_t i, int max_gpus);
  std::vector<Candidate> raw_candidates(size_t i, int max_gpus) const;  // score = speed
  std::optional<Allocation> best_fit(const std::vector<Candidate>& cands) const;
  // The Cell the objective takes among `cands` that place now (throughput: best_fit), and the
  // one it takes where none places (the job's ideal). For job m_job, whose decision it is.
  std::optional<Allocation> pick_fit(const std::vector<Candidate>& cands) const;
  const Candidate& ideal(const std::vector<Candidate>& cands) const;
  // Another pending job than m_job waits for GPUs: not placed (yet) in this round.
  bool others_wait() const;
  std::optional<Allocation> place_on(size_t i, const std::string& gpu, int gpus) const {
    if (const int cap = m_ctx.max_gpus(job(i)); cap > 0 && gpus > cap) return std::nullopt;
    return place_best(m_ctx, m_free, job(i), gpu, gpus, false);
  }
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
  std::vector<Candidate> meeting(size_t i, const std::vector<Candidate>& cands) const;
  bool can_meet(size_t i) { return !meeting(i, candidates(i, m_ctx.total_gpus())).empty(); }
  bool fit_deadline(size_t i, bool& searched);
  void rescue_deadline(size_t i);
  bool fit(size_t i, bool& searched);
  bool search(size_t i, const std::vector<Candidate>& cands, double floor);
  bool preempt_for_head(size_t i, const std::vector<Candidate>& cands);
  void upgrade();
  // Every change of a target goes through here, which keeps m_unplaced.
  void set(size_t i, const Allocation& a, std::string reason) {
    if (job(i).state == JobState::pending) m_unplaced += int(a.empty()) - int(m_targets[i].alloc.empty());
    m_targets[i].alloc = a;
    m_targets[i].reason = std::move(reason);
  }

  const Context& m_ctx;
  const PolicyOptions& m_opt;
  std::vector<Target> m_targets;
  FreeMap m_free;
  std::vector<double> m_ref;
  int m_unplaced = 0;   // pending jobs without a target (yet)
  size_t m_job = 0;     // the job whose Cell is being chosen
  int m_waiting = -1;   // arrive: others waiting, as job_submit knows it (-1: m_unplaced's)
};

double Round::ref(size_t i) {
  if (m_ref[i] > 0) return m_ref[i];
  const Job& j = job(i);
  double r = -1;
  for (const PlacedShape& ps : shapes_for(m_ctx.cluster, j.req_gpu, j.req_gpus))
    r = std::max(r, speed(i, ps.shape));
  if (r <= 0) {  // the request itself cannot run: compare with its best small-enough Cell
    for (const Candidate& c : raw_candidates(i, j.req_gpus)) r = std::max(r, c.score);
  }
  if (r <= 0) r = 1;
  return m_ref[i] = r;
}

std::vector<Candidate> Round::candidates(size_t i, int max_gpus) {
  std::vector<Candidate> out = raw_candidates(i, max_gpus);
  double r = ref(i);
  for (Candidate& c : out) c.score /= r;
  return out;
}

std::vector<Candidate> Round::raw_candidates(size_t i, int max_gpus) const {
  if (const int cap = m_ctx.max_gpus(job(i)); cap > 0) max_gpus = std::min(max_gpus, cap);
  std::vector<Candidate> out;
  for (const std::string& gpu : m_ctx.gpu_types())
    for (int c : counts_for(m_ctx.total_gpus(gpu))) {
      if (c > max_gpus) break;
      for (const PlacedShape& ps : shapes_for(m_ctx.cluster, gpu, c)) {
        if (!m_ctx.allowed(job(i), ps.partition, ps.shape)) continue;
        double s = speed(i, ps.shape);
        if (s > 0) out.push_back(Candidate{ps.partition, ps.shape, s});
      }
    }
  // Best score first; among equals fewer GPUs, then fewer nodes.
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.shape.gpus() != b.shape.gpus()) return a.shape.gpus() < b.shape.gpus();
    return a.shape.nodes < b.shape.nodes;
  });
  return out;
}

std::optional<Allocation> Round::best_fit(const std::vector<Candidate>& cands) const {
  for (const Candidate& c : cands)
    if (auto a = m_free.place(c.partition, c.shape)) return a;
  return std::nullopt;
}

bool Round::others_wait() const {
  if (m_waiting >= 0) return m_waiting > 0;
  const bool self = job(m_job).state == JobState::pending && m_targets[m_job].alloc.empty();
  return m_unplaced - int(self) > 0;
}

std::optional<Allocation> Round::pick_fit(const std::vector<Candidate>& cands) const {
  if (m_opt.objective == Objective::throughput) return best_fit(cands);
  std::vector<Allocation> placed;
  std::vector<CellOption> options;
  for (const Candidate& c : cands)
    if (auto a = m_free.place(c.partition, c.shape)) {
      placed.push_back(std::move(*a));
      options.push_back({c.score, c.shape.gpus()});
    }
  if (auto k = choose_cell(options, m_opt.objective, others_wait())) return placed[*k];
  return std::nullopt;
}

// Where nothing places, the job waits: adaptive waits in its most efficient Cell.
const Candidate& Round::ideal(const std::vector<Candidate>& cands) const {
  std::vector<CellOption> options;
  for (const Candidate& c : cands) options.push_back({c.score, c.shape.gpus()});
  return cands[choose_cell(options, m_opt.objective, true).value_or(0)];
}

bool Round::finishes_by_deadline(size_t i, const Cell& s, bool restart) const {
  const double sp = speed(i, s);
  if (sp <= 0) return false;
  const double run = job(i).remaining() * job(i).global_batch / sp;
  return m_ctx.now + (restart ? restart_cost(m_opt, true, s.gpus()) : 0) + run <= job(i).deadline;
}

std::vector<Candidate> Round::meeting(size_t i, const std::vector<Candidate>& cands) const {
  std::vector<Candidate> out;
  for (const Candidate& c : cands)
    if (finishes_by_deadline(i, c.shape, restarts(i))) out.push_back(c);
  std::stable_sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    if (a.shape.gpus() != b.shape.gpus()) return a.shape.gpus() < b.shape.gpus();
    return a.score > b.score;
  });
  return out;
}

// A pending job with a deadline: the fewest GPUs that meet it and place now, else (once per
// round's search budget) a change of one running job that makes room for such a Cell.
bool Round::fit_deadline(size_t i, bool& searched) {
  std::vector<Candidate> meet = meeting(i, candidates(i, m_ctx.total_gpus()));
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
  std::optional<Allocation> a = best_fit(meeting(i, candidates(i, m_ctx.total_gpus())));
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
bool Round::search(size_t i, const std::vector<Candidate>& cands, double floor) {
  std::vector<size_t> running;
  for (size_t k = 0; k < m_targets.size(); ++k)
    if (k != i && !m_targets[k].alloc.empty()) running.push_back(k);
  std::stable_sort(running.begin(), running.end(), [&](size_t a, size_t b) {
    return m_targets[a].alloc.shape.gpus() > m_targets[b].alloc.shape.gpus();
  });
  if (running.size() > static_cast<size_t>(CriusPolicy::kSearchJobs))
    running.resize(CriusPolicy::kSearchJobs);

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
    if (old.shape.gpus() >= 2)
      if (auto a = place_on(k, old.shape.gpu, old.shape.gpus() / 2))
        consider(k, old, *a, false, "shrink");
    for (const std::string& gpu : m_ctx.gpu_types())
      if (gpu != old.shape.gpu)
        if (auto a = place_on(k, gpu, old.shape.gpus())) consider(k, old, *a, false, "change type");
    // Migrate on the same type: the new job takes its best fit first.
    if (auto mine = pick_fit(cands)) {
      m_free.take(*mine);
      auto a = place_on(k, old.shape.gpu, old.shape.gpus());
      m_free.give(*mine);
      if (a && !(*a == old)) consider(k, old, *a, true, "migrate");
    }
    m_free.take(old);
  }
  if (!best_other) return false;
  auto [k, moved] = *best_other;
  m_free.give(m_targets[k].alloc);
  m_free.take(moved);
  set(k, moved, best_why + " to make room for job " + job(i).name);
  m_free.take(*best_mine);
  set(i, *best_mine, "fit after " + best_why + " of job " + job(k).name);
  return true;
}

// The blocked queue head takes GPUs back from opportunistic jobs, latest first.
bool Round::preempt_for_head(size_t i, const std::vector<Candidate>& cands) {
  std::vector<size_t> opp;
  for (size_t k = 0; k < m_targets.size(); ++k)
    if (!m_targets[k].alloc.empty() && m_targets[k].opportunistic) opp.push_back(k);
  std::stable_sort(opp.begin(), opp.end(), [&](size_t a, size_t b) {
    return job(a).first_start > job(b).first_start;
  });
  std::vector<size_t> released;
  for (size_t k : opp) {
    m_free.give(m_targets[k].alloc);
    released.push_back(k);
    if (auto a = pick_fit(cands)) {
      // Enough once it reaches most of the speed it asked for.
      if (score(i, *a) < CriusPolicy::kWellFit * std::min(ideal(cands).score, 1.0)) continue;
      // Give back what was not needed.
      m_free.take(*a);
      std::vector<size_t> victims;
      for (size_t r : released) {
        if (m_free.fits(m_targets[r].alloc)) m_free.take(m_targets[r].alloc);
        else victims.push_back(r);
      }
      for (size_t r : victims) {
        set(r, Allocation{}, "preempted by the blocked queue head " + job(i).name);
        m_targets[r].opportunistic = false;
      }
      set(i, *a, "queue head: preempted opportunistic jobs");
      return true;
    }
  }
  for (size_t r : released) m_free.take(m_targets[r].alloc);
  return false;
}

bool Round::fit(size_t i, bool& searched) {
  m_job = i;
  if (has_deadline(i) && fit_deadline(i, searched)) return true;
  std::vector<Candidate> cands = candidates(i, CriusPolicy::kMaxScale * std::max(1, job(i).req_gpus));
  if (cands.empty()) cands = candidates(i, m_ctx.total_gpus());
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
  if (!searched) {
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
  auto offer = [&](size_t i) {
    const Allocation& old = m_targets[i].alloc;
    if (old.empty()) return;
    const Job& j = job(i);
    const double s_old = speed(i, old.shape);
    if (s_old <= 0) return;
    const double left_old = j.remaining() * j.global_batch / s_old;
    const int cap = m_ctx.max_gpus(j);
    for (int t = 0; t < static_cast<int>(types.size()); ++t)
      for (int doubled : {0, 1}) {
        const int c = doubled ? 2 * old.shape.gpus() : old.shape.gpus();
        if ((types[t] == old.shape.gpu && !doubled) || (cap > 0 && c > cap)) continue;
        double s_max = 0;
        for (const PlacedShape& ps : shapes_for(m_ctx.cluster, types[t], c))
          if (m_ctx.allowed(j, ps.partition, ps.shape)) s_max = std::max(s_max, speed(i, ps.shape));
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
    const double s_old = speed(o.i, old.shape);
    const std::string& gpu = types[o.type];
    const int c = o.doubled ? 2 * old.shape.gpus() : old.shape.gpus();
    const bool same_type = gpu == old.shape.gpu;  // its own GPUs count as free
    double gain = 0;
    if (c <= m_free.free_gpus(gpu) + (same_type ? old.shape.gpus() : 0)) {
      if (same_type) m_free.give(old);
      if (auto a = place_on(o.i, gpu, c)) {
        const double s_new = speed(o.i, a->shape);
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
    bool searched = searches >= CriusPolicy::kSearchFits;
    bool was_searched = searched;
    bool placed = fit(i, searched);
    if (searched && !was_searched) ++searches;
    if (!placed && !blocked) {
      std::vector<Candidate> cands =
          candidates(i, CriusPolicy::kMaxScale * std::max(1, job(i).req_gpus));
      if (!cands.empty()) placed = preempt_for_head(i, cands);
    }
    if (placed && blocked) m_targets[i].opportunistic = true;
    if (!placed) blocked = true;
  }
  if (!blocked) upgrade();
  return m_targets;
}

// The fit step of a round for one new job, without the search (job_submit moves no one): the
// Cell the objective takes among those that place now, else its ideal Cell, which waits.
std::optional<PlacedShape> Round::arrive(size_t i, int waiting) {
  m_job = i;
  m_waiting = waiting;
  std::vector<Candidate> cands = candidates(i, CriusPolicy::kMaxScale * std::max(1, job(i).req_gpus));
  if (cands.empty()) cands = candidates(i, m_ctx.total_gpus());
  if (cands.empty()) return std::nullopt;
  if (auto a = pick_fit(cands)) return PlacedShape{a->partition, a->shape};
  const Candidate& c = ideal(cands);
  return PlacedShape{c.partition, c.shape};
}

}  // namespace

std::vector<Target> CriusPolicy::schedule(const Context& ctx) { return Round(ctx, m_options).run(); }

std::optional<PlacedShape> CriusPolicy::arrive(const Context& ctx, std::size_t i, int waiting) {
  return Round(ctx, m_options).arrive(i, waiting);
}

}  // namespace crius::scheduler
