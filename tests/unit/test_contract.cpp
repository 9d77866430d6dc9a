// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// The contracts between crius's parts, checked against the code that writes them and
// the man pages that document them:
// - every CRIUS_* variable job_submit and crius-launch write is in job::env_vars(), and
//   every variable in that table is written by the writer it names (or read, for the
//   site's and the internal ones);
// - every CRIUS_* name in the man pages is in the table, and every table entry is in a
//   man page;
// - every crius.toml key the loaders accept is documented, and every documented key is
//   accepted (no documented table that no code reads).
#define BOOST_TEST_MODULE contract
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "estimator/estimator.h"
#include "job/env.h"
#include "job/progress.h"
#include "launcher/layout.h"
#include "launcher/rank_env.h"
#include "slurm_plugin/criusd/controller.h"
#include "slurm_plugin/submit.h"

namespace fs = std::filesystem;
namespace est = crius::estimator;
using Names = std::set<std::string>;

namespace {

std::string top() {
  const char* t = std::getenv("TOP");
  return t ? t : ".";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Names names(const crius::job::Env& env) {
  Names out;
  for (const auto& kv : env) out.insert(kv.first);
  return out;
}

Names table(crius::job::Writer w) {
  Names out;
  for (const auto& v : crius::job::env_vars())
    if (v.writer == w) out.insert(std::string(v.name));
  return out;
}

std::string list(const Names& n) {
  std::string s;
  for (const auto& x : n) s += (s.empty() ? "" : " ") + x;
  return s;
}

// What job_submit decides for a catalogue model with --crius-iters and --crius-deadline.
crius::slurm::Decision submission() {
  auto conf = crius::slurm::load_config(top() + "/etc/crius/crius.toml");
  BOOST_REQUIRE_MESSAGE(conf.ok(), (conf.ok() ? std::string() : conf.error()));
  crius::slurm::JobRequest req;
  req.model = "bert__1.3B";
  req.global_batch = 64;
  req.iters = 1000;
  req.deadline_s = 86400;
  auto d = crius::slurm::decide(req, *conf, "");
  BOOST_REQUIRE_MESSAGE(d.ok(), (d.ok() ? std::string() : d.error()));
  return std::move(*d);
}

// The keys documented in a man page section: the first word of each .TP item's tag
// (".B key", ".BR key ...", ".B [table]").
Names documented_keys(const std::string& page, const std::string& section, const std::string& subsection = "") {
  std::istringstream in(slurp(fs::path(top()) / "man" / page));
  Names out;
  std::string line, prev;
  bool in_section = false, in_sub = subsection.empty();
  while (std::getline(in, line)) {
    if (line.rfind(".SH ", 0) == 0) in_section = line == ".SH " + section;
    if (line.rfind(".SS ", 0) == 0) in_sub = subsection.empty() || line == ".SS " + subsection;
    if (in_section && in_sub && prev == ".TP") {
      std::smatch m;
      if (std::regex_search(line, m, std::regex(R"(^\.BR? (\[?[a-z_]+\]?))"))) out.insert(m[1]);
    }
    prev = line;
  }
  return out;
}

Names strip_brackets(const Names& in) {
  Names out;
  for (auto s : in) {
    if (s.front() == '[') s = s.substr(1, s.size() - 2);
    out.insert(s);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(job_submit_writes_exactly_its_table_entries) {
  auto d = submission();
  const Names written = names(d.env);
  const Names want = table(crius::job::Writer::job_submit);
  BOOST_TEST(written == want, "written: " << list(written) << "\ntable:   " << list(want));
  // The environment describes the chosen Cell and its plan, as the record does.
  for (const auto& [k, v] : d.env) {
    if (k == "CRIUS_CELL") BOOST_TEST(v == est::to_string(d.record.cell));
    if (k == "CRIUS_PLAN_JSON") BOOST_TEST(v == est::plan_text(d.record.plan));
  }
}

BOOST_AUTO_TEST_CASE(crius_launch_writes_its_entries_and_the_plan_again) {
  auto d = submission();
  auto layout = crius::launcher::Layout::make(d.record.plan, {"n1", "n2", "n3", "n4"}, d.record.cell.gpus_per_node);
  BOOST_REQUIRE_MESSAGE(layout.ok(), (layout.ok() ? std::string() : layout.error()));
  crius::launcher::LaunchSpec spec;
  spec.plan = d.record.plan;
  spec.hosts = layout->hosts();
  spec.gpus_per_node = d.record.cell.gpus_per_node;
  spec.master_addr = "n1";
  spec.master_port = 29500;
  // A job run from its record: the record's variables, the plan's and the rank's.
  spec.job_env = crius::job::record_env(d.record);
  auto e = crius::launcher::rank_env(*layout, spec, 0, std::nullopt, std::nullopt);
  Names want = table(crius::job::Writer::job_submit);
  for (const auto& n : table(crius::job::Writer::crius_launch)) want.insert(n);
  BOOST_TEST(names(e.crius) == want, "written: " << list(names(e.crius)) << "\ntable:   " << list(want));
  // Without a record (--plan, flags): the plan's variables and the rank's, nothing else.
  spec.job_env.clear();
  auto f = crius::launcher::rank_env(*layout, spec, 0, std::nullopt, std::nullopt);
  Names plan_only = names(crius::job::plan_env(d.record.plan));
  for (const auto& n : table(crius::job::Writer::crius_launch)) plan_only.insert(n);
  plan_only.insert("CRIUS_GPUS_PER_NODE");  // listed under job_submit; crius-launch writes the ranks per node
  BOOST_TEST(names(f.crius) == plan_only);
  // The same value wins for a name written twice: the one of the plan that runs.
  std::map<std::string, std::string> last;
  for (const auto& [k, v] : e.crius) last[k] = v;
  BOOST_TEST(last["CRIUS_PLAN_JSON"] == est::plan_text(d.record.plan));
  BOOST_TEST(last["CRIUS_GPUS_PER_NODE"] == std::to_string(spec.gpus_per_node));
}

BOOST_AUTO_TEST_CASE(man_pages_document_exactly_the_table) {
  Names in_pages;
  const std::regex name(R"(CRIUS(\\?_[A-Z0-9]+)+)");
  for (const auto& entry : fs::directory_iterator(fs::path(top()) / "man")) {
    std::string text = slurp(entry.path());
    for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it) {
      std::string n = it->str();
      n.erase(std::remove(n.begin(), n.end(), '\\'), n.end());
      in_pages.insert(n);
    }
  }
  Names in_table;
  for (const auto& v : crius::job::env_vars()) in_table.insert(std::string(v.name));
  Names undocumented, unknown;
  for (const auto& n : in_table)
    if (!in_pages.count(n)) undocumented.insert(n);
  for (const auto& n : in_pages)
    if (!in_table.count(n)) unknown.insert(n);
  BOOST_TEST(undocumented.empty(), "in the table, in no man page: " << list(undocumented));
  BOOST_TEST(unknown.empty(), "in a man page, written or read by nothing: " << list(unknown));
}

BOOST_AUTO_TEST_CASE(crius_toml_keys_are_documented_and_read) {
  // Top-level keys and tables of the cluster file, and [[partition]]'s keys.
  Names top_level = strip_brackets(documented_keys("crius.toml.5", "CLUSTER FILE", "Sections of other components"));
  for (const auto& k : documented_keys("crius.toml.5", "CLUSTER FILE")) {
    if (k == "gpus" || k == "models" || k == "framework") top_level.insert(k);
  }
  top_level.insert("partition");  // the .SS [[partition]] heading
  Names launch_doc = documented_keys("crius.toml.5", "CLUSTER FILE", "[launch]");
  if (!launch_doc.empty()) top_level.insert("launch");  // the .SS [launch] heading
  Names accepted(est::cluster_file_keys().begin(), est::cluster_file_keys().end());
  BOOST_TEST(top_level == accepted, "documented: " << list(top_level) << "\naccepted:   " << list(accepted));
  Names launch(est::launch_keys().begin(), est::launch_keys().end());
  BOOST_TEST(launch_doc == launch, "documented: " << list(launch_doc) << "\naccepted:   " << list(launch));

  Names part_doc = documented_keys("crius.toml.5", "CLUSTER FILE", "[[partition]]");
  Names part(est::partition_keys().begin(), est::partition_keys().end());
  BOOST_TEST(part_doc == part, "documented: " << list(part_doc) << "\naccepted:   " << list(part));

  Names submit_doc = documented_keys("job_submit_crius.8", "CONFIGURATION");
  Names submit(crius::slurm::submit_config_keys().begin(), crius::slurm::submit_config_keys().end());
  BOOST_TEST(submit_doc == submit, "documented: " << list(submit_doc) << "\naccepted:   " << list(submit));

  Names criusd_doc = documented_keys("criusd.8", "CONFIGURATION");
  Names criusd(crius::slurm::controller_option_keys().begin(), crius::slurm::controller_option_keys().end());
  BOOST_TEST(criusd_doc == criusd, "documented: " << list(criusd_doc) << "\naccepted:   " << list(criusd));
}

BOOST_AUTO_TEST_CASE(progress_reports_parse_strictly) {
  using crius::job::Progress;
  BOOST_TEST((crius::job::parse_progress_line("crius-progress: 12/100") == Progress{12, 100}));
  BOOST_TEST((crius::job::parse_progress_comment(crius::job::progress_comment({7, 9})) == Progress{7, 9}));
  BOOST_TEST((crius::job::parse_progress_line(crius::job::progress_line({0, 1})) == Progress{0, 1}));
  for (const char* bad : {"crius-progress=12/100", "crius-progress: 101/100", "crius-progress: 1/0",
                          "crius-progress: -1/5", "crius-progress:  1/5", "crius-progress: 1/5 ", "crius-progress: 1/",
                          "crius-progress: /5", "crius-progress: 1/99999999999999", "crius-progress: 1/5/6",
                          "crius-progress: 0x1/5", "mine", ""})
    BOOST_TEST(!crius::job::parse_progress_line(bad), bad);
  BOOST_TEST(!crius::job::parse_progress_comment("crius-progress: 1/5"));
  BOOST_TEST(!crius::job::parse_progress_comment("crius-progress=1/5\nx"));
  // A Comment carries the time of its report; one without (an older crius-launch's) still reads.
  BOOST_TEST(crius::job::progress_comment({7, 9, 1796618601}) == "crius-progress=7/9@1796618601");
  BOOST_TEST((crius::job::parse_progress_comment("crius-progress=7/9@1796618601") == Progress{7, 9, 1796618601}));
  BOOST_TEST((crius::job::parse_progress_comment("crius-progress=7/9") == Progress{7, 9, 0}));
  for (const char* bad : {"crius-progress=7/9@", "crius-progress=7/9@x", "crius-progress=7/9@1@2", "crius-progress=7@1/9",
                          "crius-progress=7/9@-1", "crius-progress=7/9@99999999999999"})
    BOOST_TEST(!crius::job::parse_progress_comment(bad), bad);
  BOOST_TEST(!crius::job::parse_progress_line("crius-progress: 7/9@1796618601"));
}
