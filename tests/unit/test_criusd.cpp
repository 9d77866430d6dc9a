// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// criusd without Slurm: the job record job_submit_crius writes, and one round of the
// controller on small snapshots (the real-Slurm flow is tests/slurm/criusd_move.sh).
#define BOOST_TEST_MODULE criusd
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>
#include <string>

#include "common/util.h"
#include "job/progress.h"
#include "scheduler/estimator_throughput.h"
#include "slurm_plugin/apply_cell.h"
#include "slurm_plugin/criusd/controller.h"
#include "slurm_plugin/criusd/failover.h"
#include "slurm_plugin/criusd/description.h"
#include "slurm_plugin/criusd/limits.h"
#include "slurm_plugin/criusd/metrics.h"

#include <regex>
#include <sstream>

using namespace crius;
using namespace crius::slurm;

namespace {

job::MoveLog started_at(std::int64_t t) {
  job::MoveLog m;
  m.started = t;
  return m;
}

// The message of a Result, or "" (a Boost.Test message is evaluated even on success).
template <typename R>
std::string why(const R& r) {
  return r.ok() ? std::string() : r.error();
}

std::string top() {
  const char* t = std::getenv("TOP");
  return t ? t : ".";
}

// The record job_submit writes for bert__1.3B, global batch 256, in Cell `cell` (a one-stage
// data-parallel plan over its GPUs; criusd re-plans on a move).
job::Record make_record(const std::string& cell, const std::string& partition) {
  job::Record r;
  r.request.model = "bert__1.3B";
  r.request.global_batch = 256;
  auto c = estimator::parse_cell(cell);
  BOOST_REQUIRE_MESSAGE(c.ok(), why(c));
  r.cell = *c;
  r.cell.partition = partition;
  r.plan.stages = {{0, 24, r.cell.gpus(), 1}};
  r.plan.micro_batches = 256 / r.cell.gpus();
  r.iter_time_s = 2.0;
  return r;
}

std::string record(const std::string& cell, const std::string& partition) {
  return job::to_text(make_record(cell, partition));
}

SlurmNode node(const std::string& name, const std::string& gpu, int used) {
  return SlurmNode{name, {gpu}, gpu, 8, used, true, {}};
}

SlurmJob slurm_job(std::uint32_t id, const std::string& state, const std::string& comment,
             std::vector<std::string> nodes = {}, const std::string& tres = "gres:gpu:8") {
  SlurmJob j;
  j.id = id;
  j.state = state;
  j.partition = "a100";
  j.tres_per_node = tres;
  j.admin_comment = comment;
  j.nodes = std::move(nodes);
  j.num_nodes = 1;
  j.submit_time = 1000 + id;
  return j;
}

// Job 7 runs in v100:1x8:1 on v100-1; criusd signalled it at 100 to move it to a100:1x8:1
// (target nodes `to_nodes`).
job::Record moving_record(std::vector<std::string> to_nodes) {
  job::Record rec = make_record("v100:1x8:1", "v100");
  rec.move = job::Move{{"a100", "a100", 1, 8, 1}, "signalled", 100, "upgrade", std::move(to_nodes)};
  rec.log_move_start(rec.cell, rec.move->target, "upgrade", 100);
  return rec;
}
Snapshot moving_snapshot(const job::Record& rec) {
  Snapshot s;
  s.nodes = {node("a100-1", "a100", 0), node("a100-2", "a100", 0), node("v100-1", "v100", 8),
             node("v100-2", "v100", 0)};
  SlurmJob j = slurm_job(7, "RUNNING", job::to_text(rec), {"v100-1"});
  j.partition = "v100";
  s.jobs = {j};
  return s;
}

// Slurm's view of a job right after criusd's requeue: pending, held by that requeue.
void as_requeued_held(SlurmJob& j, std::int64_t end_time) {
  j.state = "PENDING";
  j.nodes.clear();
  j.priority = 0;
  j.reason = "JobHeldUser";
  j.requeued_held = true;
  j.end_time = end_time;
}

struct Fixture {
  Fixture() {
    auto c = estimator::load_cluster(top() + "/etc/crius/crius.toml");
    BOOST_TEST_REQUIRE(c.ok(), why(c));
    cluster = std::make_unique<estimator::Cluster>(std::move(*c));
  }
  std::unique_ptr<estimator::Cluster> cluster;
};

}  // namespace

BOOST_AUTO_TEST_CASE(record_round_trip) {
  auto r = job::parse_record(record("a100:1x8:2", "a100"));
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST_REQUIRE(r->ok(), why(*r));
  const job::Record& rec = r->value();
  BOOST_TEST(rec.request.model == "bert__1.3B");
  BOOST_TEST(rec.request.global_batch == 256);
  BOOST_TEST(!rec.pinned());
  BOOST_TEST((rec.cell == estimator::Cell{"a100", "a100", 1, 8, 2}));
  BOOST_TEST((rec == make_record("a100:1x8:2", "a100")));

  job::Record moved = rec;
  moved.request.runtime = estimator::Runtime::alpa;
  moved.move = job::Move{{"v100", "v100", 1, 4, 1}, "signalled", 42, "fit", {}};
  moved.saved_under = job::Record::Saved{{"v100", "v100", 1, 8, 1}, rec.plan};
  auto back = job::parse_record(job::to_text(moved));
  BOOST_TEST_REQUIRE((back && back->ok()));
  BOOST_TEST_REQUIRE(back->value().move.has_value());
  BOOST_TEST((back->value().move->target == estimator::Cell{"v100", "v100", 1, 4, 1}));
  BOOST_TEST(back->value().move->phase == "signalled");
  BOOST_TEST(back->value().move->since == 42);
  // Every field survives a rewrite: the record has one codec.
  BOOST_TEST((back->value() == moved));
  // slurmctld (job_modify) knows a record by its first bytes.
  BOOST_TEST(job::looks_like_record(job::to_text(moved)));
  BOOST_TEST(job::looks_like_record(record("a100:1x8:2", "a100")));
  BOOST_TEST(!job::looks_like_record(R"({"other":1,"crius":2})"));
  BOOST_TEST(!job::looks_like_record("crius"));
  BOOST_TEST(job::to_text(moved).find("\"runtime\":\"alpa\"") != std::string::npos);

  // AdminComment shared with other tools: the record is its own line; theirs stay byte for byte.
  const std::string text = job::to_text(moved);
  BOOST_TEST(text.find('\n') == std::string::npos);
  BOOST_TEST(job::with_record("", text) == text);
  const std::string shared = job::with_record("JS1:H4sIAAAA==", text);
  BOOST_TEST(shared == "JS1:H4sIAAAA==\n" + text);
  BOOST_TEST(job::looks_like_record(shared));
  auto from_shared = job::parse_record(shared);
  BOOST_TEST_REQUIRE((from_shared && from_shared->ok()));
  BOOST_TEST((from_shared->value() == moved));
  const std::string renewed = job::with_record("site: a\n" + text + "\nsite: b", job::to_text(rec));
  BOOST_TEST(renewed == "site: a\nsite: b\n" + job::to_text(rec));
  BOOST_TEST(job::with_record(renewed, "") == "site: a\nsite: b");
  BOOST_TEST(job::with_record(text + "\n" + text, text) == text);  // one record line, always
  BOOST_TEST(!job::looks_like_record("site: a\n x{\"crius\":1}"));
  BOOST_TEST(!job::parse_record("JS1:H4sIAAAA==").has_value());

  // The history of moves: kept, the last 16, with the user's text made printable and bounded.
  job::Record history = rec;
  for (int k = 0; k < 20; ++k) {
    history.log_move_start(rec.cell, estimator::Cell{"v100", "v100", 2, 4, 1}, "upgrade\n" + std::string(400, 'x'), 1000 + k);
    history.log_move_end(k % 2 ? "moved" : "kept: no feasible plan", 1100 + k);
  }
  BOOST_TEST_REQUIRE(history.history.size() == job::kMaxHistory);
  BOOST_TEST(history.history.front().started == 1004);
  BOOST_TEST(history.history.back().outcome == "moved");
  BOOST_TEST(history.history.back().reason.size() <= job::kMaxHistoryText);
  BOOST_TEST(history.history.back().reason.find('\n') == std::string::npos);
  auto h = job::parse_record(job::to_text(history));
  BOOST_TEST_REQUIRE((h && h->ok()), (h && !h->ok() ? h->error() : std::string()));
  BOOST_TEST((h->value().history == history.history));
  history.log_move_end("moved again", 2000);  // the last move has its outcome: unchanged
  BOOST_TEST(history.history.back().ended == 1119);
  // A version 2 record (start times only, in moved_at) still reads; its moves count.
  std::string v2 = job::to_text(rec);
  v2.replace(v2.find("\"crius\":3"), 9, "\"crius\":2");
  v2.insert(v2.size() - 1, ",\"moved_at\":[4500,4600]");
  auto old = job::parse_record(v2);
  BOOST_TEST_REQUIRE((old && old->ok()), (old && !old->ok() ? old->error() : std::string()));
  BOOST_TEST_REQUIRE(old->value().history.size() == 2u);
  BOOST_TEST(old->value().history[1].started == 4600);
  BOOST_TEST(crius::estimator::to_string(old->value().history[1].to) == "auto");
}

BOOST_AUTO_TEST_CASE(records_that_are_not_crius_or_broken) {
  BOOST_TEST(!job::parse_record("").has_value());
  BOOST_TEST(!job::parse_record("user comment").has_value());
  BOOST_TEST(!job::parse_record(R"({"other":1})").has_value());
  std::string good = record("a100:1x8:1", "a100");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    auto at = t.find(from);
    BOOST_REQUIRE_MESSAGE(at != std::string::npos, from);
    return t.replace(at, from.size(), to);
  };
  for (const std::string& bad :
       {std::string(R"({"crius":2})"), std::string(R"({"crius":1,"request":{}})"), with("\"nodes\":1", "\"nodes\":-1"),
        with("\"runtime\":\"megatron\"", "\"runtime\":7"), with("\"global_batch\":256", "\"global_batch\":\"x\""),
        with("\"version\":1", "\"version\":9"), with("\"by\":\"job_submit\"", "\"by\":\"someone\""),
        with("\"crius\":3", "\"crius\":4"),
        with("\"by\":", "\"moved_at\":[1],\"by\":"),  // version 2's key in a version 3 record
        with("\"by\":", "\"history\":[{\"from\":\"a100\",\"to\":\"v100:0x4\"}],\"by\":"),
        with("\"by\":", "\"history\":[{\"reason\":\"" + std::string(300, 'x') + "\"}],\"by\":"),
        with("\"by\":", "\"history\":[{\"started\":-1}],\"by\":")}) {
    auto r = job::parse_record(bad);
    BOOST_TEST_REQUIRE(r.has_value(), bad);
    BOOST_TEST(!r->ok(), bad);
  }
  job::Record pinned = make_record("v100:1x8:1", "v100");
  pinned.request.partitions = {"v100"};
  auto p = job::parse_record(job::to_text(pinned));
  BOOST_TEST_REQUIRE((p && p->ok()));
  BOOST_TEST(p->value().pinned());
}

BOOST_FIXTURE_TEST_CASE(pending_job_moves_to_the_idle_type, Fixture) {
  // a100 is full with a job criusd does not know; v100 is idle.
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}),
            slurm_job(3, "PENDING", record("a100:1x8:1", "a100"))};
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  const Action& a = round->actions[0];
  BOOST_TEST(a.job == 3u);
  BOOST_TEST(to_string(a.kind) == std::string("update_pending"));
  BOOST_TEST(a.to.gpu == "v100");
  BOOST_TEST(a.to.partition == "v100");
  BOOST_TEST(a.before.empty());
  auto rec = job::parse_record(a.after);
  BOOST_TEST_REQUIRE((rec && rec->ok()));
  BOOST_TEST(rec->value().cell.partition == "v100");
  // The record carries the plan of the new Cell, chosen by criusd.
  BOOST_TEST(rec->value().by == "criusd");
  BOOST_TEST(rec->value().plan.world_size() == a.to.gpus());
}

