#include "scheduler/policies/crius.h"

#include <algorithm>
#include <cmath>
#include <numeric>

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
  bool can_meet(size_t i) { return !meeting(i, candidates(i, m_ctx.cluster.total_gpus())).empty(); }
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
  for (const std::string& gpu : m_ctx.cluster.gpu_types())
    for (int c : counts_for(m_ctx.cluster, gpu)) {
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
  std::vector<Candidate> meet = meeting(i, candidates(i, m_ctx.cluster.total_gpus()));
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
  std::optional<Allocation> a = best_fit(meeting(i, candidates(i, m_ctx.cluster.total_gpus())));
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
    for (const std::string& gpu : m_ctx.cluster.gpu_types())
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
  if (cands.empty()) cands = candidates(i, m_ctx.cluster.total_gpus());
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

void Round::upgrade() {
  const std::vector<std::string> types = m_ctx.cluster.gpu_types();
  for (size_t iter = 0; iter < 4 * m_targets.size(); ++iter) {
    double best_gain = 0;
    size_t best_i = 0;
    std::optional<Allocation> best_alloc;
    for (size_t i = 0; i < m_targets.size(); ++i) {
      const Allocation old = m_targets[i].alloc;
      if (old.empty()) continue;
      const Job& j = job(i);
      double s_old = speed(i, old.shape);
      if (s_old <= 0) continue;
      double left_old = j.remaining() * j.global_batch / s_old;
      m_free.give(old);
      for (const std::string& gpu : types) {
        for (int c : {old.shape.gpus(), 2 * old.shape.gpus()}) {
          if (gpu == old.shape.gpu && c == old.shape.gpus()) continue;
          if (c > m_free.free_gpus(gpu)) continue;
          auto a = place_on(i, gpu, c);
          if (!a) continue;
          double s_new = speed(i, a->shape);
          if (s_new < (c > old.shape.gpus() ? CriusPolicy::kDoubleGain : 1.05) * s_old) continue;
          const double cost = restart_s(*a);
          double restart = j.state == JobState::running ? cost : 0;
          double saved = left_old - (restart + j.remaining() * j.global_batch / s_new);
          if (saved <= 2 * cost) continue;  // does not pay
          double added = std::max(1, c - old.shape.gpus());
          double gain = (s_new - s_old) / s_old / added;
          if (gain > best_gain) { best_gain = gain; best_i = i; best_alloc = a; }
        }
      }
      m_free.take(old);
    }
    if (!best_alloc) return;
    m_free.give(m_targets[best_i].alloc);
    m_free.take(*best_alloc);
    set(best_i, *best_alloc, "upgrade: " + std::to_string(best_alloc->shape.gpus()) + " " +
                                 best_alloc->shape.gpu);
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
  if (cands.empty()) cands = candidates(i, m_ctx.cluster.total_gpus());
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
