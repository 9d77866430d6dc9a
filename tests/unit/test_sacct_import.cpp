// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-import-sacct's core: an sacct -P export (lines in the format Slurm 22.05's sacct
// printed for a crius-lab run) mapped to a crius-sim trace.
#define BOOST_TEST_MODULE sacct_import
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "estimator/estimator.h"
#include "scheduler/sacct_import.h"
#include "scheduler/simulator.h"

using namespace crius;
namespace cs = crius::scheduler;

namespace {

std::string top() {
  const char* t = std::getenv("TOP");
  return t ? t : ".";
}

template <typename R>
std::string why(const R& r) {
  return r.ok() ? std::string() : r.error();
}

const char* kHeader = "JobIDRaw|JobName|Account|User|Partition|Submit|Elapsed|Timelimit|AllocTRES|State|Comment\n";

struct Fixture {
  Fixture() {
    auto c = estimator::load_cluster(top() + "/etc/crius/crius.toml");  // a100 and v100, 2 x 8 each
    BOOST_TEST_REQUIRE(c.ok(), why(c));
    cluster = std::make_unique<estimator::Cluster>(std::move(*c));
    dir = std::filesystem::temp_directory_path() / ("crius-import-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  ~Fixture() { std::filesystem::remove_all(dir); }
  Result<std::vector<cs::ImportRule>> rules(const std::string& text) {
    std::ofstream(dir / "map.toml") << text;
    return cs::load_import_rules(dir / "map.toml", cluster->models);
  }
  std::unique_ptr<estimator::Cluster> cluster;
  std::filesystem::path dir;
};

const char* kMap = R"(
[[rule]]
job_name = "bert-*"
model = "bert__1.3B"
global_batch = 256

[[rule]]
account = "vision"
comment = "*wrn*"
model = "wide_resnet__1B"
global_batch = 128
)";

}  // namespace

BOOST_FIXTURE_TEST_CASE(an_export_becomes_a_trace, Fixture) {
  auto r = rules(kMap);
  BOOST_TEST_REQUIRE(r.ok(), why(r));
  const std::string text =
      std::string(kHeader) +
      "11|bert-a|nlp|ann|a100|2026-12-03T05:40:33|01:00:00|UNLIMITED|billing=8,cpu=8,gres/gpu:a100=8,gres/gpu=8,node=1|COMPLETED|\n"
      // untyped GPUs: the type is the partition's; a Comment may hold '|'
      "12|train|vision|bob|v100|2026-12-03T06:40:33|1-00:00:00|2-00:00:00|billing=16,cpu=16,gres/gpu=16,node=2|TIMEOUT|run wrn|x\n"
      "13|bert-b|nlp|ann|a100|2026-12-03T05:40:40|00:00:00|UNLIMITED|billing=8,gres/gpu=8,node=1|CANCELLED|\n"  // never ran
      "14|cpu-job|nlp|ann|a100|2026-12-03T05:40:41|00:10:00|UNLIMITED|billing=1,cpu=1,node=1|COMPLETED|\n"    // no GPU
      "15|other|nlp|ann|a100|2026-12-03T05:40:42|00:10:00|UNLIMITED|billing=8,gres/gpu=8,node=1|COMPLETED|\n"  // no rule
      "16|bert-c|nlp|ann|a100|2026-12-03T05:40:43|00:10:00|UNLIMITED|gres/gpu:h100=8,gres/gpu=8,node=1|FAILED|\n";
  auto rep = cs::import_sacct(text, "hist", *r, *cluster, estimator::Runtime::alpa);
  BOOST_TEST_REQUIRE(rep.ok(), why(rep));
  BOOST_TEST(rep->never_ran == 1);
  BOOST_TEST(rep->no_gpus == 1);
  BOOST_TEST(rep->unmapped == 1);
  BOOST_TEST(rep->infeasible == 1);  // h100 is not a type of the cluster file
  BOOST_TEST_REQUIRE(rep->jobs.size() == 2u);
  const cs::ImportedJob& a = rep->jobs[0];
  BOOST_TEST(a.id == "11");
  BOOST_TEST(a.model == "bert__1.3B");
  BOOST_TEST(a.gpu == "a100");
  BOOST_TEST(a.gpus == 8);
  BOOST_TEST(a.submit == 0);
  BOOST_TEST(a.deadline == 365.0 * 86400);
  // The iterations it ran: an hour at the estimator's iteration time on 1 x 8 A100.
  estimator::Request req;
  req.model = *cluster->models.find("bert__1.3B");
  req.global_batch = 256;
  req.runtime = estimator::Runtime::alpa;
  const double it = estimator::best_for_allocation(req, *cluster, "a100", 1, 8).iter_time_s;
  BOOST_TEST(a.iterations == std::round(3600 / it));
  const cs::ImportedJob& b = rep->jobs[1];
  BOOST_TEST(b.model == "wide_resnet__1B");
  BOOST_TEST(b.gpu == "v100");
  BOOST_TEST(b.gpus == 16);
  BOOST_TEST(b.submit == 3600);
  BOOST_TEST(b.deadline == 3600 + 2 * 86400);

  // crius-sim reads it and runs every job.
  std::ofstream(dir / "trace.csv") << cs::to_trace_csv(*rep, "hist");
  auto jobs = cs::load_trace(dir / "trace.csv", 1.0);
  BOOST_TEST_REQUIRE(jobs.ok(), why(jobs));
  BOOST_TEST(jobs->size() == 2u);
  BOOST_TEST((*jobs)[1].req_gpus == 16);
  BOOST_TEST((*jobs)[1].iterations == b.iterations);
}

BOOST_FIXTURE_TEST_CASE(bad_input_names_the_line, Fixture) {
  auto r = rules(kMap);
  BOOST_TEST_REQUIRE(r.ok(), why(r));
  auto err = [&](const std::string& text) {
    auto rep = cs::import_sacct(text, "h", *r, *cluster, estimator::Runtime::alpa);
    return rep.ok() ? std::string("accepted") : rep.error();
  };
  BOOST_TEST(err("") == "h: empty (expected sacct -P output with its header)");
  BOOST_TEST(err("JobIDRaw|JobName\n").find("h:1: the header lacks Account") == 0);
  BOOST_TEST(err(std::string(kHeader) + "1|x|a|u|p|yesterday|00:01:00|UNLIMITED|gres/gpu=1|COMPLETED|\n") ==
             "h:2: Submit 'yesterday' is not a time");
  BOOST_TEST(err(std::string(kHeader) + "1|x|a|u|p|1700000000|1:xx|UNLIMITED|gres/gpu=1|COMPLETED|\n") ==
             "h:2: Elapsed '1:xx' is not a duration");
  BOOST_TEST(err(std::string(kHeader) + "1|x|a\n") == "h:2: 3 fields, the header has 11");

  BOOST_TEST(why(rules("[[rule]]\nmodel = \"bert__1.3B\"\n")).find("map.toml:1: [[rule]] needs model and global_batch") !=
             std::string::npos);
  BOOST_TEST(why(rules("[[rule]]\nmodel = \"bert_1.3B\"\nglobal_batch = 8\n")).find("unknown model 'bert_1.3B'") !=
             std::string::npos);
  BOOST_TEST(why(rules("[[rule]]\nmodell = \"x\"\n")).find("map.toml:2: [[rule]] modell: unknown key") !=
             std::string::npos);
  BOOST_TEST(why(rules("rules = 1\n")).find("unknown key 'rules'") != std::string::npos);
}