BOOST_FIXTURE_TEST_CASE(a_moved_job_is_pinned_where_the_policy_placed_it, Fixture) {
  // As above: the pending job moves to v100 and is pinned to the node the policy chose; the
  // round's free-GPU report counts that node taken.
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}),
            slurm_job(3, "PENDING", record("a100:1x8:1", "a100"))};
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  const Action& a = round->actions[0];
  BOOST_TEST_REQUIRE(a.nodes.has_value());
  const std::vector<std::string> pin = *a.nodes;
  BOOST_TEST(static_cast<int>(pin.size()) == a.to.nodes);
  for (const auto& n : pin) BOOST_TEST(n.rfind("v100-", 0) == 0);
  auto rec = job::parse_record(a.after);
  BOOST_TEST_REQUIRE((rec && rec->ok()));
  BOOST_TEST(rec->value().nodes == pin);
  BOOST_TEST(round->free.free_gpus("a100") == 0);
  BOOST_TEST(round->free.free_gpus("v100") == 16 - a.to.gpus());
  BOOST_TEST(round->free.waiting == 0);  // job 3 starts: nobody waits

  // Next round, the job still pending there: nothing to do. A user's own -w is left alone.
  s.jobs[2].admin_comment = a.after;
  s.jobs[2].partition = a.to.partition;
  s.jobs[2].tres_per_node = "gres:gpu:" + std::to_string(a.to.gpus_per_node);
  s.jobs[2].req_nodes = pin;
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  s.jobs[2].req_nodes = {"a100-1"};
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  BOOST_TEST(round->jobs.back().considered == "no: pinned to nodes by the user (-w)");
  // The same for a running job the user pinned: criusd never moves it.
  {
    job::Record movable = make_record("a100:1x8:1", "a100");
    movable.request.movable = true;
    Snapshot r = s;
    r.jobs = {slurm_job(1, "RUNNING", job::to_text(movable), {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"})};
    r.jobs[0].req_nodes = {"a100-1"};
    ControllerOptions o;
    o.min_runtime_s = 0;
    Controller c2(*cluster, o);
    auto rr = c2.decide(r);
    BOOST_TEST_REQUIRE(rr.ok(), why(rr));
    BOOST_TEST(rr->actions.empty());
    BOOST_TEST(rr->jobs.front().considered == "no: pinned to nodes by the user (-w)");
  }

  // Both v100 nodes are taken by jobs criusd does not know: the policy cannot start it, and
  // the pin is cleared so that Slurm may start it anywhere.
  s.jobs[2].req_nodes = pin;
  s.nodes[2].gpus_used = s.nodes[3].gpus_used = 8;
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  BOOST_TEST_REQUIRE(round->actions[0].nodes.has_value());
  BOOST_TEST(round->actions[0].nodes->empty());
  rec = job::parse_record(round->actions[0].after);
  BOOST_TEST_REQUIRE((rec && rec->ok()));
  BOOST_TEST(rec->value().nodes.empty());
}

BOOST_FIXTURE_TEST_CASE(the_report_counts_the_jobs_left_waiting_for_gpus, Fixture) {
  // Every GPU is busy. Waiting for GPUs of crius partitions: crius job 3 and plain job 4
  // (Resources), plain job 5 (Priority; one of its partitions is crius's). Not waiting for GPUs:
  // held crius job 6, plain job 7 of a partition crius does not manage, plain job 8 waiting for
  // a dependency. job_submit's adaptive objective grows a new job only when the count is 0.
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 8),
             node("v100-2", "v100", 8)};
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}),
            slurm_job(3, "PENDING", record("a100:1x8:1", "a100")), slurm_job(4, "PENDING", ""),
            slurm_job(5, "PENDING", ""), slurm_job(6, "PENDING", record("a100:1x8:1", "a100")),
            slurm_job(7, "PENDING", ""), slurm_job(8, "PENDING", "")};
  s.jobs[2].reason = s.jobs[3].reason = "Resources";
  s.jobs[4].reason = "Priority";
  s.jobs[4].partition = "cpu,v100";
  s.jobs[5].reason = "JobHeldUser";
  s.jobs[5].priority = 0;
  s.jobs[6].reason = "Resources";
  s.jobs[6].partition = "cpu";
  s.jobs[7].reason = "Dependency";
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->free.waiting == 3);
  BOOST_TEST(to_text(round->free).find("\nwaiting 3\n") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(jobs_without_record_pinned_or_broken_are_never_touched, Fixture) {
  job::Record pinned = make_record("a100:1x8:1", "a100");
  pinned.request.partitions = {"a100"};
  const std::string pinned_record = job::to_text(pinned);
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}),
            slurm_job(3, "PENDING", pinned_record),
            slurm_job(4, "PENDING", R"({"crius":2,"request":{}})"), slurm_job(5, "PENDING", "")};
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  BOOST_TEST(round->jobs.size() == 2u);  // 3 (pinned) and 4 (broken record) are reported
}

BOOST_FIXTURE_TEST_CASE(a_move_in_flight_continues_after_a_restart, Fixture) {
  job::Record rec = moving_record({});
  Snapshot s = moving_snapshot(rec);
  ControllerOptions o;
  o.checkpoint_grace_s = 30;
  Controller c(*cluster, o);

  s.now = 110;  // within the grace time: nothing yet
  auto r1 = c.decide(s);
  BOOST_TEST_REQUIRE(r1.ok(), why(r1));
  BOOST_TEST(r1->actions.empty());

  s.now = 131;  // grace over: requeue, recorded as such
  auto r2 = c.decide(s);
  BOOST_TEST_REQUIRE(r2.ok(), why(r2));
  BOOST_TEST_REQUIRE(r2->actions.size() == 1u);
  BOOST_TEST(to_string(r2->actions[0].kind) == std::string("requeue"));
  // Written before the requeue (a restart then requeues again) and after it.
  BOOST_TEST(job::parse_record(r2->actions[0].before)->value().move->phase == "requeuing");
  BOOST_TEST(job::parse_record(r2->actions[0].after)->value().move->phase == "requeued");
  // Were the requeue to fail for good, the record says the move was abandoned and where it stays.
  const job::MoveLog abandoned = job::parse_record(r2->actions[0].abandon)->value().history.back();
  BOOST_TEST(abandoned.outcome == "abandoned: a step of the move failed; the job stays in v100:1x8:1");
  BOOST_TEST(abandoned.ended == 131);

  // criusd died between its two writes: the next round requeues again, whatever the time.
  s.jobs[0].admin_comment = r2->actions[0].before;
  s.now = 132;
  auto again = c.decide(s);
  BOOST_TEST_REQUIRE(again.ok(), why(again));
  BOOST_TEST_REQUIRE(again->actions.size() == 1u);
  BOOST_TEST(to_string(again->actions[0].kind) == std::string("requeue"));

  // Requeued, held and pending: the target Cell is applied once and the move cleared.
  as_requeued_held(s.jobs[0], 131);
  s.jobs[0].admin_comment = r2->actions[0].after;
  {  // an admin held it since: the new Cell, and the admin's hold stays
    SlurmJob held = s.jobs[0];
    held.reason = "JobHeldAdmin";
    held.requeued_held = false;
    Snapshot h = s;
    h.jobs = {held};
    auto rh = c.decide(h);
    BOOST_TEST_REQUIRE(rh.ok(), why(rh));
    BOOST_TEST_REQUIRE(rh->actions.size() == 1u);
    BOOST_TEST(to_string(rh->actions[0].kind) == std::string("finish_move"));
    BOOST_TEST(!rh->actions[0].release);
  }
  auto r3 = c.decide(s);
  BOOST_TEST_REQUIRE(r3.ok(), why(r3));
  BOOST_TEST_REQUIRE(r3->actions.size() == 1u);
  BOOST_TEST(to_string(r3->actions[0].kind) == std::string("finish_move"));
  BOOST_TEST(r3->actions[0].release);  // the hold of criusd's requeue is lifted
  BOOST_TEST(r3->actions[0].to.gpu == "a100");
  auto done = job::parse_record(r3->actions[0].after)->value();
  BOOST_TEST(!done.move.has_value());
  BOOST_TEST(done.cell.gpu == "a100");
  BOOST_TEST(done.plan.world_size() == done.cell.gpus());
  // The history keeps the move: from, to, why, when, and how it ended.
  BOOST_TEST_REQUIRE(done.history.size() == 1u);
  const job::MoveLog& log = done.history[0];
  BOOST_TEST(crius::estimator::to_string(log.from) == "v100:1x8:1");
  BOOST_TEST(crius::estimator::to_string(log.to) == "a100:1x8:1");
  BOOST_TEST(log.reason == "upgrade");
  BOOST_TEST(log.started == 100);
  BOOST_TEST(log.ended == 132);
  BOOST_TEST(log.outcome == "moved");
  // What its checkpoint was saved under: the Cell and plan it ran before the move (CRIUS_PREV_*).
  BOOST_TEST_REQUIRE(done.saved_under.has_value());
  BOOST_TEST(crius::estimator::to_string(done.saved_under->cell) == "v100:1x8:1");
  BOOST_TEST(done.saved_under->plan.world_size() == 8);
  BOOST_TEST(!(done.saved_under->plan == done.plan));
  // Released in its old Cell by someone else before the new one was applied: the move is dropped.
  SlurmJob back = s.jobs[0];
  back.state = "RUNNING";
  back.nodes = {"v100-1"};
  back.requeued_held = false;
  back.reason.clear();
  Snapshot restarted = s;
  restarted.jobs = {back};
  auto r4 = c.decide(restarted);
  BOOST_TEST_REQUIRE(r4.ok(), why(r4));
  BOOST_TEST_REQUIRE(!r4->actions.empty());
  const auto dropped = job::parse_record(r4->actions[0].after)->value();
  BOOST_TEST(!dropped.move.has_value());
  BOOST_TEST(dropped.history.back().outcome == "dropped: restarted in v100:1x8:1 after its requeue");
}

BOOST_FIXTURE_TEST_CASE(an_overdue_move_is_rolled_back_not_finished, Fixture) {
  job::Record rec = moving_record({"a100-1"});
  Snapshot s = moving_snapshot(rec);
  ControllerOptions o;
  o.checkpoint_grace_s = 30;
  o.move_resume_limit_s = 600;
  Controller c(*cluster, o);
  auto one = [&](double now) {
    s.now = static_cast<std::time_t>(now);
    auto r = c.decide(s);
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    BOOST_TEST_REQUIRE(r->actions.size() == 1u);
    return r->actions[0];
  };
  // Signalled at 100: the requeue is due at 130; up to 600 s later it still happens.
  BOOST_TEST(to_string(one(730).kind) == std::string("requeue"));
  // Later, the checkpoint is stale: the record alone changes, the job runs on where it is.
  Action late = one(731);
  BOOST_TEST(to_string(late.kind) == std::string("update_pending"));
  BOOST_TEST((late.to == late.from));
  BOOST_TEST(!late.nodes.has_value());
  auto kept = job::parse_record(late.after)->value();
  BOOST_TEST(!kept.move.has_value());
  BOOST_TEST(kept.cell.gpu == "v100");
  BOOST_TEST(kept.history.back().outcome.rfind("rolled back: criusd did not continue the move within 600 s", 0) == 0,
             kept.history.back().outcome);
  BOOST_TEST(kept.history.back().ended == 731);
  BOOST_TEST(late.abandon.size() > 0);

  // Requeued and held at 131, criusd gone until 732: its old Cell, the pin to the target's
  // nodes cleared, criusd's hold released.
  job::Record requeued = rec;
  requeued.move->phase = "requeued";
  requeued.move->since = 131;
  as_requeued_held(s.jobs[0], 131);
  s.jobs[0].admin_comment = job::to_text(requeued);
  BOOST_TEST(one(731).to.gpu == "a100");  // in time: finished as decided
  Action back = one(732);
  BOOST_TEST(to_string(back.kind) == std::string("finish_move"));
  BOOST_TEST(back.to.gpu == "v100");
  BOOST_TEST(back.release);
  BOOST_TEST_REQUIRE(back.nodes.has_value());
  BOOST_TEST(back.nodes->empty());
  auto old = job::parse_record(back.after)->value();
  BOOST_TEST(!old.move.has_value());
  BOOST_TEST(old.cell.gpu == "v100");
  BOOST_TEST(old.nodes.empty());
  BOOST_TEST(old.history.back().outcome.rfind("rolled back:", 0) == 0);
}

BOOST_FIXTURE_TEST_CASE(a_jobs_own_checkpoint_grace_times_its_requeue, Fixture) {
  job::Record rec = moving_record({});
  rec.request.checkpoint_grace_s = 120;
  Snapshot s = moving_snapshot(rec);
  ControllerOptions o;
  o.checkpoint_grace_s = 30;
  Controller c(*cluster, o);
  auto kinds = [&](std::time_t now) {
    s.now = now;
    auto r = c.decide(s, true);
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    return r->actions.empty() ? std::string("none") : std::string(to_string(r->actions[0].kind));
  };
  BOOST_TEST(kinds(131) == "none");  // the site's 30 s are not the job's 120
  BOOST_TEST(kinds(219) == "none");
  BOOST_TEST(kinds(220) == "requeue");
  // More than the site allows is cut to max_checkpoint_grace_s.
  rec.request.checkpoint_grace_s = 5000;
  s.jobs[0].admin_comment = job::to_text(rec);
  ControllerOptions capped = o;
  capped.max_checkpoint_grace_s = 600;
  capped.move_resume_limit_s = 900;
  BOOST_TEST(checkpoint_grace(rec, capped) == 600);
  Controller c2(*cluster, capped);
  s.now = 699;
  BOOST_TEST(c2.decide(s, true)->actions.empty());
  s.now = 700;
  BOOST_TEST(to_string(c2.decide(s, true)->actions.at(0).kind) == std::string("requeue"));
  job::Record plain = rec;
  plain.request.checkpoint_grace_s.reset();
  BOOST_TEST(checkpoint_grace(plain, capped) == 30);
}

BOOST_AUTO_TEST_CASE(criusd_acts_only_beside_the_controller_in_control) {
  const std::string beat0("\0\0\0\0\x6b\x13\xcc\x98\0\0\0\0\0\0\0\0", 16);
  auto hb = parse_heartbeat(beat0);
  BOOST_TEST_REQUIRE(hb.has_value());
  BOOST_TEST(hb->time == 0x6b13cc98);
  BOOST_TEST(hb->controller == 0);
  std::string beat1 = beat0;
  beat1[15] = 1;
  BOOST_TEST(parse_heartbeat(beat1)->controller == 1);
  BOOST_TEST(!parse_heartbeat(beat0.substr(0, 15)).has_value());

  const std::vector<std::string> two = {"ctl1", "ctl2"};
  BOOST_TEST(controller_index(two, "ctl2", "ctl2.example.org") == 1);
  BOOST_TEST(controller_index({"ctl1", "ctl2.example.org"}, "ctl2", "ctl2.example.org") == 1);
  BOOST_TEST(controller_index(two, "login1", "login1.example.org") == -1);

  const std::time_t now = 0x6b13cc98 + 5;
  BOOST_TEST(controller_role({"ctl1"}, -1, std::nullopt, "", false, now, 120).act);  // one controller
  BOOST_TEST(controller_role(two, 0, hb, "", true, now, 120).act);
  Role standby = controller_role(two, 1, hb, "", true, now, 120);
  BOOST_TEST(!standby.act);
  BOOST_TEST(standby.why == "slurmctld on ctl1 is in control, not the one on ctl2");
  BOOST_TEST(controller_role(two, 1, parse_heartbeat(beat1), "", true, now, 120).act);  // took over
  BOOST_TEST(!controller_role(two, 0, hb, "", false, now, 120).act);  // its slurmctld is gone
  BOOST_TEST(!controller_role(two, 0, hb, "", true, now + 200, 120).act);  // stale heartbeat
  Role elsewhere = controller_role(two, -1, hb, "", true, now, 120);
  BOOST_TEST(!elsewhere.act);
  BOOST_TEST(elsewhere.why.find("this host is none of them") != std::string::npos);
  Role unreadable = controller_role(two, 0, std::nullopt, "/var/spool/slurmctld/heartbeat: Permission denied", true, now, 120);
  BOOST_TEST(!unreadable.act);
  BOOST_TEST(unreadable.why.find("Permission denied") != std::string::npos);
}

