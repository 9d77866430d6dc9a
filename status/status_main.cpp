// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-status: what crius did and does to a job, for its user (crius-status(1)). Reads each
// job from slurmctld once, as the calling user, and prints its crius record: the Cell and plan,
// the move in flight, the moves criusd made and how each ended.
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "common/util.h"
#include "estimator/plan.h"
#include "job/progress.h"
#include "job/record.h"
#include "slurm_plugin/job_info.h"
#include "slurm_plugin/slurm_compat.h"
#include "slurm_plugin/load_record.h"

namespace {

using namespace crius;

std::string when(std::int64_t t) {
  if (t <= 0) return "-";
  char buf[32];
  const std::time_t tt = static_cast<std::time_t>(t);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&tt));
  return buf;
}

// "2 stages (dp4 tp1 layers 0-13, dp4 tp1 layers 13-24), 32 micro-batches of 2, 1f1b"
std::string plan_summary(const estimator::Plan& p) {
  std::string out = std::to_string(p.pp()) + (p.pp() == 1 ? " stage (" : " stages (");
  for (std::size_t i = 0; i < p.stages.size(); ++i) {
    const auto& st = p.stages[i];
    out += (i ? ", dp" : "dp") + std::to_string(st.dp) + " tp" + std::to_string(st.tp);
    if (st.layer_end > st.layer_begin)
      out += " layers " + std::to_string(st.layer_begin) + "-" + std::to_string(st.layer_end);
  }
  return out + "), " + std::to_string(p.micro_batches) + " micro-batches of " + std::to_string(p.micro_batch_size) +
         ", " + estimator::to_string(p.schedule);
}

struct Shown {
  std::uint32_t id = 0;
  std::string state, comment;
  std::optional<Result<job::Record>> record;  // none: not a crius job
};

void print_text(const Shown& s) {
  std::cout << "job " << s.id << " " << s.state;
  if (!s.record) {
    std::cout << ": not a crius job (no crius record)\n";
    return;
  }
  if (!*s.record) {
    std::cout << ": its crius record does not read: " << util::printable(s.record->error(), 300) << "\n";
    return;
  }
  const job::Record& r = s.record->value();
  std::cout << ": model " << util::printable(r.request.model, 128) << ", global batch " << r.request.global_batch;
  if (r.request.movable) std::cout << ", movable";
  if (r.request.checkpoint_grace_s) std::cout << " (checkpoint grace " << *r.request.checkpoint_grace_s << " s)";
  if (r.pinned()) std::cout << ", pinned by its user";
  std::cout << "\n  Cell " << estimator::describe(r.cell) << ", chosen by " << r.by << "; plan " << plan_summary(r.plan)
            << "\n  estimate " << util::fixed(r.iter_time_s, 3) << " s per iteration, " << util::fixed(r.samples_per_s, 2)
            << " samples/s\n";
  if (auto p = job::parse_progress_comment(s.comment))
    std::cout << "  progress " << p->done << " of " << p->total << " iterations\n";
  if (!r.nodes.empty()) std::cout << "  pinned by criusd to nodes " << util::join(r.nodes, ",") << "\n";
  if (r.move)
    std::cout << "  moving to " << estimator::describe(r.move->target) << ": " << r.move->phase << " since "
              << when(r.move->since) << " (" << util::printable(r.move->reason, 256) << ")\n";
  if (!r.unmovable.empty()) std::cout << "  not moved while it runs: " << util::printable(r.unmovable, 256) << "\n";
  if (r.history.empty()) {
    std::cout << "  no moves by criusd\n";
    return;
  }
  std::cout << "  moves by criusd (the last " << job::kMaxHistory << "):\n";
  for (const auto& m : r.history)
    std::cout << "    " << when(m.started) << " .. " << when(m.ended) << "  " << estimator::to_string(m.from) << " -> "
              << estimator::to_string(m.to) << "  " << (m.outcome.empty() ? "in flight" : util::printable(m.outcome, 256))
              << "  (" << util::printable(m.reason, 256) << ")\n";
}

nlohmann::json to_json(const Shown& s) {
  nlohmann::json j = {{"job", s.id}, {"state", s.state}};
  if (!s.record) j["crius"] = false;
  else if (!*s.record) j["error"] = s.record->error();
  else j["record"] = nlohmann::json::parse(job::to_text(s.record->value()));
  if (auto p = job::parse_progress_comment(s.comment)) j["progress"] = {{"done", p->done}, {"total", p->total}};
  return j;
}

Shown shown(const slurm_job_info_t& j) {
  Shown s;
  s.id = j.job_id;
  if (const char* st = slurm_job_state_string(j.job_state)) s.state = st;
  if (j.comment) s.comment = j.comment;
  s.record = job::parse_record(j.admin_comment ? j.admin_comment : "");
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"crius-status: what crius did and does to your jobs (crius-status(1))"};
  std::vector<std::uint32_t> ids;
  bool json = false;
  app.add_option("JOBID", ids, "jobs to show (default: your crius jobs that Slurm still knows)")
      ->check(CLI::Range(1u, 0xfffffff0u));
  app.add_flag("--json", json, "print each job as JSON (its record as criusd and job_submit write it)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  slurm::init_slurm_client();
  std::vector<Shown> jobs;
  int rc = 0;
  if (ids.empty()) {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job_user(&msg, getuid(), SHOW_DETAIL) != SLURM_SUCCESS) {
      std::cerr << "crius-status: cannot read your jobs from slurmctld: " << slurm_strerror(errno) << "\n";
      return 1;
    }
    for (std::uint32_t i = 0; i < msg->record_count; ++i)
      if (job::looks_like_record(msg->job_array[i].admin_comment ? msg->job_array[i].admin_comment : ""))
        jobs.push_back(shown(msg->job_array[i]));
    slurm_free_job_info_msg(msg);
  }
  for (std::uint32_t id : ids) {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job(&msg, id, SHOW_DETAIL) != SLURM_SUCCESS) {
      std::cerr << "crius-status: job " << id << ": " << slurm_strerror(errno) << "\n";
      rc = 1;
      continue;
    }
    if (const slurm_job_info_t* j = slurm::find_job(msg, id)) jobs.push_back(shown(*j));
    slurm_free_job_info_msg(msg);
  }
  if (json) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& s : jobs) all.push_back(to_json(s));
    std::cout << all.dump(2) << "\n";
  } else {
    for (const auto& s : jobs) print_text(s);
    if (ids.empty() && jobs.empty()) std::cout << "no crius jobs of yours that Slurm still knows\n";
  }
  return rc;
}
