// criusd without Slurm: the job record job_submit_crius writes, and one round of the
// controller on small snapshots (the real-Slurm flow is tests/slurm/criusd_move.sh).
#define BOOST_TEST_MODULE criusd
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>

#include "slurm_plugin/criusd/controller.h"

using namespace crius;
using namespace crius::slurm;

namespace {

// The message of a Result, or "" (a Boost.Test message is evaluated even on success).
template <typename R>
std::string why(const R& r) {
  return r.ok() ? std::string() : r.error();
}

std::string top() {
  const char* t = std::getenv("TOP");
  return t ? t : ".";
}

std::string record(const std::string& cell, const std::string& partition, const std::string& extra = "") {
  return R"({"crius":1,"request":{"model":"bert__1.3B","model_file":false,"global_batch":256,)"
         R"("runtime":"megatron","cell":"auto")" + extra + R"(},"chosen":{"cell":")" + cell +
         R"(","partition":")" + partition + R"(","iter_time_s":2.0},"top":[]})";
}

SlurmNode node(const std::string& name, const std::string& gpu, int used) {
  return SlurmNode{name, {gpu}, gpu, 8, used, true};
}

SlurmJob job(std::uint32_t id, const std::string& state, const std::string& comment,
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
  auto r = parse_record(record("a100:1x8:2", "a100"));
  BOOST_TEST_REQUIRE(r.has_value());
  BOOST_TEST_REQUIRE(r->ok(), why(*r));
  const JobRecord& rec = r->value();
  BOOST_TEST(rec.model == "bert__1.3B");
  BOOST_TEST(rec.global_batch == 256);
  BOOST_TEST(!rec.pinned);
  BOOST_TEST((rec.cell == JobCell{"a100", "a100", 1, 8, 2}));

  JobRecord moved = rec;
  moved.move = JobRecord::Move{{"v100", "v100", 1, 4, 1}, "signalled", 42, "fit"};
  auto back = parse_record(format_record(moved));
  BOOST_TEST_REQUIRE((back && back->ok()));
  BOOST_TEST_REQUIRE(back->value().move.has_value());
  BOOST_TEST((back->value().move->target == JobCell{"v100", "v100", 1, 4, 1}));
  BOOST_TEST(back->value().move->phase == "signalled");
  BOOST_TEST(back->value().move->since == 42);
  // Fields criusd does not know survive a rewrite.
  BOOST_TEST(format_record(moved).find("\"runtime\":\"megatron\"") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(records_that_are_not_crius_or_broken) {
  BOOST_TEST(!parse_record("").has_value());
  BOOST_TEST(!parse_record("user comment").has_value());
  BOOST_TEST(!parse_record(R"({"other":1})").has_value());
  for (const char* bad : {R"({"crius":1})", R"({"crius":1,"request":{"model":"x","global_batch":1},"chosen":{"cell":"a100:0x8:1","partition":"a100"}})",
                          R"({"crius":1,"request":{"model":"x","global_batch":1},"chosen":{"cell":"a100","partition":"a100"}})"}) {
    auto r = parse_record(bad);
    BOOST_TEST_REQUIRE(r.has_value(), bad);
    BOOST_TEST(!r->ok(), bad);
  }
  auto pinned = parse_record(record("v100:1x8:1", "v100", R"(,"partitions":"v100")"));
  BOOST_TEST_REQUIRE((pinned && pinned->ok()));
  BOOST_TEST(pinned->value().pinned);
}

BOOST_FIXTURE_TEST_CASE(pending_job_moves_to_the_idle_type, Fixture) {
  // a100 is full with a job criusd does not know; v100 is idle.
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  s.jobs = {job(1, "RUNNING", "", {"a100-1"}), job(2, "RUNNING", "", {"a100-2"}),
            job(3, "PENDING", record("a100:1x8:1", "a100"))};
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  const Action& a = round->actions[0];
  BOOST_TEST(a.job == 3u);
  BOOST_TEST(to_string(a.kind) == std::string("update_pending"));
  BOOST_TEST(a.to.gpu == "v100");
  BOOST_TEST(a.to.partition == "v100");
  auto rec = parse_record(a.record);
  BOOST_TEST_REQUIRE((rec && rec->ok()));
  BOOST_TEST(rec->value().cell.partition == "v100");
}

BOOST_FIXTURE_TEST_CASE(jobs_without_record_pinned_or_broken_are_never_touched, Fixture) {
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 8), node("a100-2", "a100", 8), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  s.jobs = {job(1, "RUNNING", "", {"a100-1"}), job(2, "RUNNING", "", {"a100-2"}),
            job(3, "PENDING", record("a100:1x8:1", "a100", R"(,"partitions":"a100")")),
            job(4, "PENDING", R"({"crius":1,"request":{}})"), job(5, "PENDING", "")};
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST(round->actions.empty());
  BOOST_TEST(round->jobs.size() == 2u);  // 3 (pinned) and 4 (broken record) are reported
}

BOOST_FIXTURE_TEST_CASE(a_move_in_flight_continues_after_a_restart, Fixture) {
  JobRecord rec = parse_record(record("v100:1x8:1", "v100"))->value();
  rec.move = JobRecord::Move{{"a100", "a100", 1, 8, 1}, "signalled", 100, "upgrade"};
  Snapshot s;
  s.nodes = {node("a100-1", "a100", 0), node("a100-2", "a100", 0), node("v100-1", "v100", 8),
             node("v100-2", "v100", 0)};
  SlurmJob j = job(7, "RUNNING", format_record(rec), {"v100-1"});
  j.partition = "v100";
  s.jobs = {j};
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
  BOOST_TEST(parse_record(r2->actions[0].record)->value().move->phase == "requeued");

  // Requeued and pending: the target Cell is applied once and the move cleared.
  s.jobs[0].state = "PENDING";
  s.jobs[0].nodes.clear();
  s.jobs[0].admin_comment = r2->actions[0].record;
  auto r3 = c.decide(s);
  BOOST_TEST_REQUIRE(r3.ok(), why(r3));
  BOOST_TEST_REQUIRE(r3->actions.size() == 1u);
  BOOST_TEST(to_string(r3->actions[0].kind) == std::string("finish_move"));
  BOOST_TEST(r3->actions[0].to.gpu == "a100");
  auto done = parse_record(r3->actions[0].record)->value();
  BOOST_TEST(!done.move.has_value());
  BOOST_TEST(done.cell.gpu == "a100");
}

BOOST_FIXTURE_TEST_CASE(bad_criusd_section_names_the_key, Fixture) {
  auto t = toml::parse("[criusd]\nintervall_s = 3\n");
  cluster->table = t;
  auto o = load_controller_options(*cluster);
  BOOST_TEST_REQUIRE(!o.ok());
  BOOST_TEST(o.error().find("intervall_s") != std::string::npos);
  cluster->table = toml::parse("[criusd]\ncheckpoint_signal = \"KILLME\"\n");
  BOOST_TEST(!load_controller_options(*cluster).ok());
  cluster->table = toml::parse("[criusd]\ninterval_s = 5\npolicy = \"gavel\"\n");
  auto good = load_controller_options(*cluster);
  BOOST_TEST_REQUIRE(good.ok(), why(good));
  BOOST_TEST(good->interval_s == 5);
  BOOST_TEST(good->policy == "gavel");
}

BOOST_FIXTURE_TEST_CASE(running_job_grows_when_gpus_are_idle, Fixture) {
  // One job runs on 2 of the 16 A100s with many iterations left; everything else is idle.
  Snapshot s;
  s.now = 5000;
  s.nodes = {node("a100-1", "a100", 2), node("a100-2", "a100", 0), node("v100-1", "v100", 0),
             node("v100-2", "v100", 0)};
  s.jobs = {job(9, "RUNNING", record("a100:1x2:1", "a100", R"(,"iters":100000)"), {"a100-1"}, "gres:gpu:2")};
  s.jobs[0].start_time = 4000;
  Controller c(*cluster, {});
  auto round = c.decide(s);
  BOOST_TEST_REQUIRE(round.ok(), why(round));
  BOOST_TEST_REQUIRE(round->actions.size() == 1u);
  const Action& a = round->actions[0];
  BOOST_TEST(a.job == 9u);
  BOOST_TEST(to_string(a.kind) == std::string("checkpoint"));
  BOOST_TEST(a.to.nodes * a.to.gpus_per_node > 2, "target " << a.to.gpus_per_node << " x " << a.to.nodes);
  auto rec = parse_record(a.record);
  BOOST_TEST_REQUIRE((rec && rec->ok()));
  BOOST_TEST_REQUIRE(rec->value().move.has_value());
  BOOST_TEST(rec->value().move->phase == "signalled");
}