BOOST_FIXTURE_TEST_CASE(bad_criusd_section_names_the_key, Fixture) {
  auto t = toml::parse("[criusd]\nintervall_s = 3\n");
  cluster->table = t;
  auto o = load_controller_options(*cluster);
  BOOST_TEST_REQUIRE(!o.ok());
  BOOST_TEST(o.error().find("intervall_s") != std::string::npos);
  cluster->table = toml::parse("[criusd]\ncheckpoint_signal = \"KILLME\"\n");
  BOOST_TEST(!load_controller_options(*cluster).ok());
  cluster->table = toml::parse("[criusd]\nmetrics_file = \"criusd.prom\"\n");
  auto relative = load_controller_options(*cluster);
  BOOST_TEST_REQUIRE(!relative.ok());
  BOOST_TEST(relative.error().find("[criusd] metrics_file must be an absolute path") != std::string::npos, relative.error());
  cluster->table = toml::parse("[criusd]\ninterval_s = 5\npolicy = \"gavel\"\nmetrics_file = \"/run/criusd/criusd.prom\"\n");
  auto good = load_controller_options(*cluster);
  BOOST_TEST_REQUIRE(good.ok(), why(good));
  BOOST_TEST(good->interval_s == 5);
  BOOST_TEST(good->policy == "gavel");
  BOOST_TEST(good->metrics_file == "/run/criusd/criusd.prom");
  BOOST_TEST((good->objective == scheduler::Objective::adaptive));
  cluster->table = toml::parse("[criusd]\nrate_window_s = 0\n");
  auto window = load_controller_options(*cluster);
  BOOST_TEST_REQUIRE(!window.ok());
  BOOST_TEST(window.error().find("[criusd] rate_window_s") != std::string::npos, window.error());
  // job_submit's objective is criusd's rule too.
  cluster->table = toml::parse("[job_submit]\nobjective = \"efficiency\"\n[criusd]\nrate_window_s = 120\n");
  auto shared = load_controller_options(*cluster);
  BOOST_TEST_REQUIRE(shared.ok(), why(shared));
  BOOST_TEST((shared->objective == scheduler::Objective::efficiency));
  BOOST_TEST(shared->rate_window_s == 120);
  // A resume limit within one interval would roll back moves nothing interrupted.
  cluster->table = toml::parse("[criusd]\ninterval_s = 600\nmove_resume_limit_s = 600\n");
  auto limit = load_controller_options(*cluster);
  BOOST_TEST_REQUIRE(!limit.ok());
  BOOST_TEST(limit.error().find("move_resume_limit_s (600 s) must exceed interval_s (600 s)") != std::string::npos, limit.error());
  cluster->table = toml::parse("[job_submit]\nobjective = \"quick\"\n");
  auto bad = load_controller_options(*cluster);
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.error().find("[job_submit] objective must be") != std::string::npos, bad.error());
}

BOOST_FIXTURE_TEST_CASE(running_job_grows_when_gpus_are_idle, Fixture) {
  // One job runs on 2 of the 16 A100s with many iterations left; everything else is idle.
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 2), node("a100-2", "a100", 0), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  job::Record long_job = make_record("a100:1x2:1", "a100");
  long_job.request.iters = 100000;
  long_job.request.movable = true;
  s.jobs = {slurm_job(9, "RUNNING", job::to_text(long_job), {"a100-1"}, "gres:gpu:2")};
  s.jobs[0].start_time = 4000;
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  const Action& a = round->actions[0];
  BOOST_TEST(a.job == 9u);
  BOOST_TEST(to_string(a.kind) == std::string("checkpoint"));
  BOOST_TEST(a.to.nodes * a.to.gpus_per_node > 2, "target " << a.to.gpus_per_node << " x " << a.to.nodes);
  // Recorded before the signal (a restart signals again) and after it, with the time of the move.
  auto before = job::parse_record(a.before);
  BOOST_TEST_REQUIRE((before && before->ok()));
  BOOST_TEST(before->value().move->phase == "signalling");
  auto rec = job::parse_record(a.after);
  BOOST_TEST_REQUIRE((rec && rec->ok()));
  BOOST_TEST_REQUIRE(rec->value().move.has_value());
  BOOST_TEST(rec->value().move->phase == "signalled");
  BOOST_TEST_REQUIRE(rec->value().history.size() == 1u);
  const job::MoveLog& log = rec->value().history[0];
  BOOST_TEST(log.started == 5000);
  BOOST_TEST(crius::estimator::to_string(log.from) == crius::estimator::to_string(before->value().cell));
  BOOST_TEST(log.to.gpu == a.to.gpu);
  BOOST_TEST(log.to.nodes * log.to.gpus_per_node == a.to.nodes * a.to.gpus_per_node);
  BOOST_TEST(!log.reason.empty());
  BOOST_TEST((log.outcome.empty() && log.ended == 0), "in flight");
  // A step that fails for good drops the move and keeps the job where it is.
  auto abandon = job::parse_record(a.abandon);
  BOOST_TEST_REQUIRE((abandon && abandon->ok()));
  BOOST_TEST(!abandon->value().move.has_value());
  BOOST_TEST((abandon->value().cell == long_job.cell));
}

// The same idle cluster, and running jobs criusd must leave where they are.
BOOST_FIXTURE_TEST_CASE(running_jobs_that_cannot_come_back_stay, Fixture) {
  job::Record long_job = make_record("a100:1x2:1", "a100");
  long_job.request.iters = 100000;
  long_job.request.movable = true;
  auto running = [&](const job::Record& r) {
    SlurmJob j = slurm_job(9, "RUNNING", job::to_text(r), {"a100-1"}, "gres:gpu:2");
    j.start_time = 4000;
    return j;
  };
  auto decide = [&](const SlurmJob& j, ControllerOptions o = {}) {
    Snapshot s;
    s.now = 5000;
    s.nodes = {node("a100-1", "a100", 2), node("a100-2", "a100", 0), node("v100-1", "v100", 0),
               node("v100-2", "v100", 0)};
    s.jobs = {j};
    Controller c(*cluster, o);
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    BOOST_TEST_REQUIRE(round->jobs.size() == 1u);
    return std::make_pair(round->actions.size(), round->jobs[0].considered);
  };
  BOOST_TEST(decide(running(long_job)).first == 1u);  // the control: this one moves

  job::Record not_opted = long_job;
  not_opted.request.movable = false;
  auto [n1, why1] = decide(running(not_opted));
  BOOST_TEST(n1 == 0u);
  BOOST_TEST(why1.find("--crius-movable") != std::string::npos, why1);

  SlurmJob interactive = running(long_job);
  interactive.batch = false;
  BOOST_TEST(decide(interactive).first == 0u);

  SlurmJob no_requeue = running(long_job);
  no_requeue.requeue = false;
  BOOST_TEST(decide(no_requeue).first == 0u);

  SlurmJob young = running(long_job);
  young.start_time = 4900;  // 100 s of 600
  BOOST_TEST(decide(young).first == 0u);

  job::Record failed = long_job;
  failed.unmovable = "requeue: Requested operation is presently disabled";
  BOOST_TEST(decide(running(failed)).first == 0u);

  job::Record moved = long_job;
  moved.history = {started_at(4500)};
  BOOST_TEST(decide(running(moved)).first == 0u);  // one move per hour
  moved.history = {started_at(1000)};
  BOOST_TEST(decide(running(moved)).first == 1u);  // more than an hour ago
  ControllerOptions short_hour;  // a time-compressed replay's "hour"
  short_hour.rate_window_s = 300;
  BOOST_TEST(decide(running(moved), short_hour).first == 1u);
  moved.history = {started_at(4800)};
  BOOST_TEST(decide(running(moved), short_hour).first == 0u);
  moved.history = {started_at(4600)};
  BOOST_TEST(decide(running(moved), short_hour).first == 1u);

  ControllerOptions per_user;  // the job's own limit lifted: its user's limit holds it
  per_user.max_moves_per_job_per_hour = 16;
  per_user.max_moves_per_user_per_hour = 1;
  moved.history = {started_at(4500)};
  auto [n3, why3] = decide(running(moved), per_user);
  BOOST_TEST(n3 == 0u);
  BOOST_TEST(why3.find("max_moves_per_user_per_hour") != std::string::npos, why3);

  ControllerOptions skip;
  skip.skip_users = {"alice"};
  SlurmJob alices = running(long_job);
  alices.user = "alice";
  auto [n2, why2] = decide(alices, skip);
  BOOST_TEST(n2 == 0u);
  BOOST_TEST(why2.find("skip list") != std::string::npos, why2);

  ControllerOptions none;
  none.max_moves_per_round = 0;
  BOOST_TEST(decide(running(long_job), none).first == 0u);
}

// Pending jobs Slurm would not start now are never moved, and the policy sees the others in
// Slurm's priority order.
BOOST_FIXTURE_TEST_CASE(only_jobs_slurm_could_start_in_priority_order, Fixture) {
  Snapshot s;
  s.now = 5000;
  // a100 full with jobs criusd does not know; 2 v100 GPUs free, enough for one of the jobs.
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 6),
             node("v100-2", "v100", 8)};
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}),
            slurm_job(3, "RUNNING", "", {"v100-2"})};
  s.jobs[2].partition = "v100";
  const std::string rec = record("a100:1x8:1", "a100");
  SlurmJob held = slurm_job(10, "PENDING", rec);
  held.priority = 0;
  held.reason = "JobHeldUser";
  SlurmJob dependent = slurm_job(11, "PENDING", rec);
  dependent.reason = "Dependency";
  SlurmJob later = slurm_job(12, "PENDING", rec);
  later.reason = "BeginTime";
  later.begin_time = 9000;
  SlurmJob low = slurm_job(13, "PENDING", rec);  // submitted first, lower priority
  low.priority = 100;
  SlurmJob high = slurm_job(14, "PENDING", rec);
  high.priority = 5000;
  s.jobs.insert(s.jobs.end(), {held, dependent, later, low, high});
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  for (const auto& a : round->actions) BOOST_TEST_MESSAGE(a.job << " -> " << estimator::describe(a.to));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  BOOST_TEST(round->actions[0].job == 14u);  // the higher priority gets the free v100 node
  BOOST_TEST(round->actions[0].to.gpu == "v100");
  std::map<std::uint32_t, std::string> considered;
  for (const auto& st : round->jobs) considered[st.job] = st.considered;
  BOOST_TEST(considered[10] == "no: held");
  BOOST_TEST(considered[11] == "no: waits for a dependency");
  BOOST_TEST(considered[12] == "no: waits for its begin time");
  BOOST_TEST(considered[13] == "policy");
  std::map<std::uint32_t, std::string> kinds;  // the fixed kinds criusd's metrics count
  for (const auto& st : round->jobs) kinds[st.job] = st.not_considered;
  BOOST_TEST(kinds[10] == "held");
  BOOST_TEST(kinds[11] == "dependency");
  BOOST_TEST(kinds[12] == "begin_time");
  BOOST_TEST(kinds[13] == "");

  // The same with the priorities swapped: the other job gets it.
  s.jobs[6].priority = 5000;
  s.jobs[7].priority = 100;
  auto swapped = c.decide(s);
  BOOST_TEST_REQUIRE(swapped.ok(), why(swapped));
  BOOST_TEST_REQUIRE(swapped->actions.size() == 1u);
  BOOST_TEST(swapped->actions[0].job == 13u);
}

