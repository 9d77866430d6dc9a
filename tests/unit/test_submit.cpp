// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// job_submit's decision on a loaded cluster: criusd's free-GPU report (its text form and
// its bounds), the Cell chosen from it, and the site's and the user's maximum.
#define BOOST_TEST_MODULE submit
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "job/record.h"
#include "slurm_plugin/free_gpus.h"
#include "slurm_plugin/request.h"
#include "slurm_plugin/submit.h"

using namespace crius;
using namespace crius::slurm;

namespace {

template <typename R>
std::string why(const R& r) {
  return r.ok() ? std::string() : r.error();
}

std::string top() {
  const char* t = std::getenv("TOP");
  return t ? t : ".";
}

// etc/crius/crius.toml: partitions a100 and v100, 2 nodes x 8 GPUs each.
Loaded conf() {
  auto c = load_config(top() + "/etc/crius/crius.toml");
  BOOST_TEST_REQUIRE(c.ok(), why(c));
  return std::move(*c);
}

JobRequest bert() {
  JobRequest r;
  r.model = "bert__1.3B";
  r.global_batch = 256;
  return r;
}

// etc/crius copied to a folder of the test's: load() reads its crius.toml with `lines` under
// [job_submit].
struct ConfWith {
  ConfWith() {
    std::filesystem::create_directories(dir);
    std::filesystem::copy(top() + "/etc/crius", dir, std::filesystem::copy_options::recursive);
    std::ifstream in(top() + "/etc/crius/crius.toml");
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ~ConfWith() { std::filesystem::remove_all(dir); }
  Result<Loaded> load(const std::string& lines) const {
    std::ofstream(dir + "/crius.toml") << text << "\n[job_submit]\n" << lines << "\n";
    return load_config(dir + "/crius.toml");
  }
  const std::string dir = "/tmp/crius-test-submit-" + std::to_string(getpid());
  std::string text;
};

FreeGpus report(std::vector<int> a100, std::vector<int> v100) {
  FreeGpus f;
  f.time = 1000;
  f.interval_s = 60;
  f.partitions = {{"a100", std::move(a100)}, {"v100", std::move(v100)}};
  return f;
}

}  // namespace

BOOST_AUTO_TEST_CASE(free_gpus_text_round_trip_and_bounds) {
  FreeGpus f = report({8, 3}, {0, 0});
  f.waiting = 7;
  auto back = parse_free_gpus(to_text(f), "r");
  BOOST_TEST_REQUIRE(back.ok(), why(back));
  BOOST_TEST(back->time == 1000);
  BOOST_TEST(back->interval_s == 60);
  BOOST_TEST(back->waiting == f.waiting);
  BOOST_TEST(back->partitions == f.partitions);

  auto bad = [](const std::string& text) {
    auto r = parse_free_gpus(text, "F");
    return r.ok() ? std::string("accepted") : r.error();
  };
  BOOST_TEST(bad("") == "F: empty (expected \"crius-free-gpus 6\")");
  BOOST_TEST(bad("crius-free-gpus 7\n") == "F:1: not a crius free-GPU report (expected \"crius-free-gpus 6\")");
  BOOST_TEST(bad("crius-free-gpus 10\n") == "F:1: not a crius free-GPU report (expected \"crius-free-gpus 6\")");
  BOOST_TEST(bad("crius-free-gpus 3\ntime 5\ninterval_s 60\nwaiting -1\n") == "F:4: waiting must be a whole number of jobs");
  BOOST_TEST(bad("crius-free-gpus 1\ntime 5\n") == "F: no time or interval_s line");
  BOOST_TEST(bad("crius-free-gpus 1\ntime 5\ninterval_s 60\npartition a 8 -1\n") ==
             "F:4: free GPUs of a node must be a whole number from 0 to 64");
  BOOST_TEST(bad("crius-free-gpus 1\ntime 5\ninterval_s 60\nnode x\n") == "F:4: unknown line 'node x'");
  BOOST_TEST(bad(std::string(kMaxFreeGpusBytes + 1, '#')).find("larger than") != std::string::npos);
  std::string many = "crius-free-gpus 1\ntime 5\ninterval_s 60\npartition a";
  for (int i = 0; i <= kMaxFreeGpusNodes; ++i) many += " 1";
  BOOST_TEST(bad(many) == "F:4: more than 100000 nodes");

  // Fresh for three rounds and a minute.
  BOOST_TEST(f.fresh(1000 + 3 * 60 + 60));
  BOOST_TEST(!f.fresh(1000 + 3 * 60 + 61));

  // Version 2: who each partition lets in.
  f.access = {{"a100", true, 2, 3600, {"lab", "ml"}, {}, {}, {"scavenger"}, true, {100}, {1001, 1002}},
              {"v100", false, 0, 0, {}, {"banned"}, {"normal"}, {}, false, {}, {}}};
  f.qos_limits = {{"gpu8", {8, -1}}, {"short", {-1, -1, 1800}}};
  f.assoc_limits = {{1001, "lab", "", {-1, 2}, "gpu8", {}}, {1002, "ml", "a100", {4, -1, 600}, "", {}}};
  auto v2 = parse_free_gpus(to_text(f), "r");
  BOOST_TEST_REQUIRE(v2.ok(), why(v2));
  BOOST_TEST((v2->access == f.access));
  BOOST_TEST((v2->qos_limits == f.qos_limits));
  BOOST_TEST((v2->assoc_limits == f.assoc_limits));
  BOOST_TEST(bad("crius-free-gpus 2\ntime 5\ninterval_s 60\nqos a gpus=x nodes=1\n") ==
             "F:4: qos: expected gpus=N nodes=N, got 'gpus=x nodes=1'");
  // Version 4 adds the MaxWall (wall_s=) last; a version 3 line has none.
  auto v3 = parse_free_gpus("crius-free-gpus 3\ntime 5\ninterval_s 60\nqos a gpus=1 nodes=1\n"
                            "assoc 7 lab - gpus=-1 nodes=-1 default_qos=a\n", "r");
  BOOST_TEST_REQUIRE(v3.ok(), why(v3));
  BOOST_TEST(v3->qos_limits.at(0).second.wall_s == -1);
  BOOST_TEST(v3->assoc_limits.at(0).limit.wall_s == -1);
  BOOST_TEST(bad("crius-free-gpus 4\ntime 5\ninterval_s 60\nqos a gpus=1 nodes=1 wall=60\n") ==
             "F:4: qos: expected wall_s=N, got 'wall=60'");
  BOOST_TEST(bad("crius-free-gpus 4\ntime 5\ninterval_s 60\nassoc 7 lab - gpus=-1 nodes=-1 default_qos=a wall_s=-2\n") ==
             "F:4: assoc: expected wall_s=N, got 'wall_s=-2'");
  // Version 5 adds what each association may still hold of each GPU type (left:TYPE=N).
  f.assoc_limits = {{1001, "lab", "", {-1, -1}, "", {{"a100", 0}, {"h100", 16}}}};
  auto v5 = parse_free_gpus(to_text(f), "r");
  BOOST_TEST_REQUIRE(v5.ok(), why(v5));
  BOOST_TEST((v5->assoc_limits == f.assoc_limits));
  BOOST_TEST(to_text(f).find("wall_s=-1 left:a100=0 left:h100=16\n") != std::string::npos);
  Submitter lab{1001, 100, "lab", "", 0, false};
  BOOST_TEST(!v5->typed_room("a100", lab, "a100", 1));
  BOOST_TEST(v5->typed_room("h100", lab, "h100", 16));
  BOOST_TEST(!v5->typed_room("h100", lab, "h100", 17));
  BOOST_TEST(v5->typed_room("v100", lab, "v100", 64));  // not bounded
  Submitter other{1002, 100, "lab", "", 0, false};
  BOOST_TEST(v5->typed_room("a100", other, "a100", 8));  // nothing known of this user
  BOOST_TEST(bad("crius-free-gpus 5\ntime 5\ninterval_s 60\nassoc 7 lab - gpus=-1 nodes=-1 default_qos=a wall_s=-1 left:a100\n") ==
             "F:4: assoc: expected left:TYPE=N, got 'left:a100'");
  BOOST_TEST(bad("crius-free-gpus 5\ntime 5\ninterval_s 60\nassoc 7 lab - gpus=-1 nodes=-1 default_qos=a wall_s=-1 left:=3\n") ==
             "F:4: assoc: expected left:TYPE=N, got 'left:=3'");
  f.qos_limits.clear();
  f.assoc_limits.clear();
  BOOST_TEST(bad("crius-free-gpus 2\ntime 5\ninterval_s 60\naccess a up=1\n") == "F:4: unknown line 'access a up=1'");
  BOOST_TEST(bad("crius-free-gpus 2\ntime 5\ninterval_s 60\naccess a up=1 max_nodes=0 max_time_s=0 allow_accounts= "
                 "deny_accounts= allow_qos= deny_qos= groups=2 allow_gids= allow_uids=\n")
                 .find("F:4: access a: bad groups") == 0);
  BOOST_TEST(bad("crius-free-gpus 2\ntime 5\ninterval_s 60\naccess a up=1 max_nodes=0 max_time_s=0 allow_accounts= "
                 "deny_accounts= allow_qos= deny_qos= groups=1 allow_gids=x allow_uids=\n")
                 .find("F:4: access a: bad allow_gids") == 0);
  // Who is let in.
  Submitter alice{1001, 50, "lab", "normal", 0, false}, bob{2000, 100, "", "", 0, false},
      eve{3000, 3000, "other", "", 0, false}, root{0, 0, "other", "", 0, true};
  BOOST_TEST(f.refusal("a100", alice, 2, 8) == "");
  BOOST_TEST(f.refusal("a100", alice, 3, 8) == "partition a100 takes jobs of at most 2 nodes");
  BOOST_TEST(f.refusal("a100", bob, 1, 8) == "");  // no account named: Slurm's to check; gid 100 is allowed
  BOOST_TEST(f.refusal("a100", eve, 1, 8) == "account other is not in the AllowAccounts of partition a100");
  eve.account = "lab";
  BOOST_TEST(f.refusal("a100", eve, 1, 8) == "the user is in none of the AllowGroups of partition a100");
  root.account = "lab";
  BOOST_TEST(f.refusal("a100", root, 1, 8) == "");
  alice.time_limit_s = 7200;
  BOOST_TEST(f.refusal("a100", alice, 1, 8) ==
             "the job's time limit is over the longest partition a100 allows (its MaxTime, or its QOS's MaxWall)");
  BOOST_TEST(f.refusal("v100", bob, 1, 8) == "partition v100 is not up");
  BOOST_TEST(f.refusal("h100", eve, 9, 8) == "");  // nothing known of it
}

BOOST_AUTO_TEST_CASE(free_gpus_fit_and_take_best_fit) {
  FreeGpus f = report({8, 3}, {0, 0});
  estimator::Cell c{"a100", "a100", 1, 2, 0};
  BOOST_TEST(f.fits(c));
  f.take(c);  // from the node with the fewest free GPUs that holds 2
  BOOST_TEST((f.partitions[0].second == std::vector<int>{8, 1}));
  BOOST_TEST(!f.fits(estimator::Cell{"a100", "a100", 2, 2, 0}));
  BOOST_TEST(f.fits(estimator::Cell{"a100", "a100", 1, 8, 0}));
  BOOST_TEST(!f.fits(estimator::Cell{"v100", "v100", 1, 1, 0}));
  BOOST_TEST(!f.fits(estimator::Cell{"h100", "h100", 1, 1, 0}));
  BOOST_TEST(f.free_gpus("a100") == 9);
}

// Version 6: when a reservation begins on each node. A job whose time limit would cross it does
// not start there (Slurm's rule), so a Cell fits only on the nodes clear until the job would end.
BOOST_AUTO_TEST_CASE(free_gpus_reservations_ahead) {
  FreeGpus f = report({8, 8}, {8, 0});
  f.reserved_from = {{"a100", {0, 1000 + 7200}}};  // a100's second node: maintenance in 2 hours
  auto back = parse_free_gpus(to_text(f), "r");
  BOOST_TEST_REQUIRE(back.ok(), why(back));
  BOOST_TEST(back->reserved_from == f.reserved_from);
  const estimator::Cell two{"a100", "a100", 2, 8, 0}, one{"a100", "a100", 1, 8, 0};
  BOOST_TEST(f.fits(two, 1000 + 3600));      // an hour: ends before it
  BOOST_TEST(f.fits(two, 1000 + 7200));      // ends as it begins
  BOOST_TEST(!f.fits(two, 1000 + 3 * 86400));  // three days: one node only
  BOOST_TEST(f.fits(one, 1000 + 3 * 86400));
  BOOST_TEST(!f.fits(two));                  // no time limit: never ends
  BOOST_TEST(f.fits(estimator::Cell{"v100", "v100", 1, 8, 0}));  // no reservation there
  f.take(one, 1000 + 3 * 86400);             // from the node clear of it, though both hold 8
  BOOST_TEST((f.partitions[0].second == std::vector<int>{0, 8}));

  auto bad = [](const std::string& text) {
    auto r = parse_free_gpus(text, "F");
    return r.ok() ? std::string("accepted") : r.error();
  };
  const std::string head = "crius-free-gpus 6\ntime 5\ninterval_s 60\npartition a 8 8\n";
  BOOST_TEST(bad(head + "reserved a 0 100\n") == "accepted");
  BOOST_TEST(bad(head + "reserved a 100\n") == "F: reserved a: not one start per node of a partition line");
  BOOST_TEST(bad(head + "reserved b 0 100\n") == "F: reserved b: not one start per node of a partition line");
  BOOST_TEST(bad(head + "reserved a 0 -1\n") == "F:5: a reservation's start must be Unix seconds");
}

// A job given a Cell at submission avoids nodes whose reservation its time limit would cross:
// its own limit, or the longest its partition allows without one.
BOOST_AUTO_TEST_CASE(a_cell_that_fits_now_is_clear_of_reservations_ahead) {
  Loaded c = conf();
  c.config.objective = Objective::throughput;
  FreeGpus f = report({8, 8}, {0, 0});
  auto open = decide(bert(), c, "", &f);
  BOOST_TEST_REQUIRE(open.ok(), why(open));
  BOOST_TEST(open->chosen.cell.gpu == "a100");
  BOOST_TEST(open->chosen.cell.nodes == 2, "premise: both a100 nodes, not " << estimator::to_string(open->chosen.cell));
  f.reserved_from = {{"a100", {0, f.time + 7200}}};
  f.access = {{"a100", true, 0, 4 * 86400, {}, {}, {}, {}, false, {}, {}},
              {"v100", true, 0, 4 * 86400, {}, {}, {}, {}, false, {}, {}}};
  DecisionCache cache;
  Submitter who{1001, 100, "lab", "", 3 * 86400, false};
  auto three_days = cache.decide(bert(), c, "", &f, &who);
  BOOST_TEST_REQUIRE(three_days.ok(), why(three_days));
  BOOST_TEST((three_days->load == Load::fits));
  BOOST_TEST(three_days->chosen.cell.nodes == 1);
  BOOST_TEST(three_days->until == f.time + 3 * 86400);
  who.time_limit_s = 3600;  // an hour: the reservation is no bar
  auto hour = cache.decide(bert(), c, "", &f, &who);
  BOOST_TEST_REQUIRE(hour.ok(), why(hour));
  BOOST_TEST(hour->chosen.cell.nodes == 2);
  who.time_limit_s = 0;  // none of its own: the partition's MaxTime of 4 days
  auto none = cache.decide(bert(), c, "", &f, &who);
  BOOST_TEST_REQUIRE(none.ok(), why(none));
  BOOST_TEST(none->chosen.cell.nodes == 1);
  // Counted from the submission, not from the report: an hour's job submitted 90 minutes after
  // criusd's report would end after the reservation begins.
  who.time_limit_s = 3600;
  who.now = f.time + 5400;
  auto later = cache.decide(bert(), c, "", &f, &who);
  BOOST_TEST_REQUIRE(later.ok(), why(later));
  BOOST_TEST(later->chosen.cell.nodes == 1);
  BOOST_TEST(later->until == f.time + 5400 + 3600);
}

BOOST_AUTO_TEST_CASE(free_gpus_file_is_read_only_from_a_safe_file) {
  const std::string dir = std::filesystem::temp_directory_path() / ("crius-free-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/free";
  auto none = read_free_gpus(path);
  BOOST_TEST_REQUIRE(none.ok(), why(none));
  BOOST_TEST(!none->has_value());
  BOOST_TEST_REQUIRE(write_free_gpus(path, report({1, 2}, {3, 4})).ok());
  auto r = read_free_gpus(path);
  BOOST_TEST_REQUIRE(r.ok(), why(r));
  BOOST_TEST_REQUIRE(r->has_value());
  BOOST_TEST((*r)->free_gpus("v100") == 7);
  std::filesystem::permissions(path, std::filesystem::perms::others_write, std::filesystem::perm_options::add);
  r = read_free_gpus(path);
  BOOST_TEST(why(r) == path + ": writable by its group or by others");
  std::filesystem::remove(path);
  std::filesystem::create_directory(path);
  r = read_free_gpus(path);
  BOOST_TEST(!r.ok());
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(a_loaded_cluster_gets_the_best_cell_that_starts_now) {
  Loaded c = conf();
  c.config.objective = Objective::throughput;  // the fastest, whoever waits
  auto empty = decide(bert(), c, "");
  BOOST_TEST_REQUIRE(empty.ok(), why(empty));
  BOOST_TEST((empty->load == Load::unknown));
  const estimator::Cell best = empty->chosen.cell;
  BOOST_TEST(best.gpus() == 16, "premise: on an empty cluster the job gets a whole partition, not " << best.gpus());

  // One node of each type busy: the best Cell that fits the other two nodes.
  FreeGpus f = report({0, 8}, {8, 0});
  auto loaded = decide(bert(), c, "", &f);
  BOOST_TEST_REQUIRE(loaded.ok(), why(loaded));
  BOOST_TEST((loaded->load == Load::fits));
  BOOST_TEST(f.fits(loaded->chosen.cell));
  BOOST_TEST(loaded->chosen.cell.nodes == 1);
  auto ranking = rank(bert(), c, "");
  BOOST_TEST_REQUIRE(ranking.ok(), why(ranking));
  for (const auto& e : ranking->cells)
    if (f.fits(e.cell)) BOOST_TEST(e.samples_per_s <= loaded->chosen.samples_per_s);
  BOOST_TEST(loaded->summary.find("(fits the GPUs free now)") != std::string::npos);

  // Nothing free: the best Cell, which waits (criusd re-decides it every round).
  FreeGpus full = report({0, 0}, {0, 0});
  auto waits = decide(bert(), c, "", &full);
  BOOST_TEST_REQUIRE(waits.ok(), why(waits));
  BOOST_TEST((waits->load == Load::none_fits));
  BOOST_TEST((waits->chosen.cell == best));

  // The cache ranks once and chooses on each load.
  DecisionCache cache;
  auto a = cache.decide(bert(), c, "", &f);
  auto b = cache.decide(bert(), c, "", nullptr);
  BOOST_TEST(cache.hits() == 1u);
  BOOST_TEST_REQUIRE((a.ok() && b.ok()));
  BOOST_TEST((a->chosen.cell == loaded->chosen.cell));
  BOOST_TEST((b->chosen.cell == best));
}

BOOST_AUTO_TEST_CASE(the_users_maximum_bounds_the_cell_and_is_recorded) {
  Loaded c = conf();
  JobRequest r = bert();
  auto parsed = parse_max_gpus("4");
  BOOST_TEST_REQUIRE(parsed.ok(), why(parsed));
  r.max_gpus = *parsed;
  auto d = decide(r, c, "");
  BOOST_TEST_REQUIRE(d.ok(), why(d));
  BOOST_TEST(d->chosen.cell.gpus() <= 4);
  for (const auto& e : d->ranked) BOOST_TEST(e.cell.gpus() <= 4);
  auto back = job::parse_record(job::to_text(d->record));
  BOOST_TEST_REQUIRE((back.has_value() && *back));
  BOOST_TEST(back->value().request.max_gpus.value_or(0) == 4);

  // The smaller of the site's and the user's maximum applies, and the message names it.
  // gpt3-13b needs 8 GPUs.
  c.config.max_gpus = 4;
  r.model = "gpt3-13b";
  r.max_gpus = 8;
  d = decide(r, c, "");
  BOOST_TEST_REQUIRE(!d.ok());
  BOOST_TEST(d.error().find("within [job_submit] max_gpus 4") != std::string::npos, d.error());
  c.config.max_gpus = 0;
  r.max_gpus = 4;
  d = decide(r, c, "");
  BOOST_TEST_REQUIRE(!d.ok());
  BOOST_TEST(d.error().find("within --crius-max-gpus=4") != std::string::npos, d.error());

  BOOST_TEST(why(parse_max_gpus("0")) == "--crius-max-gpus: '0' is not a whole number from 1 to 1000000");
  BOOST_TEST(!parse_max_gpus("2x").ok());
}

BOOST_AUTO_TEST_CASE(the_jobs_checkpoint_grace_is_parsed_bounded_and_recorded) {
  const std::string name = option_env_name(Option::checkpoint_grace);
  const std::string model = option_env_name(Option::model) + "=bert__1.3B";
  const std::string batch = option_env_name(Option::global_batch) + "=256";
  const std::string grace = name + "=120";
  auto r = parse_request({model, batch, grace});
  BOOST_TEST_REQUIRE(r.ok(), why(r));
  BOOST_TEST(r->checkpoint_grace_s.value_or(0) == 120);
  for (const char* bad : {"0", "86401", "2m", "-5", ""}) {
    auto b = parse_request({model, batch, name + "=" + bad});
    BOOST_TEST_REQUIRE(!b.ok(), bad);
    BOOST_TEST(b.error().find("--crius-checkpoint-grace: ") == 0u, b.error());
  }
  Loaded c = conf();
  auto d = decide(*r, c, "");
  BOOST_TEST_REQUIRE(d.ok(), why(d));
  auto back = job::parse_record(job::to_text(d->record));
  BOOST_TEST_REQUIRE((back.has_value() && *back));
  BOOST_TEST(back->value().request.checkpoint_grace_s.value_or(0) == 120);
  BOOST_TEST(!job::parse_record(R"({"crius":3,"request":{"model":"m","global_batch":8,"checkpoint_grace_s":0}})")->ok());
}

BOOST_AUTO_TEST_CASE(a_deadline_gets_the_smallest_cell_that_meets_it_or_is_flagged_or_refused) {
  Loaded c = conf();
  JobRequest r = bert();
  r.iters = 1000;
  auto ranking = rank(r, c, "");
  BOOST_TEST_REQUIRE(ranking.ok(), why(ranking));
  double fastest = 1e300, slowest = 0;
  for (const auto& e : ranking->cells) {
    fastest = std::min(fastest, e.iter_time_s);
    slowest = std::max(slowest, e.iter_time_s);
  }
  BOOST_TEST_REQUIRE(slowest > 2 * fastest, "premise: Cells of different speeds");

  // A deadline between: the smallest Cell whose 1000 iterations fit in it.
  r.deadline_s = static_cast<long>(1000 * (fastest + slowest) / 2);
  auto d = decide(r, c, "");
  BOOST_TEST_REQUIRE(d.ok(), why(d));
  BOOST_TEST(d->deadline_miss.empty());
  BOOST_TEST(d->chosen.iter_time_s * 1000 <= *r.deadline_s);
  for (const auto& e : ranking->cells)
    if (e.iter_time_s * 1000 <= *r.deadline_s) BOOST_TEST(d->chosen.cell.gpus() <= e.cell.gpus());
  BOOST_TEST(d->record.deadline_met.value_or(false));

  // Too short for any Cell: flagged with the reason, the Cell as without a deadline.
  r.deadline_s = static_cast<long>(1000 * fastest / 2);
  d = decide(r, c, "");
  BOOST_TEST_REQUIRE(d.ok(), why(d));
  BOOST_TEST(!d->record.deadline_met.value_or(true));
  BOOST_TEST(d->deadline_miss.find("no Cell meets --crius-deadline=" + std::to_string(*r.deadline_s) +
                                   "s: the fastest, ") == 0, d->deadline_miss);
  BOOST_TEST(d->deadline_miss.find("for 1000 iterations") != std::string::npos, d->deadline_miss);
  BOOST_TEST(explain_text(r, *d).find(d->deadline_miss) != std::string::npos);
  JobRequest plain = bert();
  plain.iters = 1000;
  auto without = decide(plain, c, "");
  BOOST_TEST_REQUIRE(without.ok(), why(without));
  BOOST_TEST((d->chosen.cell == without->chosen.cell));

  // deadline_miss = "reject": refused with the same reason, and the key named.
  c.config.deadline_miss = DeadlineMiss::reject;
  d = decide(r, c, "");
  BOOST_TEST_REQUIRE(!d.ok());
  BOOST_TEST(d.error_code() == static_cast<int>(Reject::deadline));
  BOOST_TEST(d.error().find("no Cell meets --crius-deadline=") == 0, d.error());
  BOOST_TEST(d.error().find("[job_submit] deadline_miss = \"reject\"") != std::string::npos, d.error());
  DecisionCache cache;
  BOOST_TEST(!cache.decide(r, c, "").ok());
}

BOOST_AUTO_TEST_CASE(deadline_miss_is_read_from_crius_toml) {
  const ConfWith conf_with;
  auto load_with = [&](const std::string& line) { return conf_with.load(line); };
  auto ok = load_with("deadline_miss = \"reject\"");
  BOOST_TEST_REQUIRE(ok.ok(), why(ok));
  BOOST_TEST((ok->config.deadline_miss == DeadlineMiss::reject));
  auto bad = load_with("deadline_miss = \"drop\"");
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.error().find("[job_submit] deadline_miss must be \"flag\" or \"reject\"") != std::string::npos,
             bad.error());
  // metrics_file: an absolute path, or "" for none
  auto metrics = load_with("metrics_file = \"/run/crius/job_submit.prom\"");
  BOOST_TEST_REQUIRE(metrics.ok(), why(metrics));
  BOOST_TEST(metrics->config.metrics_file == "/run/crius/job_submit.prom");
  auto relative = load_with("metrics_file = \"js.prom\"");
  BOOST_TEST_REQUIRE(!relative.ok());
  BOOST_TEST(relative.error().find("[job_submit] metrics_file must be an absolute path") != std::string::npos, relative.error());
}

// [job_submit] work_per_second bounds the estimator work of all submissions together: a bucket
// of ten seconds' worth pays each ranking; empty, a ranking gets a sixteenth of the budget and
// says so; ten seconds in debt, only cached rankings are answered. Time is the test's clock.
BOOST_AUTO_TEST_CASE(work_per_second_bounds_all_submissions_together) {
  Loaded c = conf();
  c.config.work_per_second = 100'000;  // the bucket: 1,000,000 layer visits
  double now = 0;
  DecisionCache cache(64, [&] { return now; });
  auto request = [](int batch) {
    JobRequest r;
    r.model = "gpt3-6.7b";
    r.global_batch = batch;
    return r;
  };
  auto first = cache.decide(request(1024), c, "");
  BOOST_TEST_REQUIRE(first.ok(), why(first));
  BOOST_TEST(!first->busy);
  const double after_one = cache.work_available();
  BOOST_TEST(after_one < 1'000'000);  // it cost something
  // Distinct requests until the bucket is empty: the next ones are ranked on the small budget.
  int full = 1;
  while (cache.work_available() > 0 && full < 100) {
    auto d = cache.decide(request(1024 + 8 * full), c, "");
    BOOST_TEST_REQUIRE(d.ok(), why(d));
    BOOST_TEST(!d->busy);
    ++full;
  }
  BOOST_TEST_REQUIRE(cache.work_available() <= 0);
  auto cheap = cache.decide(request(4096), c, "");
  BOOST_TEST_REQUIRE(cheap.ok(), why(cheap));
  BOOST_TEST(cheap->busy);
  BOOST_TEST(cheap->record.partial);
  // A cached ranking costs nothing and is answered whatever the bucket holds.
  const double before = cache.work_available();
  auto hit = cache.decide(request(1024), c, "");
  BOOST_TEST_REQUIRE(hit.ok(), why(hit));
  BOOST_TEST(!hit->busy);
  BOOST_TEST(cache.work_available() == before);
  // Ten seconds of debt: a new request is refused as busy (sbatch submits it again later).
  int cheap_ones = 0;
  Result<Decision> last = cache.decide(request(8192), c, "");
  while (last.ok() && cheap_ones < 1000) last = cache.decide(request(8192 + 8 * ++cheap_ones), c, "");
  BOOST_TEST_REQUIRE(!last.ok());
  BOOST_TEST(last.error_code() == static_cast<int>(Reject::busy));
  BOOST_TEST(last.error().find("slurmctld is busy with crius submissions") != std::string::npos, last.error());
  BOOST_TEST(cache.work_available() <= -1'000'000);
  // Time refills the bucket: after long enough, the small-budget ranking is made again in full.
  now = 100;
  auto again = cache.decide(request(4096), c, "");
  BOOST_TEST_REQUIRE(again.ok(), why(again));
  BOOST_TEST(!again->busy);
  BOOST_TEST_MESSAGE(full << " full rankings, " << cheap_ones << " small ones before the refusal");
}

// A -p list is read name by name up to 64 names; the rest of a long list is not split.
BOOST_AUTO_TEST_CASE(a_long_partition_list_is_read_to_64_names) {
  Loaded c = conf();
  std::string parts;
  for (int i = 0; i < 20000; ++i) parts += "p" + std::to_string(i) + ",";
  parts += "a100";
  auto r = rank(bert(), c, parts);
  BOOST_TEST(!r.ok());  // a100 is the 20001st name: not read
  BOOST_TEST(r.error().find("none of the job's partitions") != std::string::npos, r.error());
  auto ok = rank(bert(), c, "v100," + parts);
  BOOST_TEST(ok.ok(), why(ok));
}

// With criusd's report of who each partition lets in, a job gets only Cells of partitions
// Slurm would take it into; none left: refused, saying why.
BOOST_AUTO_TEST_CASE(only_cells_of_partitions_the_submitter_may_use) {
  Loaded c = conf();
  DecisionCache cache;
  FreeGpus f = report({8, 8}, {8, 8});
  f.access = {{"a100", true, 0, 0, {"ml"}, {}, {}, {}, false, {}, {}}, {"v100", true, 0, 0, {}, {}, {}, {}, false, {}, {}}};
  Submitter lab{1000, 1000, "lab", "", 0, false}, ml{1000, 1000, "ml", "", 0, false};
  auto mine = cache.decide(bert(), c, "", &f, &ml);
  BOOST_TEST_REQUIRE(mine.ok(), why(mine));
  BOOST_TEST(mine->chosen.cell.gpu == "a100");  // the control: the faster type
  auto other = cache.decide(bert(), c, "", &f, &lab);
  BOOST_TEST_REQUIRE(other.ok(), why(other));
  BOOST_TEST(other->chosen.cell.gpu == "v100");
  f.access[1].up = false;
  auto none = cache.decide(bert(), c, "", &f, &lab);
  BOOST_TEST_REQUIRE(!none.ok());
  BOOST_TEST(none.error_code() == static_cast<int>(Reject::no_partition));
  BOOST_TEST(none.error() == "no Cell of a partition Slurm lets this job into: account lab is not in the "
                             "AllowAccounts of partition a100; partition v100 is not up");
  // A job that names no account runs in its user's default one, from the report.
  f.access[1].up = true;
  f.default_accounts = {{500, "lab"}, {1000, "ml"}};
  auto back = parse_free_gpus(to_text(f), "r");
  BOOST_TEST_REQUIRE(back.ok(), why(back));
  BOOST_TEST((back->default_accounts == f.default_accounts));
  Submitter unnamed{1000, 1000, "", "", 0, false};
  auto d = cache.decide(bert(), c, "", &*back, &unnamed);
  BOOST_TEST_REQUIRE(d.ok(), why(d));
  BOOST_TEST(d->chosen.cell.gpu == "a100");  // its default, ml, may use a100
  unnamed.uid = 500;
  d = cache.decide(bert(), c, "", &*back, &unnamed);
  BOOST_TEST_REQUIRE(d.ok(), why(d));
  BOOST_TEST(d->chosen.cell.gpu == "v100");  // lab may not
  unnamed.uid = 9999;  // not in the report: Slurm's to check
  d = cache.decide(bert(), c, "", &*back, &unnamed);
  BOOST_TEST_REQUIRE(d.ok(), why(d));
  BOOST_TEST(d->chosen.cell.gpu == "a100");
}

// [job_submit] objective is the crius policy's rule (scheduler/objective.h), applied to the Cells
// that fit the GPUs free now: efficiency takes the most samples/s per GPU, and the record says
// which rule chose.
BOOST_AUTO_TEST_CASE(the_objective_is_the_policys_rule_on_the_cells_that_fit) {
  Loaded c = conf();
  auto ranking = rank(bert(), c, "");
  BOOST_TEST_REQUIRE(ranking.ok(), why(ranking));
  FreeGpus f = report({8, 8}, {8, 8});
  for (Objective o : {Objective::adaptive, Objective::throughput, Objective::efficiency}) {
    c.config.objective = o;
    auto d = decide(bert(), c, "", &f);
    BOOST_TEST_REQUIRE(d.ok(), why(d));
    BOOST_TEST(d->record.request.objective == scheduler::to_string(o));
    auto r = rank(bert(), c, "");
    BOOST_TEST_REQUIRE(r.ok(), why(r));
    std::vector<scheduler::CellOption> options;
    double floor = 0;  // bert() is not movable: it keeps its Cell, at least a third of its fastest
    for (const auto& e : r->cells) {
      options.push_back({e.samples_per_s, e.cell.gpus()});
      floor = std::max(floor, scheduler::kKeptCellFloor * e.samples_per_s);
    }
    BOOST_TEST_REQUIRE(!bert().movable);
    auto k = scheduler::choose_cell(options, o, f.waiting > 0, floor);
    BOOST_TEST_REQUIRE(k.has_value());
    BOOST_TEST((d->chosen.cell == r->cells[*k].cell), scheduler::to_string(o));
  }
  c.config.objective = Objective::efficiency;
  auto eff = decide(bert(), c, "", &f);
  c.config.objective = Objective::throughput;
  auto fast = decide(bert(), c, "", &f);
  BOOST_TEST_REQUIRE((eff.ok() && fast.ok()));
  const auto per_gpu = [](const estimator::Estimate& e) { return e.samples_per_s / e.cell.gpus(); };
  BOOST_TEST(per_gpu(eff->chosen) >= per_gpu(fast->chosen));
  BOOST_TEST(eff->chosen.samples_per_s <= fast->chosen.samples_per_s);
  BOOST_TEST(eff->chosen.cell.gpus() < fast->chosen.cell.gpus(), "premise: bert scales below linear");
  // Adaptive (the default): as throughput while criusd's report counts no job waiting, as
  // efficiency while it counts one; without a report (no criusd) as throughput.
  BOOST_TEST((SubmitConfig{}.objective == Objective::adaptive));
  c.config.objective = Objective::adaptive;
  auto idle = decide(bert(), c, "", &f);
  f.waiting = 2;
  auto queued = decide(bert(), c, "", &f);
  auto blind = decide(bert(), c, "", nullptr);
  BOOST_TEST_REQUIRE((idle.ok() && queued.ok() && blind.ok()));
  BOOST_TEST((idle->chosen.cell == fast->chosen.cell));
  BOOST_TEST((queued->chosen.cell == eff->chosen.cell));
  // A movable job may be grown later: while others wait it takes the most efficient Cell with no
  // floor, here one under a third of the fastest that the fixed job above does not take.
  JobRequest movable = bert();
  movable.movable = true;
  auto moving = decide(movable, c, "", &f);
  BOOST_TEST_REQUIRE(moving.ok(), why(moving));
  BOOST_TEST(per_gpu(moving->chosen) > per_gpu(queued->chosen));
  BOOST_TEST(moving->chosen.samples_per_s < scheduler::kKeptCellFloor * fast->chosen.samples_per_s);
  BOOST_TEST(queued->chosen.samples_per_s >= scheduler::kKeptCellFloor * fast->chosen.samples_per_s);
  c.config.objective = Objective::throughput;
  auto fastest = decide(bert(), c, "", nullptr);
  BOOST_TEST_REQUIRE(fastest.ok());
  BOOST_TEST((blind->chosen.cell == fastest->chosen.cell));
}

BOOST_AUTO_TEST_CASE(an_unknown_objective_is_refused_naming_the_key) {
  const std::string path = "/tmp/crius-submit-objective-" + std::to_string(getpid()) + ".toml";
  std::ofstream(path) << "gpus = \"" << top() << "/etc/crius/gpus.toml\"\nmodels = \"" << top()
                      << "/etc/crius/models.toml\"\n[[partition]]\nname = \"p\"\ngpu = \"a100\"\nnodes = 1\n"
                         "gpus_per_node = 8\nintra_node_bw_gbs = 300.0\ninter_node_bw_gbs = 200.0\ninter_node_latency_us = 5.0\n"
                         "[job_submit]\nobjective = \"fastest\"\n";
  auto c = load_config(path);
  std::filesystem::remove(path);
  BOOST_TEST_REQUIRE(!c.ok());
  BOOST_TEST(c.error().find(":12:13:") != std::string::npos, c.error());
  BOOST_TEST(c.error().find("[job_submit] objective must be \"adaptive\", \"throughput\" or \"efficiency\"") !=
                 std::string::npos,
             c.error());
}

BOOST_AUTO_TEST_CASE(job_submit_metrics_count_what_it_decided) {
  SubmitCounters c;
  ++c.decisions["placed"];
  ++c.decisions["placed"];
  ++c.decisions["rejected"];
  ++c.rejections[reject_reason(static_cast<int>(Reject::no_cell))];
  c.deadline_flagged = 1;
  c.decide_seconds_sum = 0.25;
  c.decide_seconds_max = 0.125;
  const std::string t = metrics_text(c);
  auto has = [&](const std::string& line) { return t.find(line + "\n") != std::string::npos; };
  BOOST_TEST(has("crius_job_submit_decisions_total{outcome=\"placed\"} 2"), t);
  BOOST_TEST(has("crius_job_submit_decisions_total{outcome=\"rejected\"} 1"));
  BOOST_TEST(has("crius_job_submit_rejections_total{reason=\"no_cell\"} 1"));
  BOOST_TEST(has("crius_job_submit_deadline_flagged_total 1"));
  BOOST_TEST(has("crius_job_submit_decide_seconds_total 0.25"));
  BOOST_TEST(has("crius_job_submit_decide_seconds_max 0.125"));
  BOOST_TEST(std::string(reject_reason(99)) == "other");
}

// A job with --crius-iters and no time limit of its own: job_submit and criusd give it
// job::time_limit_minutes() of its Cell ([job_submit] time_limit_factor), recorded so that
// criusd sets it again when it changes the Cell.
BOOST_AUTO_TEST_CASE(the_time_limit_crius_sets_and_its_bounds) {
  // 1000 iterations of 1.5 s, twice, plus 5 minutes: 3,300 s = 55 minutes.
  BOOST_TEST(job::time_limit_minutes(1000, 1.5, 2, 0) == 55);
  BOOST_TEST(job::time_limit_minutes(1000, 1.5001, 2, 0) == 56);  // rounded up: never shorter
  BOOST_TEST(job::time_limit_minutes(1000, 1.5, 2, 3000) == 50);  // the partition's MaxTime
  BOOST_TEST(job::time_limit_minutes(1000, 1.5, 2, 30) == 1);     // at least a minute
  BOOST_TEST(job::time_limit_minutes(0, 1.5, 2, 0) == 5);         // nothing left to run: the slack
  BOOST_TEST(job::time_limit_minutes(1e12, 1e3, 100, 0) == 366 * 24 * 60);  // a year at most
  BOOST_TEST(job::time_limit_minutes(-5, 1.5, 2, 0) == 5);

  // The record keeps the factor; a record without it reads as crius having set none.
  JobRequest req = bert();
  req.iters = 1000;
  auto d = decide(req, conf(), "");
  BOOST_TEST_REQUIRE(d.ok(), why(d));
  job::Record rec = d->record;
  BOOST_TEST(rec.time_limit_factor == 0);  // job_submit's C glue sets it, where the job has no --time
  rec.time_limit_factor = 2.5;
  rec.time_limit_min = 61;
  auto back = job::parse_record(job::to_text(rec));
  BOOST_TEST_REQUIRE((back && back->ok()));
  BOOST_TEST(back->value().time_limit_factor == 2.5);
  BOOST_TEST(back->value().time_limit_min == 61);
  rec.time_limit_factor = 0;
  rec.time_limit_min = 0;
  BOOST_TEST(job::to_text(rec).find("time_limit") == std::string::npos);
  std::string text = job::to_text(rec);
  text.insert(text.size() - 1, ",\"time_limit_factor\":1000");
  auto bad = job::parse_record(text);
  BOOST_TEST_REQUIRE((bad && !bad->ok()));
  BOOST_TEST(bad->error().find("time_limit_factor") != std::string::npos, bad->error());

  // [job_submit] time_limit_factor: 0 (none) by default, or 1 to 100.
  BOOST_TEST(conf().config.time_limit_factor == 0);
  const ConfWith conf_with;
  auto load_with = [&](const std::string& line) { return conf_with.load(line); };
  for (auto [line, want] : {std::pair{"time_limit_factor = 0", 0.0}, std::pair{"time_limit_factor = 1.5", 1.5},
                            std::pair{"time_limit_factor = 3", 3.0}}) {
    auto c = load_with(line);
    BOOST_TEST_REQUIRE(c.ok(), why(c));
    BOOST_TEST(c->config.time_limit_factor == want);
  }
  for (const char* line : {"time_limit_factor = 0.5", "time_limit_factor = 101", "time_limit_factor = \"2\""}) {
    auto c = load_with(line);
    BOOST_TEST_REQUIRE(!c.ok(), line);
    BOOST_TEST(c.error().find("[job_submit] time_limit_factor must be 0") != std::string::npos, c.error());
  }

  // [job_submit] outage_max_gpus: 8 by default, 0 (no bound) to 1000000.
  BOOST_TEST(conf().config.outage_max_gpus == 8);
  auto o = load_with("outage_max_gpus = 0");
  BOOST_TEST_REQUIRE(o.ok(), why(o));
  BOOST_TEST(o->config.outage_max_gpus == 0);
  for (const char* line : {"outage_max_gpus = -1", "outage_max_gpus = 2.5"}) {
    auto c = load_with(line);
    BOOST_TEST_REQUIRE(!c.ok(), line);
    BOOST_TEST(c.error().find("[job_submit] outage_max_gpus must be a whole number from 0") != std::string::npos, c.error());
  }

  // criusd's report says each partition's MaxTime (with its QOS's MaxWall), and the MaxWall of
  // the QOS and associations: the limit crius sets is the shortest that binds the job.
  FreeGpus f = report({8}, {8});
  f.access.push_back({"a100", true, 0, 7200, {}, {}, {}, {}, false, {}, {}});
  Submitter alice{1001, 50, "lab", "", 0, false}, bob{1002, 50, "ml", "", 0, false};
  BOOST_TEST(f.longest_time_limit_s("a100", alice) == 7200);
  BOOST_TEST(f.longest_time_limit_s("v100", alice) == 0);
  f.qos_limits = {{"short", {-1, -1, 1800}}, {"long", {-1, -1, 86400}}};
  f.assoc_limits = {{1001, "lab", "", {-1, -1, -1}, "short", {}}, {1002, "ml", "", {-1, -1, 600}, "", {}}};
  BOOST_TEST(f.longest_time_limit_s("a100", alice) == 1800);  // the association's default QOS
  BOOST_TEST(f.longest_time_limit_s("v100", alice) == 1800);
  alice.qos = "long";  // the QOS it names: the partition's MaxTime is shorter
  BOOST_TEST(f.longest_time_limit_s("a100", alice) == 7200);
  BOOST_TEST(f.longest_time_limit_s("v100", alice) == 86400);
  BOOST_TEST(f.longest_time_limit_s("a100", bob) == 600);  // its association's own MaxWall
  bob.account = "other";  // not its association in this account: nothing known of it
  BOOST_TEST(f.longest_time_limit_s("v100", bob) == 0);
  BOOST_TEST(f.refusal("a100", alice, 1, 8) == "");  // a MaxWall bounds time, not the Cell
}