// A job that saves its checkpoint and exits on the signal ends COMPLETED (or FAILED): criusd
// requeues it anyway, held, and finishes the move. A job cancelled or ended before the move
// stays ended.
BOOST_FIXTURE_TEST_CASE(a_job_that_exits_on_the_signal_is_still_moved, Fixture) {
  job::Record rec = make_record("v100:1x8:1", "v100");
  rec.move = job::Move{{"a100", "a100", 1, 8, 1}, "signalled", 100, "upgrade", {}};
  Snapshot s;
  s.now = 105;
  s.nodes = {node("a100-1", "a100", 0), node("a100-2", "a100", 0), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  SlurmJob j = slurm_job(7, "COMPLETED", job::to_text(rec));
  j.partition = "v100";
  j.end_time = 103;
  Controller c(*cluster, {});
  auto decide = [&](const SlurmJob& job) {
    s.jobs = {job};
    auto r = c.decide(s);
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    return r->actions;
  };
  auto acts = decide(j);
  BOOST_TEST_REQUIRE(acts.size() == 1u);
  BOOST_TEST(to_string(acts[0].kind) == std::string("requeue"));
  BOOST_TEST(acts[0].before.empty());  // Slurm does not update a finished job
  BOOST_TEST(job::parse_record(acts[0].after)->value().move->phase == "requeued");

  SlurmJob failed = j;
  failed.state = "FAILED";
  BOOST_TEST(decide(failed).size() == 1u);
  SlurmJob cancelled = j;
  cancelled.state = "CANCELLED";
  BOOST_TEST(decide(cancelled).empty());
  SlurmJob ended_before = j;
  ended_before.end_time = 99;
  BOOST_TEST(decide(ended_before).empty());
  // A job whose program reported its last iteration finished its training during the grace
  // time: it is not run again. One that reported less, or nothing, ended on the signal.
  SlurmJob finished = j;
  finished.comment = "crius-progress=1000/1000";
  BOOST_TEST(decide(finished).empty());
  finished.comment = "crius-progress=999/1000";
  BOOST_TEST(decide(finished).size() == 1u);
  finished.comment = "crius-progress=1000/1000 and more";  // not a progress Comment: unknown
  BOOST_TEST(decide(finished).size() == 1u);

  // Killed before it wrote "requeued": the job is pending, held by the requeue, still
  // "signalled"; the next criusd applies the Cell and lifts its own hold.
  SlurmJob held = j;
  held.state = "PENDING";
  held.priority = 0;
  held.reason = "JobHeldUser";
  held.requeued_held = true;
  acts = decide(held);
  BOOST_TEST_REQUIRE(acts.size() == 1u);
  BOOST_TEST(to_string(acts[0].kind) == std::string("finish_move"));
  BOOST_TEST(acts[0].release);
  // Held by its user instead (no requeue): the Cell, and the hold stays.
  held.requeued_held = false;
  acts = decide(held);
  BOOST_TEST_REQUIRE(acts.size() == 1u);
  BOOST_TEST(!acts[0].release);
}

// --crius-deadline reaches the policy: a running job that would miss its deadline where it
// runs moves to a Cell that meets it, where without a deadline it stays (its remaining time
// is too short for an upgrade to pay).
BOOST_FIXTURE_TEST_CASE(a_running_job_that_would_miss_its_deadline_moves, Fixture) {
  scheduler::EstimatorThroughput est(*cluster);
  auto seconds_per_iter = [&](int gpus) {
    auto p = est.best("bert__1.3B", 256, scheduler::shape("a100", 1, gpus));
    BOOST_TEST_REQUIRE(p.feasible);
    return p.iter_time_s;
  };
  const double restart = ControllerOptions{}.restart_cost_s;
  // About 300 s left on its 2 GPUs: an upgrade saves less than twice the restart cost.
  const long iters = std::lround(300 / seconds_per_iter(2));
  const double on2 = iters * seconds_per_iter(2), on4 = restart + iters * seconds_per_iter(4),
               on8 = restart + iters * seconds_per_iter(8);
  BOOST_TEST_REQUIRE(on8 + 2 < std::min(on4, on2), "premise: only 8 GPUs meet a deadline between");
  job::Record rec = make_record("a100:1x2:1", "a100");
  rec.request.iters = iters;
  rec.request.movable = true;
  auto decide = [&](std::optional<long> deadline_s) {
    job::Record r = rec;
    r.request.deadline_s = deadline_s;
    Snapshot s;
    s.now = 5000;
    s.nodes = {node("a100-1", "a100", 2), node("a100-2", "a100", 8), node("v100-1", "v100", 8),
               node("v100-2", "v100", 8)};
    s.jobs = {slurm_job(9, "RUNNING", job::to_text(r), {"a100-1"}, "gres:gpu:2")};
    s.jobs[0].start_time = 4000;
    Controller c(*cluster, {});
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    return round->actions;
  };
  BOOST_TEST(decide(std::nullopt).empty());
  // Deadline (from submission, 1009) between 8 GPUs' finish and 4 GPUs'.
  const long deadline_s = std::lround(5000 + (on8 + std::min(on4, on2)) / 2 - 1009);
  auto moved = decide(deadline_s);
  BOOST_TEST_REQUIRE(moved.size() == 1u);
  BOOST_TEST(to_string(moved[0].kind) == std::string("checkpoint"));
  BOOST_TEST(moved[0].to.gpus() == 8);
  BOOST_TEST(moved[0].reason.find("meet its deadline") != std::string::npos, moved[0].reason);
}

// One job whose Slurm state disagrees with its record never stops a round: it is left alone
// and reported (what differs), its GPUs stay taken, and the other jobs are decided as usual.
// A drained node is capacity lost: its running job stays or leaves, nothing new goes there.
BOOST_FIXTURE_TEST_CASE(an_inconsistent_job_is_skipped_and_the_round_goes_on, Fixture) {
  job::Record movable = make_record("a100:1x8:1", "a100");
  movable.request.iters = 100000;
  movable.request.movable = true;
  auto running = [&](std::uint32_t id, const job::Record& r, const std::string& host) {
    SlurmJob j = slurm_job(id, "RUNNING", job::to_text(r), {host});
    j.partition = r.cell.partition;
    j.start_time = 1000;
    return j;
  };
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 8),
             node("v100-2", "v100", 0)};
  s.nodes[0].usable = false;  // drained under job 1
  SlurmJob drained = running(1, movable, "a100-1");
  // Job 2's owner moved it to v100 before it started: its record still says a100.
  SlurmJob edited = running(2, movable, "v100-1");
  edited.partition = "v100";
  // Job 3's record claims 8 GPUs on a100-2, where Slurm counts 4 in use.
  SlurmJob overclaim = running(3, movable, "a100-2");
  s.nodes[1].gpus_used = 4;
  // Job 4 waits, its partition edited by an admin.
  SlurmJob pending_edited = slurm_job(4, "PENDING", record("a100:1x8:1", "a100"));
  pending_edited.partition = "v100";
  // Job 5 waits for one node: v100-2 is free.
  SlurmJob waiting = slurm_job(5, "PENDING", record("a100:1x8:1", "a100"));
  s.jobs = {drained, edited, overclaim, pending_edited, waiting};
  ControllerOptions o;
  o.min_runtime_s = 0;
  Controller c(*cluster, o);
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  std::map<std::uint32_t, JobStatus> st;
  for (const auto& j : round->jobs) st[j.job] = j;
  BOOST_TEST(st[1].considered == "policy");
  BOOST_TEST(st[2].considered.find("differs from its record: runs in partition v100, its record says a100") !=
                 std::string::npos, st[2].considered);
  BOOST_TEST(st[3].considered.find("Slurm counts 4 GPUs in use on node a100-2") != std::string::npos,
             st[3].considered);
  BOOST_TEST(st[4].considered.find("asks in partition v100, its record says a100") != std::string::npos,
             st[4].considered);
  BOOST_TEST(st[5].considered == "policy");
  for (const auto& n : round->notes) BOOST_TEST(n.find("failed") == std::string::npos, n);
  // Job 5 is placed where Slurm has GPUs free (v100-2, or the 4 it counts free on a100-2);
  // nothing lands on the drained a100-1 or on v100-1, which job 2 keeps.
  bool placed5 = false;
  for (const auto& a : round->actions) {
    BOOST_TEST((a.job == 1u || a.job == 5u), "action on job " << a.job);
    if (a.nodes)
      for (const auto& n : *a.nodes)
        BOOST_TEST((n == "v100-2" || n == "a100-2"), "job " << a.job << " placed on " << n);
    placed5 = placed5 || (a.job == 5u && a.nodes && !a.nodes->empty());
  }
  BOOST_TEST(placed5);
  BOOST_TEST(round->free.partitions.at(0).second.at(0) == 0);  // a100-1: drained

  // Two crius partitions share a node: a job of the second one running there is left alone.
  Snapshot shared;
  shared.now = 5000;
  shared.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 0), node("v100-1", "v100", 0),
                  node("v100-2", "v100", 0)};
  shared.nodes[0].partitions = {"a100", "v100"};
  job::Record on_v100 = make_record("v100:1x8:1", "v100");
  on_v100.request.movable = true;
  shared.jobs = {running(6, on_v100, "a100-1")};
  auto r2 = c.decide(shared);
  BOOST_TEST_REQUIRE(r2.ok(), why(r2));
  BOOST_TEST_REQUIRE(r2->jobs.size() == 1u);
  BOOST_TEST(r2->jobs[0].considered.find("runs on node a100-1, which crius counts in another partition") !=
                 std::string::npos, r2->jobs[0].considered);
  BOOST_TEST(r2->free.free_gpus("a100") == 8);  // a100-2; a100-1 is taken by job 6
}

// Nodes in a reservation (active, or starting before the next round) are not free to jobs
// outside it; jobs in a reservation are Slurm's to place.
BOOST_FIXTURE_TEST_CASE(reserved_nodes_are_not_free, Fixture) {
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}),
            slurm_job(3, "PENDING", record("a100:1x8:1", "a100"))};
  s.reservations = {{"maint", 5100, 9000, false, {"v100-1", "v100-2"}}};
  ControllerOptions o;
  o.interval_s = 300;
  Controller c(*cluster, o);
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());  // both v100 nodes are reserved from 5100
  BOOST_TEST(round->free.free_gpus("v100") == 0);
  // A reservation that starts after the next round, or has ended, takes nothing now (a job
  // that ends before it begins).
  s.reservations = {{"later", 5400, 9000, false, {"v100-1"}}, {"past", 1000, 4000, true, {}}};
  s.jobs[2].time_limit_s = 300;
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  BOOST_TEST(round->actions[0].to.gpu == "v100");
  // Nodes=ALL, active now: nothing is free.
  s.reservations = {{"all", 4000, 9000, true, {}}};
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  // A job in a reservation is left to Slurm.
  s.reservations.clear();
  s.jobs[2].reservation = "mine";
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  BOOST_TEST(round->jobs.back().considered == "no: in reservation mine (Slurm places it there)");
}

// crius.toml describes the partitions Slurm has: a node of another GPU type or GPU count keeps
// its partition out of every placement, and the round says what differs; another node count is
// only said.
BOOST_FIXTURE_TEST_CASE(a_partition_crius_toml_describes_wrongly_is_left_alone, Fixture) {
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}),
            slurm_job(3, "PENDING", record("a100:1x8:1", "a100"))};
  Controller c(*cluster, ControllerOptions{});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);  // the control: to the idle v100
  BOOST_TEST(round->actions[0].to.gpu == "v100");
  s.nodes[2].gpus = 4;  // v100-1 has 4 GPUs, crius.toml says 8 per node
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  BOOST_TEST(round->free.free_gpus("v100") == 0);
  std::string notes = util::join(round->notes, " | ");
  BOOST_TEST(notes.find("partition v100: crius.toml says 2 nodes x 8 v100, but node v100-1 has 4 GPUs; nothing is "
                        "placed there until they agree") != std::string::npos, notes);
  s.nodes[2].gpus = 8;
  s.nodes[3].gpu = "a40";  // v100-2's GRES type
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  notes = util::join(round->notes, " | ");
  BOOST_TEST(notes.find("node v100-2 has GPU type a40") != std::string::npos, notes);
  s.nodes[3].features = {"a40"};  // untyped GRES: the first feature stands for the type
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  s.nodes[3].features = {"a40", "v100"};  // ... and another names the Cell's type: as described
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.size() == 1u);
  s.nodes[3].features.clear();
  s.nodes[3].gpu = "v100";
  s.nodes.pop_back();  // one v100 node in Slurm: said, still placed
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.size() == 1u);
  notes = util::join(round->notes, " | ");
  BOOST_TEST(notes.find("partition v100: crius.toml says 2 nodes x 8 v100, but Slurm has 1 nodes in it") !=
             std::string::npos, notes);
  // What criusd --check-description prints: every partition, agreeing or not.
  auto checks = check_description(*cluster, s);
  BOOST_TEST_REQUIRE(checks.size() == 2u);
  BOOST_TEST(checks[0].agrees());
  BOOST_TEST(checks[0].described == "2 nodes x 8 a100");
  BOOST_TEST(checks[1].usable());
  BOOST_TEST(!checks[1].agrees());
  s.nodes[2].gpus = 4;
  checks = check_description(*cluster, s);
  BOOST_TEST(!checks[1].usable());
  BOOST_TEST(checks[1].text() == "partition v100: crius.toml says 2 nodes x 8 v100, but node v100-1 has 4 GPUs");
  // A partition table read without the partition: said (a table not read, as here before, is no word).
  s.partitions = {SlurmPartition{}};
  s.partitions[0].name = "a100";
  s.nodes.pop_back();
  checks = check_description(*cluster, s);
  BOOST_TEST(!checks[1].usable());
  BOOST_TEST(checks[1].text() == "partition v100: crius.toml says 2 nodes x 8 v100, but Slurm has no such partition");
}

// Slurm's nodes are read before its jobs: a job that starts in between runs on a node whose GPUs
// in use do not show it yet. Its GPUs are not reported free (job_submit would give them twice).
BOOST_FIXTURE_TEST_CASE(a_job_started_between_the_reads_is_not_free, Fixture) {
  job::Record just_moved = make_record("a100:1x8:1", "a100");  // not movable: left aside
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 0), node("a100-2", "a100", 0), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  SlurmJob j = slurm_job(4, "RUNNING", job::to_text(just_moved), {"a100-2"});
  j.start_time = 4999;
  s.jobs = {j, slurm_job(7, "RUNNING", "", {"v100-1"}, "gres/gpu:v100:8")};  // and a plain job
  Controller c(*cluster, ControllerOptions{});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->free.free_gpus("a100") == 8);  // a100-1 only
  BOOST_TEST(round->free.free_gpus("v100") == 8);  // v100-2 only
}

// criusd --rollback undoes what a criusd gone for good left: pins, moves in flight, the holds
// of their requeues; a job ended on the checkpoint signal is requeued in its Cell.
BOOST_AUTO_TEST_CASE(rollback_clears_pins_and_moves) {
  job::Record pinned = make_record("v100:1x8:1", "v100");
  pinned.by = "criusd";
  pinned.nodes = {"v100-1"};
  job::Record moving = make_record("v100:1x8:1", "v100");
  moving.request.movable = true;
  moving.log_move_start(moving.cell, {"a100", "a100", 1, 8, 1}, "upgrade", 100);
  moving.move = job::Move{{"a100", "a100", 1, 8, 1}, "requeued", 100, "upgrade", {"a100-1"}};
  job::Record signalled = moving;
  signalled.move->phase = "signalled";
  SlurmJob j1 = slurm_job(1, "PENDING", job::to_text(pinned));
  SlurmJob j2 = slurm_job(2, "PENDING", job::to_text(moving));
  j2.requeued_held = true;
  SlurmJob j3 = slurm_job(3, "RUNNING", job::to_text(signalled), {"v100-1"});
  SlurmJob j4 = slurm_job(4, "COMPLETED", job::to_text(signalled), {"v100-2"});
  j4.end_time = 150;
  SlurmJob j5 = slurm_job(5, "RUNNING", record("a100:1x8:1", "a100"), {"a100-2"});
  Snapshot s;
  s.now = 200;
  s.jobs = {j1, j2, j3, j4, j5};
  const auto actions = rollback_actions(s);
  BOOST_TEST_REQUIRE(actions.size() == 5u);
  auto rec_of = [](const Action& a) { return job::parse_record(a.after)->value(); };
  BOOST_TEST((actions[0].job == 1u && actions[0].kind == Action::Kind::update_pending));
  BOOST_TEST_REQUIRE(actions[0].nodes.has_value());
  BOOST_TEST(actions[0].nodes->empty());
  BOOST_TEST(rec_of(actions[0]).nodes.empty());
  BOOST_TEST((actions[1].job == 2u && actions[1].kind == Action::Kind::finish_move && actions[1].release));
  BOOST_TEST((actions[1].to == moving.cell));  // the Cell of its record, not the move's target
  BOOST_TEST(!rec_of(actions[1]).move.has_value());
  BOOST_TEST(rec_of(actions[1]).history.back().outcome == "rolled back (criusd --rollback)");
  BOOST_TEST((actions[2].job == 3u && actions[2].kind == Action::Kind::update_pending && !actions[2].nodes));
  BOOST_TEST(!rec_of(actions[2]).move.has_value());
  BOOST_TEST((actions[3].job == 4u && actions[3].kind == Action::Kind::requeue));
  BOOST_TEST((actions[4].job == 4u && actions[4].kind == Action::Kind::finish_move && actions[4].release));
  BOOST_TEST(rollback_actions(Snapshot{}).empty());
  // A job requeued held by someone else (an admin), pinned: its pin is cleared, its hold stays.
  j1.requeued_held = true;
  s.jobs = {j1};
  const auto kept_hold = rollback_actions(s);
  BOOST_TEST_REQUIRE(kept_hold.size() == 1u);
  BOOST_TEST((kept_hold[0].kind == Action::Kind::update_pending && !kept_hold[0].release));
}

// job_modify reads the AdminComment from slurmctld's private job record only where its head is
// the one crius knows for the Slurm it is built for (22.05 to 25.05: the magic first; 25.11 and
// later: after the step id); any other head (a release that moved the fields) reads as unknown,
// and job_modify then refuses users' Cell edits (fails closed).
BOOST_AUTO_TEST_CASE(a_job_record_head_crius_does_not_know_reads_as_unknown) {
  char comment[] = "{\"crius\":3}";
  slurm::compat::JobRecordHead known{};
  known.magic = slurm::compat::kJobMagic;
  known.admin_comment = comment;
  auto read = slurm::compat::job_admin_comment(&known);
  BOOST_TEST(read.known);
  BOOST_TEST(read.text == comment);
  // the other layout: the magic where this release's head does not have it
  const std::size_t here = offsetof(slurm::compat::JobRecordHead, magic);
  alignas(8) unsigned char moved[64] = {};
  std::memcpy(moved + (here == 0 ? 24 : 0), &slurm::compat::kJobMagic, sizeof slurm::compat::kJobMagic);
  read = slurm::compat::job_admin_comment(moved);
  BOOST_TEST(!read.known);
  BOOST_TEST(read.text == nullptr);
  BOOST_TEST(!slurm::compat::job_admin_comment(nullptr).known);
}

// A reservation ahead on the nodes of a Cell (maintenance in 2 hours) keeps a job out of it when
// its time limit there would cross the reservation, as Slurm's own scheduler would; a job that
// ends before it may go.
BOOST_FIXTURE_TEST_CASE(reservations_ahead_within_the_time_limit_keep_a_job_out, Fixture) {
  job::Record long_job = make_record("a100:1x2:1", "a100");
  long_job.request.iters = 100000;
  long_job.request.movable = true;
  auto decide = [&](std::int64_t time_limit_s, std::vector<SlurmReservation> resvs) {
    SlurmJob j = slurm_job(9, "RUNNING", job::to_text(long_job), {"a100-1"}, "gres:gpu:2");
    j.start_time = 4000;
    j.time_limit_s = time_limit_s;
    Snapshot s;
    s.now = 5000;
    s.nodes = {node("a100-1", "a100", 2), node("a100-2", "a100", 0), node("v100-1", "v100", 0),
               node("v100-2", "v100", 0)};
    s.jobs = {j};
    s.reservations = std::move(resvs);
    Controller c(*cluster, ControllerOptions{});
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    return *round;
  };
  const std::vector<SlurmReservation> maint = {{"maint", 5000 + 7200, 5000 + 10800, false, {"a100-2", "v100-1", "v100-2"}}};
  const std::int64_t three_days = 3 * 86400;
  BOOST_TEST(decide(three_days, {}).actions.size() == 1u);  // the control: it moves
  auto kept = decide(three_days, maint);
  BOOST_TEST(kept.actions.empty());
  bool noted = false;
  for (const auto& n : kept.notes)
    noted = noted || (n.find("job 9: not moved") == 0 && n.find("reservation maint on node") != std::string::npos &&
                      n.find("begins in 120 min") != std::string::npos &&
                      n.find("time limit of 4320 min") != std::string::npos);
  BOOST_TEST(noted, "notes: " << util::join(kept.notes, " | "));
  BOOST_TEST(decide(0, maint).actions.empty());              // no time limit: it would cross any
  BOOST_TEST(decide(3600, maint).actions.size() == 1u);      // ends (with the grace) before it
  // Nodes=ALL, ahead: nowhere to go; a reservation that has ended takes nothing.
  BOOST_TEST(decide(three_days, {{"all", 9000, 20000, true, {}}}).actions.empty());
  BOOST_TEST(decide(three_days, {{"past", 1000, 4000, true, {}}}).actions.size() == 1u);
  // The report tells job_submit when a reservation begins on each node (0: none ahead), in the
  // order of its free GPUs; a partition without any has no entry.
  auto report = decide(three_days, maint).free;
  BOOST_TEST_REQUIRE(report.reserved_from.size() == 2u);
  BOOST_TEST(report.reserved_from[0].first == "a100");
  BOOST_TEST((report.reserved_from[0].second == std::vector<std::int64_t>{0, 5000 + 7200}));
  BOOST_TEST((report.reserved_from[1].second == std::vector<std::int64_t>{5000 + 7200, 5000 + 7200}));
  BOOST_TEST(decide(three_days, {{"past", 1000, 4000, true, {}}}).free.reserved_from.empty());
  auto everywhere = decide(three_days, {{"all", 9000, 20000, true, {}}, {"soon", 6000, 7000, false, {"a100-1"}}}).free;
  BOOST_TEST_REQUIRE(everywhere.reserved_from.size() == 2u);
  BOOST_TEST((everywhere.reserved_from[0].second == std::vector<std::int64_t>{6000, 9000}));
}

// A pending job criusd pinned to a node that is drained since waits as ReqNodeNotAvail: it is
// still criusd's to place, so the round places it elsewhere or clears the pin.
BOOST_FIXTURE_TEST_CASE(a_pin_on_a_node_that_became_unavailable_is_undone, Fixture) {
  job::Record pinned = make_record("v100:1x8:1", "v100");
  pinned.by = "criusd";
  pinned.nodes = {"v100-1"};
  SlurmJob j = slurm_job(3, "PENDING", job::to_text(pinned));
  j.partition = "v100";
  j.req_nodes = {"v100-1"};
  j.reason = "ReqNodeNotAvail";
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 8)};
  s.nodes[2].usable = false;
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}), j};
  s.jobs[1].partition = "a100";
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  BOOST_TEST_REQUIRE(round->actions[0].nodes.has_value());
  BOOST_TEST(round->actions[0].nodes->empty());  // nowhere to go now: the pin is cleared
  // A job the user pinned (-w) that waits the same way is the user's.
  s.jobs[2].req_nodes = {"v100-2"};
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
}

namespace {

// Job 1, movable, running on both a100 nodes: submitted and eligible at 2000, started at 3000,
// Slurm priority 100.
SlurmJob movable_on_both_a100() {
  job::Record movable = make_record("a100:2x8:1", "a100");
  movable.request.iters = 100000;
  movable.request.movable = true;
  SlurmJob r = slurm_job(1, "RUNNING", job::to_text(movable), {"a100-1", "a100-2"});
  r.submit_time = r.eligible_time = 2000;
  r.start_time = 3000;
  r.priority = 100;
  return r;
}

// At 5000, every GPU of the cluster (2 a100 and 2 v100 nodes) in use.
Snapshot every_gpu_in_use() {
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 8),
             node("v100-2", "v100", 8)};
  return s;
}

}  // namespace

// Waiting counts from Slurm's eligible time: a job submitted early but held, released after a
// movable job started, does not make that job "opportunistic" (taken back for it).
BOOST_FIXTURE_TEST_CASE(waiting_counts_from_the_eligible_time, Fixture) {
  SlurmJob r = movable_on_both_a100();
  SlurmJob p = slurm_job(2, "PENDING", record("a100:2x8:1", "a100"));
  p.submit_time = 1000;
  p.priority = 100;
  Snapshot s = every_gpu_in_use();
  ControllerOptions o;
  o.min_runtime_s = 0;
  Controller c(*cluster, o);
  auto decide = [&](std::int64_t eligible) {
    p.eligible_time = eligible;
    s.jobs = {r, p};
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    return round->actions;
  };
  // The control: eligible since its submission, it waited while job 1 started; job 1 gives way.
  auto taken = decide(1000);
  BOOST_TEST_REQUIRE(!taken.empty());
  BOOST_TEST(taken[0].job == 1u);
  // Held until 4000, after job 1 started at 3000: job 1 keeps its GPUs.
  BOOST_TEST(decide(4000).empty());
  // Released a moment ago (Slurm sets the eligible time at its next scheduling pass): the same.
  BOOST_TEST(decide(0).empty());
}

// Ahead in Slurm's order is a higher priority first: a plain job of a lower priority that waited
// since before the movable job 1 started is behind it (job 1 keeps its GPUs); one of a higher
// priority is ahead if it waited since then, not if it came after job 1 started.
BOOST_FIXTURE_TEST_CASE(ahead_is_a_higher_priority_first, Fixture) {
  SlurmJob r = movable_on_both_a100();
  SlurmJob plain = slurm_job(2, "PENDING", "");
  plain.num_nodes = 2;
  plain.reason = "Priority";
  Snapshot s = every_gpu_in_use();
  ControllerOptions o;
  o.min_runtime_s = 0;
  Controller c(*cluster, o);
  auto taken_back = [&](std::uint32_t priority, std::int64_t eligible) {
    plain.priority = priority;
    plain.submit_time = plain.eligible_time = eligible;
    s.jobs = {r, plain};
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    return !round->actions.empty();
  };
  BOOST_TEST(!taken_back(50, 1000));
  BOOST_TEST(taken_back(200, 2500));
  BOOST_TEST(taken_back(200, 3000));  // the same second counts
  BOOST_TEST(!taken_back(200, 3500));
  BOOST_TEST(taken_back(100, 1000));
  BOOST_TEST(!taken_back(100, 2500));  // the same priority, eligible after job 1
}

// Slurm's queue order breaks ties of priority and submission second by job id (sort_job_queue2):
// a job submitted in the same second as a movable one, with a lower id and the same priority
// (24.11's default priority/multifactor gives every job 1), is ahead of it; the movable job
// that started while it waited gives its GPUs back. With the ids the other way round it keeps them.
BOOST_FIXTURE_TEST_CASE(ties_of_priority_and_second_go_by_job_id, Fixture) {
  auto decide = [&](std::uint32_t pending_id, std::uint32_t running_id) {
    job::Record movable = make_record("a100:2x8:1", "a100");
    movable.request.iters = 100000;
    movable.request.movable = true;
    SlurmJob r = slurm_job(running_id, "RUNNING", job::to_text(movable), {"a100-1", "a100-2"});
    SlurmJob p = slurm_job(pending_id, "PENDING", record("a100:2x8:1", "a100"));
    r.submit_time = p.submit_time = r.eligible_time = p.eligible_time = 2000;
    r.start_time = 2000;
    r.priority = p.priority = 1;
    Snapshot s;
    s.now = 5000;
    s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 8),
               node("v100-2", "v100", 8)};
    s.jobs = {r, p};
    ControllerOptions o;
    o.min_runtime_s = 0;
    Controller c(*cluster, o);
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    return round->actions;
  };
  auto taken = decide(1, 2);
  BOOST_TEST_REQUIRE(!taken.empty());
  BOOST_TEST(taken[0].job == 2u);
  BOOST_TEST(decide(2, 1).empty());
}

// A plain Slurm job waiting for GPUs of a crius partition is in the policy's queue in its
// place: a movable crius job that started while it waited gives the GPUs back (as to a crius
// job), the report holds them for it, and a crius job behind one that Slurm can start now gets
// none of its GPUs.
BOOST_FIXTURE_TEST_CASE(a_plain_job_waiting_is_in_the_queue, Fixture) {
  SlurmJob r = movable_on_both_a100();
  SlurmJob plain = slurm_job(2, "PENDING", "");  // no crius record: Slurm's own job
  plain.num_nodes = 2;
  plain.reason = "Resources";
  plain.submit_time = 1000;
  plain.priority = 100;
  Snapshot s = every_gpu_in_use();
  ControllerOptions o;
  o.min_runtime_s = 0;
  Controller c(*cluster, o);
  auto decide = [&](std::int64_t eligible) {
    plain.eligible_time = eligible;
    s.jobs = {r, plain};
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    return *round;
  };
  auto taken = decide(1000);
  BOOST_TEST_REQUIRE(taken.actions.size() == 1u);
  BOOST_TEST(taken.actions[0].job == 1u);
  BOOST_TEST((taken.actions[0].kind == Action::Kind::checkpoint));
  BOOST_TEST(taken.actions[0].reason.find("preempted by the blocked queue head 2") == 0);
  BOOST_TEST(taken.free.free_gpus("a100") == 0);  // freed for job 2, which Slurm starts there
  // Eligible after job 1 started: job 1 did not start ahead of it, and keeps its GPUs.
  BOOST_TEST(decide(4000).actions.empty());
  // A plain job held, pinned (-w) or asking no GPUs per node is not in the queue.
  plain.reason = "JobHeldUser";
  BOOST_TEST(decide(1000).actions.empty());
  plain.reason = "Resources";
  plain.tres_per_node = "";
  BOOST_TEST(decide(1000).actions.empty());
  plain.tres_per_node = "gres:gpu:8";

  // The a100 nodes free, job 2 not started yet: its GPUs are held; crius job 3 behind it (a
  // lower priority) gets none of them and waits, and the report has no a100 GPU free.
  SlurmJob p = slurm_job(3, "PENDING", record("a100:1x8:1", "a100"));
  p.priority = 50;
  s.nodes[0].gpus_used = s.nodes[1].gpus_used = 0;
  s.jobs = {plain, p};
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  BOOST_TEST(round->free.free_gpus("a100") == 0);
  BOOST_TEST(round->free.waiting == 2);
  // Without job 2, job 3 gets the a100 nodes.
  s.jobs = {p};
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->free.free_gpus("a100") < 16);
  BOOST_TEST(round->free.waiting == 0);
}

// criusd's round re-decides a pending crius job by job_submit's rule, the floor included: with
// the plain job 1 waiting ahead (2 whole a100 nodes; others hold 4 GPUs of each), job 2
// (bert__1.3B, pending in 16 v100) is placed while another job waits: by speed per GPU. A
// movable job 2 takes its most efficient Cell; a fixed one, which keeps it for life, one at
// least a third as fast as its fastest.
BOOST_FIXTURE_TEST_CASE(a_pending_fixed_job_gets_a_cell_for_life, Fixture) {
  SlurmJob big = slurm_job(1, "PENDING", "");
  big.num_nodes = 2;
  big.reason = "Resources";
  big.priority = 100;
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 4), node("a100-2", "a100", 4), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  auto cell_of_job_2 = [&](bool movable) {
    job::Record r = make_record("v100:2x8:1", "v100");
    r.request.movable = movable;
    SlurmJob p = slurm_job(2, "PENDING", job::to_text(r));
    p.partition = "v100";
    p.num_nodes = 2;
    p.priority = 100;
    s.jobs = {big, p};
    Controller c(*cluster, {});
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    auto it = std::find_if(round->actions.begin(), round->actions.end(), [](const Action& a) { return a.job == 2u; });
    BOOST_TEST_REQUIRE((it != round->actions.end()));
    return *it;
  };
  const Action moving = cell_of_job_2(true), kept = cell_of_job_2(false);
  BOOST_TEST(moving.to.gpus() < kept.to.gpus(), estimator::to_string(moving.to) + " / " + estimator::to_string(kept.to));
  BOOST_TEST(moving.to_samples_per_s / moving.to.gpus() > kept.to_samples_per_s / kept.to.gpus());
  BOOST_TEST(moving.to_samples_per_s < kept.to_samples_per_s);
}

// Each task of a job array is its own job to criusd, addressed as "ARRAY_TASK"; pending tasks
// Slurm has not split, hetjob components and a job Slurm requeued that did not opt in to moves
// are left as they are.
BOOST_FIXTURE_TEST_CASE(array_tasks_alone_hetjobs_and_requeued_jobs_left_alone, Fixture) {
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  const std::string rec = record("a100:1x8:1", "a100");
  SlurmJob task = slurm_job(100, "PENDING", rec);  // task 0 of array 100 shares the array's id
  task.array_job_id = 100;
  task.array_task_id = 0;
  SlurmJob rest = slurm_job(101, "PENDING", rec);
  rest.array_job_id = 100;
  rest.array_tasks = "1-9";
  SlurmJob het = slurm_job(200, "PENDING", rec);
  het.het_job_id = 200;
  SlurmJob requeued = slurm_job(300, "PENDING", rec);
  requeued.restarts = 1;
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}), rest, het, requeued,
            task};
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  BOOST_TEST(round->actions[0].job == 100u);
  BOOST_TEST(round->actions[0].slurm_id == "100_0");
  std::map<std::uint32_t, std::string> considered;
  for (const auto& st : round->jobs) considered[st.job] = st.considered;
  BOOST_TEST(considered[101].find("pending tasks 1-9 of job array 100") != std::string::npos, considered[101]);
  BOOST_TEST(considered[200].find("heterogeneous job 200") != std::string::npos, considered[200]);
  BOOST_TEST(considered[300].find("requeued by Slurm") != std::string::npos, considered[300]);
  // A plain job is addressed by its id.
  BOOST_TEST(slurm_id(slurm_job(7, "PENDING", "")) == "7");
}

// The nodes a move in flight goes to are promised to it until it runs there: no other job is
// placed on them in the meantime (two moves to one node would leave one of them waiting).
BOOST_FIXTURE_TEST_CASE(the_target_of_a_move_in_flight_is_not_given_away, Fixture) {
  job::Record moving = make_record("v100:1x8:1", "v100");
  moving.request.movable = true;
  moving.move = job::Move{{"a100", "a100", 1, 8, 1}, "signalled", 4990, "upgrade", {"a100-1"}};
  auto decide = [&](const SlurmJob& m) {
    Snapshot s;
    s.now = 5000;
    s.nodes = {node("a100-1", "a100", 0), node("a100-2", "a100", 8), node("v100-1", "v100", m.nodes.empty() ? 0 : 8),
               node("v100-2", "v100", 8)};
    // Job 4 waits for v100: it would move to an idle a100 node.
    s.jobs = {slurm_job(1, "RUNNING", "", {"a100-2"}), slurm_job(2, "RUNNING", "", {"v100-2"}), m,
              slurm_job(4, "PENDING", record("v100:1x8:1", "v100"))};
    s.jobs[1].partition = s.jobs[3].partition = "v100";
    Controller c(*cluster, {});
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    for (const auto& a : round->actions)
      if (a.job == 4u && a.nodes)
        for (const auto& n : *a.nodes) BOOST_TEST(n != "a100-1", "job 4 placed on the promised a100-1");
    BOOST_TEST(round->free.free_gpus("a100") == 0);
  };
  SlurmJob running = slurm_job(3, "RUNNING", job::to_text(moving), {"v100-1"});
  running.partition = "v100";
  decide(running);  // signalled, within the grace time
  SlurmJob ended = running;  // it saved its checkpoint and exited: criusd requeues it
  ended.state = "COMPLETED";
  ended.nodes.clear();
  ended.end_time = 4995;
  decide(ended);
  SlurmJob requeued = ended;  // requeued and held: criusd gives it the a100 Cell
  requeued.state = "PENDING";
  requeued.priority = 0;
  requeued.reason = "JobHeldUser";
  requeued.requeued_held = true;
  job::Record r = moving;
  r.move->phase = "requeued";
  requeued.admin_comment = job::to_text(r);
  decide(requeued);
  // Moved and released, it waits for the begin time criusd set: still promised.
  job::Record done = make_record("a100:1x8:1", "a100");
  done.by = "criusd";
  done.nodes = {"a100-1"};
  SlurmJob starting = slurm_job(3, "PENDING", job::to_text(done));
  starting.req_nodes = {"a100-1"};
  starting.reason = "BeginTime";
  starting.begin_time = 5002;
  decide(starting);
  // The control: no move in flight, and job 4 takes the idle a100 node.
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 0), node("a100-2", "a100", 8), node("v100-1", "v100", 8),
             node("v100-2", "v100", 8)};
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-2"}), slurm_job(2, "RUNNING", "", {"v100-2"}),
            slurm_job(3, "RUNNING", "", {"v100-1"}), slurm_job(4, "PENDING", record("v100:1x8:1", "v100"))};
  s.jobs[1].partition = s.jobs[2].partition = s.jobs[3].partition = "v100";
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  BOOST_TEST(round->actions[0].job == 4u);
  BOOST_TEST((round->actions[0].nodes == std::vector<std::string>{"a100-1"}));
}

// The work a job declares (--crius-iters) is bounded by its time limit: it cannot look longer,
// and so worth more upgrades, than Slurm lets it run.
BOOST_FIXTURE_TEST_CASE(declared_iterations_are_bounded_by_the_time_limit, Fixture) {
  job::Record rec = make_record("a100:1x8:1", "a100");
  rec.request.iters = 1'000'000'000;
  rec.request.movable = true;
  SlurmJob j = slurm_job(1, "RUNNING", job::to_text(rec), {"a100-1"});
  j.start_time = 4000;
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 0), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  s.jobs = {j};
  Controller c(*cluster, {});
  auto remaining = [&] {
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    BOOST_TEST_REQUIRE(round->jobs.size() == 1u);
    return round->jobs[0].remaining_s;
  };
  BOOST_TEST(remaining() > 1e8);  // no time limit: the user's word
  s.jobs[0].time_limit_s = 3600;  // an hour, 1000 s of it used
  BOOST_TEST(remaining() == 2600, boost::test_tools::tolerance(1e-6));
}

// Progress reports are sparse: between two, a running job goes on at its estimated speed, for
// one [launch] progress_interval_s at most, and counted from its start when it reported before it.
BOOST_FIXTURE_TEST_CASE(progress_between_reports_goes_on_at_the_estimated_speed, Fixture) {
  job::Record rec = make_record("a100:1x8:1", "a100");
  rec.request.iters = 1'000'000;
  SlurmJob j = slurm_job(1, "RUNNING", job::to_text(rec), {"a100-1"});
  j.start_time = 4000;
  Snapshot s;
  s.nodes = {node("a100-1", "a100", 8)};
  Controller c(*cluster, {});
  auto seen = [&](std::int64_t now, const std::string& comment) {
    s.now = now;
    j.comment = comment;
    s.jobs = {j};
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    BOOST_TEST_REQUIRE(round->jobs.size() == 1u);
    return std::pair(round->jobs[0].done_iterations, round->jobs[0].est_iter_time_s);
  };
  const double interval = cluster->progress_interval_s;
  BOOST_TEST(interval == 1200);
  const auto [untimed, t] = seen(9000, "crius-progress=100/1000000");  // an older crius-launch's: as it is
  BOOST_TEST(untimed == 100);
  BOOST_TEST_REQUIRE(t > 0);
  BOOST_TEST(seen(5000, "crius-progress=100/1000000@5000").first == 100);
  BOOST_TEST(seen(5300, "crius-progress=100/1000000@5000").first == 100 + std::floor(300 / t));
  BOOST_TEST(seen(9000, "crius-progress=100/1000000@5000").first == 100 + std::floor(interval / t));
  // Reported before this start (then requeued): from the start.
  BOOST_TEST(seen(4100, "crius-progress=100/1000000@3000").first == 100 + std::floor(100 / t));
  // A report from the future (clocks apart) adds nothing.
  BOOST_TEST(seen(5000, "crius-progress=100/1000000@6000").first == 100);
  // Never past the total.
  BOOST_TEST(seen(9000, "crius-progress=999999/1000000@5000").first == 1000000);
  // A pending job is not going on.
  j.state = "PENDING";
  j.nodes.clear();
  BOOST_TEST(seen(9000, "crius-progress=100/1000000@5000").first == 100);
}

// Slurm's rules (limits.h): every Cell criusd gives a job is one Slurm lets it have.
BOOST_FIXTURE_TEST_CASE(partition_access_and_size_limits, Fixture) {
  // v100 is full; a100 idle. The job waits on v100 and would move to a100.
  auto snapshot = [&](const SlurmJob& waiting) {
    Snapshot s;
    s.now = 5000;
    s.nodes = {node("a100-1", "a100", 0), node("a100-2", "a100", 0), node("v100-1", "v100", 8),
               node("v100-2", "v100", 8)};
    s.jobs = {slurm_job(1, "RUNNING", "", {"v100-1"}), slurm_job(2, "RUNNING", "", {"v100-2"}), waiting};
    s.jobs[0].partition = s.jobs[1].partition = "v100";
    s.partitions.resize(2);
    s.partitions[0].name = "a100";
    s.partitions[1].name = "v100";
    return s;
  };
  job::Record rec = make_record("v100:2x8:1", "v100");
  SlurmJob j = slurm_job(3, "PENDING", job::to_text(rec), {}, "gres:gpu:8");
  j.partition = "v100";
  j.account = "lab";
  j.qos = "normal";
  Controller c(*cluster, {});
  auto decide = [&](const Snapshot& s) {
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    return *round;
  };
  Snapshot s = snapshot(j);
  auto open = decide(s);  // the control: it moves to a100, on both nodes
  BOOST_TEST_REQUIRE(open.actions.size() == 1u);
  BOOST_TEST(open.actions[0].to.gpu == "a100");
  BOOST_TEST(open.actions[0].to.nodes == 2);

  s.partitions[0].allow_accounts = {"other"};
  auto r = decide(s);
  BOOST_TEST(r.actions.empty());
  s.partitions[0].allow_accounts = {};
  s.partitions[0].deny_qos = {"normal"};
  BOOST_TEST(decide(s).actions.empty());
  s.partitions[0].deny_qos = {};
  s.partitions[0].allow_groups = {"gpu-users"};
  BOOST_TEST(decide(s).actions.empty());
  s.jobs[2].user_groups = {"staff", "gpu-users"};
  BOOST_TEST(decide(s).actions.size() == 1u);
  s.partitions[0].allow_groups = {};
  s.partitions[0].up = false;
  BOOST_TEST(decide(s).actions.empty());
  s.partitions[0].up = true;
  s.partitions[0].max_time_s = 3600;
  s.jobs[2].time_limit_s = 7200;
  BOOST_TEST(decide(s).actions.empty());
  s.jobs[2].time_limit_s = 3600;
  // MaxNodes=1: a Cell on one a100 node, not two.
  s.partitions[0].max_nodes = 1;
  r = decide(s);
  BOOST_TEST_REQUIRE(r.actions.size() == 1u);
  BOOST_TEST(r.actions[0].to.gpu == "a100");
  BOOST_TEST(r.actions[0].to.nodes == 1);
  // Slurm lets it into no crius partition at all: reported, left alone.
  s.partitions[0].allow_accounts = s.partitions[1].allow_accounts = {"other"};
  r = decide(s);
  BOOST_TEST(r.actions.empty());
  BOOST_TEST(r.jobs.back().considered.find("Slurm lets it into none of the partitions") != std::string::npos,
             r.jobs.back().considered);
  BOOST_TEST(r.jobs.back().considered.find("account lab is not in the AllowAccounts of partition a100") !=
                 std::string::npos, r.jobs.back().considered);
}

// QOS and association limits, where Slurm enforces them (AccountingStorageEnforce=limits).
BOOST_FIXTURE_TEST_CASE(qos_and_association_limits, Fixture) {
  // One movable job on 1 x 2 a100 with many iterations left and everything else idle grows
  // (running_job_grows_when_gpus_are_idle) unless a limit stops it.
  job::Record long_job = make_record("a100:1x2:1", "a100");
  long_job.request.iters = 100000;
  long_job.request.movable = true;
  SlurmJob j = slurm_job(9, "RUNNING", job::to_text(long_job), {"a100-1"}, "gres:gpu:2");
  j.start_time = 4000;
  j.account = "lab";
  j.qos = "normal";
  j.user = "alice";
  j.assoc_id = 3;
  auto snapshot = [&] {
    Snapshot s;
    s.now = 5000;
    s.nodes = {node("a100-1", "a100", 2), node("a100-2", "a100", 0), node("v100-1", "v100", 0),
               node("v100-2", "v100", 0)};
    s.jobs = {j};
    s.enforce_limits = true;
    s.qos = {SlurmQos{1, "normal", {}, {}, {}, {2, 1}, {{"alice", {2, 1}}}}};
    s.assocs = {SlurmAssoc{1, 0, "", "root", "", 0, 0, {}, {}, {2, 1}},
                SlurmAssoc{2, 1, "", "lab", "", 0, 0, {}, {}, {2, 1}},
                SlurmAssoc{3, 2, "alice", "lab", "", 1001, 1, {}, {}, {2, 1}}};
    return s;
  };
  Controller c(*cluster, {});
  auto grown_to = [&](const Snapshot& s) {
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    for (const auto& n : round->notes) BOOST_TEST_MESSAGE(n);
    return round->actions.empty() ? 2 : round->actions[0].to.gpus();
  };
  Snapshot s = snapshot();
  BOOST_TEST(grown_to(s) > 8);  // the control: no limits set
  s.enforce_limits = false;
  s.qos[0].max_per_job = {4, -1};
  BOOST_TEST(grown_to(s) > 8);  // limits not enforced by Slurm: none
  s.enforce_limits = true;
  BOOST_TEST(grown_to(s) == 4);  // QOS MaxTRESPerJob=gres/gpu=4
  s = snapshot();
  s.assocs[2].max_per_job = {-1, 1};
  BOOST_TEST(grown_to(s) == 8);  // the association's MaxTRESPerJob=node=1: one node
  s = snapshot();
  s.assocs[1].grp = {8, -1};  // account lab: GrpTRES=gres/gpu=8, 2 in use
  BOOST_TEST(grown_to(s) == 8);
  s.assocs[1].used = {6, 1};  // other jobs of the account hold 4 more: 2 + 2 left
  BOOST_TEST(grown_to(s) == 4);
  s = snapshot();
  s.qos[0].max_per_user = {2, -1};  // alice may hold 2 GPUs of QOS normal: she does
  BOOST_TEST(grown_to(s) == 2);
  s.qos[0].used_by_user["alice"] = {1, 1};  // 1 of her 2 here (a count off by one): still 2 at most
  BOOST_TEST(grown_to(s) <= 3);
  // Two jobs that each fit a group limit alone, not together: the round gives the first its
  // change and drops the second's, saying why.
  s = snapshot();
  s.assocs[1].grp = {12, -1};  // account lab: 12 GPUs, 2 in use
  SlurmJob second = j;
  second.id = 11;
  second.nodes = {"a100-2"};
  s.jobs.push_back(second);
  s.nodes[1].gpus_used = 2;
  s.assocs[1].used = s.assocs[0].used = {4, 2};
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  int added = 0;
  for (const auto& a : round->actions) added += a.to.gpus() - 2;
  BOOST_TEST(added <= 8);  // 12 - 4 in use
  BOOST_TEST(added > 0);
  bool said = false;
  for (const auto& n : round->notes) said = said || n.find("GrpTRES of account lab (gres/gpu=12") != std::string::npos;
  BOOST_TEST(said, "no note of the dropped change: " << round->notes.size() << " notes, " << round->actions.size() << " actions");
  // Per GPU type: account lab may hold 8 a100 GPUs (GrpTRES=gres/gpu:a100=8), 2 in use (the
  // job's): it grows to 8 a100, not to the control's 16; other jobs of the account holding 4
  // more a100, to 4. A limit on another type bounds nothing here.
  s = snapshot();
  s.assocs[1].grp = GpusNodes(-1, -1, {{"a100", 8}});
  s.assocs[1].used = GpusNodes(2, 1, {{"a100", 2}});
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  BOOST_TEST(round->actions[0].to.gpu == "a100");
  BOOST_TEST(round->actions[0].to.gpus() == 8);
  s.assocs[1].used = GpusNodes(6, 2, {{"a100", 6}});
  BOOST_TEST(grown_to(s) == 4);
  s.assocs[1].grp = GpusNodes(-1, -1, {{"v100", 8}});
  BOOST_TEST(grown_to(s) > 8);
  // The round's own changes count per type too: two jobs that each fit gres/gpu:a100=12 alone.
  s = snapshot();
  s.assocs[1].grp = GpusNodes(-1, -1, {{"a100", 12}});
  s.jobs.push_back(second);
  s.nodes[1].gpus_used = 2;
  s.assocs[1].used = s.assocs[0].used = GpusNodes(4, 2, {{"a100", 4}});
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  added = 0;
  for (const auto& a : round->actions) added += a.to.gpu == "a100" ? a.to.gpus() - 2 : -2;
  BOOST_TEST(added <= 8);  // 12 - 4 in use
  said = round->actions.size() < 2;
  for (const auto& n : round->notes)
    said = said || n.find("its a100 GPUs would be over the GrpTRES of account lab (gres/gpu:a100=12") != std::string::npos;
  BOOST_TEST(said);
  // CPUs: a task per GPU, cpus_per_task each. Slurm does not check CPU limits for a job criusd
  // changed (it is an operator), so criusd keeps them: QOS MaxTRESPerJob=cpu=16 at 4 CPUs a
  // task is 4 GPUs; the account's GrpTRES=cpu=32 with 8 in use (the job's 2 tasks) is 8, and
  // with 8 more in use by others 6 (a Cell of 4).
  s = snapshot();
  s.jobs[0].cpus_per_task = 4;
  s.qos[0].max_per_job = GpusNodes(-1, -1, {}, 16);
  BOOST_TEST(grown_to(s) == 4);
  s = snapshot();
  s.jobs[0].cpus_per_task = 4;
  s.assocs[1].grp = GpusNodes(-1, -1, {}, 32);
  s.assocs[1].used = GpusNodes(2, 1, {}, 8);
  BOOST_TEST(grown_to(s) == 8);
  s.assocs[1].used = GpusNodes(4, 2, {}, 16);
  BOOST_TEST(grown_to(s) == 4);
  s.jobs[0].cpus_per_task = 1;  // the same limit at one CPU a task: not what stops it
  BOOST_TEST(grown_to(s) > 8);
  // The round's own changes count in CPUs too, with a note naming the limit.
  s = snapshot();
  s.jobs[0].cpus_per_task = 2;
  s.assocs[1].grp = GpusNodes(-1, -1, {}, 24);  // 12 GPUs' worth, 4 of them in use
  s.jobs.push_back(second);
  s.jobs.back().cpus_per_task = 2;
  s.nodes[1].gpus_used = 2;
  s.assocs[1].used = s.assocs[0].used = GpusNodes(4, 2, {}, 8);
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  added = 0;
  for (const auto& a : round->actions) added += a.to.gpus() - 2;
  BOOST_TEST(added <= 8);  // (24 - 8) CPUs / 2 a task
  BOOST_TEST(added > 0);
  said = round->actions.size() < 2;
  for (const auto& n : round->notes)
    said = said || n.find("its CPUs would be over the GrpTRES of account lab (cpu=24, ") != std::string::npos;
  BOOST_TEST(said);
  // Per node (MaxTRESPerNode): gres/gpu=4 of the QOS, or cpu=8 of the association at 4 CPUs a
  // task, bound the GPUs on each node, not the job's.
  s = snapshot();
  s.qos[0].max_per_node = GpusNodes(4, -1);
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  BOOST_TEST(round->actions[0].to.gpus_per_node <= 4);
  BOOST_TEST(round->actions[0].to.gpus() > 4);
  s = snapshot();
  s.jobs[0].cpus_per_task = 4;
  s.assocs[2].max_per_node = GpusNodes(-1, -1, {}, 8);
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  for (const auto& a : round->actions) BOOST_TEST(a.to.gpus_per_node <= 2);
  // Memory: per node (--mem) it follows the nodes, per CPU (--mem-per-cpu) the GPUs. The
  // account's GrpTRES=mem=1500M with the job's own 1000M in use: one node (8 GPUs), not two.
  s = snapshot();
  s.jobs[0].mem_mb = 1000;
  s.assocs[1].grp = GpusNodes(-1, -1, {}, -1, 1500);
  s.assocs[1].used = GpusNodes(2, 1, {}, -1, 1000);
  BOOST_TEST(grown_to(s) == 8);
  s.jobs[0].mem_mb = 0;  // no memory asked: not what stops it
  BOOST_TEST(grown_to(s) > 8);
  s = snapshot();
  s.jobs[0].mem_mb = 100;
  s.jobs[0].mem_per_cpu = true;
  s.qos[0].max_per_job = GpusNodes(-1, -1, {}, -1, 400);  // 4 CPUs' worth
  BOOST_TEST(grown_to(s) == 4);
  // MaxTRESPerNode=mem=500M under a job of 1000M a node: no Cell at all; it stays and is said.
  s = snapshot();
  s.jobs[0].mem_mb = 1000;
  s.qos[0].max_per_node = GpusNodes(-1, -1, {}, -1, 500);
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  BOOST_TEST(round->jobs[0].considered.find("its limits allow no GPUs") != std::string::npos, round->jobs[0].considered);
  // The round's own changes count in memory too, with a note naming the limit.
  s = snapshot();
  s.jobs[0].mem_mb = 100;  // a CPU, a task, a GPU: 100M each
  s.jobs[0].mem_per_cpu = true;
  s.assocs[1].grp = GpusNodes(-1, -1, {}, -1, 1000);  // 10 GPUs' worth: the two jobs hold 4
  s.jobs.push_back(s.jobs[0]);
  s.jobs.back().id = 11;
  s.jobs.back().nodes = {"a100-2"};
  s.nodes[1].gpus_used = 2;
  s.assocs[1].used = s.assocs[0].used = GpusNodes(4, 2, {}, -1, 400);
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  said = round->actions.size() < 2;
  for (const auto& n : round->notes)
    said = said || n.find("its memory would be over the GrpTRES of account lab (mem=1000M, ") != std::string::npos;
  BOOST_TEST(said);
  added = 0;
  for (const auto& a : round->actions) added += a.to.gpus() - 2;
  BOOST_TEST(added <= 6);  // (1000 - 400) / 100
  BOOST_TEST(added > 0);
  // A job pending because its Cell is over a limit (QOSMaxGRESPerJob) gets one within it.
  s = snapshot();
  s.qos[0].max_per_job = {8, -1};
  SlurmJob over = slurm_job(10, "PENDING", record("a100:2x8:1", "a100"), {}, "gres:gpu:8");
  over.reason = "QOSMaxGRESPerJob";
  over.account = "lab", over.qos = "normal", over.user = "bob", over.assoc_id = 2;
  s.jobs.push_back(over);
  round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  bool fixed = false;
  for (const auto& a : round->actions) fixed = fixed || (a.job == 10u && a.to.gpus() <= 8);
  BOOST_TEST(fixed);
}

// A job's own GRES besides GPUs are kept: job_submit adds them to the Cell's GPUs, and criusd's
// updates carry them to the new Cell.
BOOST_AUTO_TEST_CASE(other_gres_are_kept_gpu_requests_found) {
  auto t = split_tres("gres:gpu:a100:2,gres:nvme:1,gres/gpu=3,gpu:4,license_like:1");
  BOOST_TEST_REQUIRE(t.has_value());
  BOOST_TEST(t->gpus);
  BOOST_TEST(t->others == "gres:nvme:1,license_like:1");
  auto none = split_tres("gres:nvme:1,,gres:gpudirect:1");
  BOOST_TEST_REQUIRE(none.has_value());
  BOOST_TEST(!none->gpus);  // "gpudirect" is not "gpu"
  BOOST_TEST(none->others == "gres:nvme:1,gres:gpudirect:1");
  BOOST_TEST(!split_tres(nullptr)->gpus);
  BOOST_TEST(!split_tres(std::string(5000, 'x').c_str()).has_value());
}

BOOST_FIXTURE_TEST_CASE(a_moved_job_keeps_its_other_gres, Fixture) {
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}),
            slurm_job(3, "PENDING", record("a100:1x8:1", "a100"), {}, "gres:gpu:8,gres:nvme:1")};
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  BOOST_TEST(round->actions[0].to.gpu == "v100");
  BOOST_TEST(round->actions[0].other_gres == "gres:nvme:1");
}

// What job_submit learns of the per-job limits: QOS with one, and users' associations with one
// (along their parents) or whose default QOS has one.
BOOST_AUTO_TEST_CASE(per_job_limits_published_for_job_submit) {
  Snapshot s;
  s.enforce_limits = true;
  s.qos = {SlurmQos{1, "normal", {}, {}, {}, {}, {}}, SlurmQos{2, "gpu8", {8, -1}, {}, {}, {}, {}}};
  s.assocs = {SlurmAssoc{1, 0, "", "root", "", 0, 0, {}, {}, {}}, SlurmAssoc{2, 1, "", "lab", "", 0, 2, {-1, 2}, {}, {}},
              SlurmAssoc{3, 2, "alice", "lab", "", 1001, 0, {}, {}, {}},
              SlurmAssoc{4, 1, "bob", "root", "", 1002, 1, {}, {}, {}}};
  FreeGpus f;
  publish_job_limits(s, f);
  BOOST_TEST_REQUIRE(f.qos_limits.size() == 1u);
  BOOST_TEST(f.qos_limits[0].first == "gpu8");
  BOOST_TEST_REQUIRE(f.assoc_limits.size() == 1u);  // bob's association bounds nothing
  BOOST_TEST(f.assoc_limits[0].uid == 1001u);
  BOOST_TEST(f.assoc_limits[0].limit.nodes == 2);     // lab's MaxTRESPerJob=node=2
  BOOST_TEST(f.assoc_limits[0].default_qos == "gpu8");  // inherited from lab
  Submitter alice{1001, 1001, "lab", "", 0, false};
  BOOST_TEST(f.refusal("a100", alice, 2, 8) == "");
  BOOST_TEST(f.refusal("a100", alice, 4, 16) == "the association of account lab allows at most 2 nodes per job");
  BOOST_TEST(f.refusal("a100", alice, 2, 16) == "QOS gpu8 allows at most 8 GPUs per job");
  alice.qos = "normal";  // named: not the default
  BOOST_TEST(f.refusal("a100", alice, 2, 16) == "");
  s.enforce_limits = false;
  FreeGpus none;
  publish_job_limits(s, none);
  BOOST_TEST(none.qos_limits.empty());
  BOOST_TEST(none.assoc_limits.empty());
}

// The metrics file: Prometheus text format (every sample line "name{labels} value", each
// family with HELP and TYPE), counters that add up over rounds, gauges of the last round, and
// reasons as the controller's fixed kinds, never the job's own text.
BOOST_AUTO_TEST_CASE(metrics_count_rounds_actions_and_reasons) {
  Metrics m;
  Round r;
  JobStatus a, b, c;
  a.state = "RUNNING", a.considered = "policy";
  b.state = "PENDING", b.considered = "no: in reservation maint\"x (Slurm places it there)", b.not_considered = "reservation";
  c.state = "PENDING", c.considered = "no: waits for a dependency", c.not_considered = "dependency";
  r.jobs = {a, b, c};
  m.round_decided(r, 0.25);
  m.action(Action::Kind::checkpoint, true);
  m.action(Action::Kind::requeue, false);
  r.jobs = {a};
  m.round_decided(r, 0.5);
  m.round_failed();
  m.action(Action::Kind::checkpoint, true);
  const std::string t = m.text();
  auto has = [&](const std::string& line) { return t.find("\n" + line + "\n") != std::string::npos; };
  BOOST_TEST(has("crius_criusd_rounds_total 2"), t);
  BOOST_TEST(has("crius_criusd_acting 1"));
  m.acting(false);
  BOOST_TEST(m.text().find("\ncrius_criusd_acting 0\n") != std::string::npos);
  BOOST_TEST(has("crius_criusd_round_failures_total 1"));
  BOOST_TEST(has("crius_criusd_decide_seconds 0.5"));
  BOOST_TEST(has("crius_criusd_decide_seconds_total 0.75"));
  BOOST_TEST(has("crius_criusd_actions_total{kind=\"checkpoint\"} 2"));
  BOOST_TEST(has("crius_criusd_action_failures_total{kind=\"requeue\"} 1"));
  BOOST_TEST(has("crius_criusd_jobs{state=\"RUNNING\"} 1"));
  BOOST_TEST(t.find("state=\"PENDING\"") == std::string::npos);  // gauges: the last round only
  r.jobs = {a, b, c};
  m.round_decided(r, 0.1);
  const std::string t2 = m.text();
  BOOST_TEST(t2.find("crius_criusd_jobs_not_considered{reason=\"reservation\"} 1") != std::string::npos, t2);
  BOOST_TEST(t2.find("crius_criusd_jobs_not_considered{reason=\"dependency\"} 1") != std::string::npos);
  BOOST_TEST(t2.find("maint") == std::string::npos);
  const std::regex sample(R"(^[a-z_]+(\{[a-z_]+="[^"\\]*"\})? [0-9.e+-]+$)"), comment(R"(^# (HELP|TYPE) [a-z_]+ .+$)");
  std::istringstream lines(t2);
  int samples = 0;
  for (std::string line; std::getline(lines, line);) {
    BOOST_TEST((std::regex_match(line, sample) || std::regex_match(line, comment)), line);
    samples += line[0] != '#';
  }
  BOOST_TEST(samples >= 8);
}

// A record of a job of 1000 iterations at 2 s each whose time limit crius set with factor 2:
// 72 minutes.
job::Record time_limited_record() {
  job::Record rec = make_record("a100:1x8:1", "a100");
  rec.request.iters = 1000;
  rec.time_limit_factor = 2;
  rec.time_limit_min = 72;
  BOOST_TEST_REQUIRE(job::time_limit_minutes(1000, rec.iter_time_s, 2, 0) == 72);
  return rec;
}

// Where Slurm enforces limits, a limit crius set is at most the MaxWall of the job's QOS, of its
// association and each parent, and of its partition's QOS; a pending job whose crius-set limit
// is over one (Slurm's reason says so) gets it set again within it, in the same Cell.
BOOST_FIXTURE_TEST_CASE(a_time_limit_crius_set_stays_within_the_maxwall, Fixture) {
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 0), node("a100-2", "a100", 8), node("v100-1", "v100", 8),
             node("v100-2", "v100", 8)};
  job::Record rec = time_limited_record();
  s.jobs = {slurm_job(1, "PENDING", job::to_text(rec))};
  SlurmJob& j = s.jobs[0];
  j.time_limit_s = 72 * 60;
  j.qos = "short";
  j.assoc_id = 3;
  j.reason = "QOSMaxWallDurationPerJobLimit";
  s.enforce_limits = true;
  s.qos = {SlurmQos{1, "short", {}, {}, {}, {}, {}, 3600}, SlurmQos{2, "part", {}, {}, {}, {}, {}, 1200}};
  s.assocs = {SlurmAssoc{2, 0, "", "lab", "", 0, 0, {}, {}, {}, -1}, SlurmAssoc{3, 2, "alice", "lab", "", 1001, 0, {}, {}, {}, -1}};
  s.partitions = {SlurmPartition{"a100", {}, {}, {}, {}, {}, 0, 0, true, {}, {}, ""}};
  Controller c(*cluster, {});
  auto limit_set = [&]() -> std::int64_t {
    auto round = c.decide(s);
    BOOST_TEST_REQUIRE(round.ok(), why(round));
    if (round->actions.empty()) return 0;
    BOOST_TEST_REQUIRE(round->actions.size() == 1u);
    const Action& a = round->actions[0];
    BOOST_TEST(to_string(a.kind) == std::string("update_pending"));
    BOOST_TEST((a.to == rec.cell));
    BOOST_TEST(job::parse_record(a.after)->value().time_limit_min == a.time_limit_min);
    return a.time_limit_min;
  };
  BOOST_TEST(limit_set() == 60);  // the QOS's MaxWall
  s.assocs[0].max_wall_s = 1800;  // the parent association's
  BOOST_TEST(limit_set() == 30);
  s.partitions[0].qos = "part";  // the partition QOS's
  BOOST_TEST(limit_set() == 20);
  s.partitions[0].max_time_s = 600;  // the partition's MaxTime
  BOOST_TEST(limit_set() == 10);
  s.enforce_limits = false;  // Slurm does not enforce the QOS and association limits
  BOOST_TEST(limit_set() == 10);
  s.partitions[0].max_time_s = 0;
  BOOST_TEST(limit_set() == 0);  // crius's 72 minutes are within every limit: nothing to send

  // A limit that is not crius's (the user's own, over the QOS's MaxWall) is the user's to
  // change: the job is not for criusd's round. So is one crius set and someone changed since.
  s.enforce_limits = true;
  j.time_limit_s = 100 * 60;
  auto changed = c.decide(s);
  BOOST_TEST_REQUIRE(changed.ok(), why(changed));
  BOOST_TEST(changed->actions.empty());
  BOOST_TEST(changed->jobs.at(0).not_considered == "not_for_resources");
  j.time_limit_s = 72 * 60;
  rec.time_limit_factor = 0;
  rec.time_limit_min = 0;
  j.admin_comment = job::to_text(rec);
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  BOOST_TEST(round->jobs.at(0).not_considered == "not_for_resources");
}

// A job whose time limit crius set (the record's time_limit_factor) gets it again in each new
// Cell criusd gives it: job::time_limit_minutes of the iterations still to run in the new
// Cell's estimate, at most the partition's MaxTime. A job whose limit is its own keeps it.
BOOST_FIXTURE_TEST_CASE(a_time_limit_crius_set_follows_the_cell, Fixture) {
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  job::Record rec = time_limited_record();
  s.jobs = {slurm_job(1, "RUNNING", "", {"a100-1"}), slurm_job(2, "RUNNING", "", {"a100-2"}),
            slurm_job(3, "PENDING", job::to_text(rec))};
  s.jobs[2].time_limit_s = 72 * 60;
  s.partitions = {SlurmPartition{"v100", {}, {}, {}, {}, {}, 0, 0, true, {}, {}, ""}};
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  const Action& a = round->actions[0];
  BOOST_TEST(a.to.gpu == "v100");
  const job::Record moved = job::parse_record(a.after)->value();
  BOOST_TEST(moved.time_limit_factor == 2);
  BOOST_TEST(a.time_limit_min == job::time_limit_minutes(1000, moved.iter_time_s, 2, 0));
  BOOST_TEST(moved.time_limit_min == a.time_limit_min);  // what crius set last
  BOOST_TEST(to_json(a)["time_limit_min"] == a.time_limit_min);

  // The partition's MaxTime bounds it (its limit now, 72 minutes, is within it: criusd moves
  // no job to another partition whose MaxTime its limit is over, crius's or not: there it could
  // end before its iterations do).
  BOOST_TEST_REQUIRE(a.time_limit_min > 80);
  s.partitions[0].max_time_s = 80 * 60;
  auto capped = c.decide(s);
  BOOST_TEST_REQUIRE(capped.ok(), why(capped));
  BOOST_TEST_REQUIRE(capped->actions.size() == 1u);
  BOOST_TEST(capped->actions[0].time_limit_min == 80);
  s.partitions[0].max_time_s = 60 * 60;
  auto shorter = c.decide(s);
  BOOST_TEST_REQUIRE(shorter.ok(), why(shorter));
  BOOST_TEST(shorter->actions.empty());
  s.partitions[0].max_time_s = 0;

  // A limit its owner changed since crius set it is theirs: left as it is, and the record
  // forgets crius's.
  s.jobs[2].time_limit_s = 30 * 60;
  auto changed = c.decide(s);
  BOOST_TEST_REQUIRE(changed.ok(), why(changed));
  BOOST_TEST_REQUIRE(changed->actions.size() == 1u);
  BOOST_TEST(changed->actions[0].time_limit_min == 0);
  const job::Record forgot = job::parse_record(changed->actions[0].after)->value();
  BOOST_TEST(forgot.time_limit_factor == 0);
  BOOST_TEST(forgot.time_limit_min == 0);

  // The job's own limit (no factor in the record) is left as it is.
  rec.time_limit_factor = 0;
  rec.time_limit_min = 0;
  s.jobs[2].admin_comment = job::to_text(rec);
  auto own = c.decide(s);
  BOOST_TEST_REQUIRE(own.ok(), why(own));
  BOOST_TEST_REQUIRE(own->actions.size() == 1u);
  BOOST_TEST(own->actions[0].time_limit_min == 0);
  BOOST_TEST(!to_json(own->actions[0]).contains("time_limit_min"));

  // A move of a running job: when it finishes, the limit counts the iterations still to run.
  job::Record moving = moving_record({});
  moving.request.iters = 1000;
  moving.time_limit_factor = 2;
  moving.time_limit_min = 100;
  Snapshot m = moving_snapshot(moving);
  m.jobs[0].time_limit_s = 100 * 60;
  as_requeued_held(m.jobs[0], 131);
  moving.move->phase = "requeued";
  m.jobs[0].admin_comment = job::to_text(moving);
  m.jobs[0].comment = job::progress_comment({400, 1000});
  m.now = 140;
  auto fin = c.decide(m);
  BOOST_TEST_REQUIRE(fin.ok(), why(fin));
  BOOST_TEST_REQUIRE(fin->actions.size() == 1u);
  BOOST_TEST(to_string(fin->actions[0].kind) == std::string("finish_move"));
  const job::Record done = job::parse_record(fin->actions[0].after)->value();
  BOOST_TEST(done.cell.gpu == "a100");
  BOOST_TEST(fin->actions[0].time_limit_min == job::time_limit_minutes(600, done.iter_time_s, 2, 0));
}
