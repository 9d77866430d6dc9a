// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// Shared fixture of the scheduler unit tests: a small deterministic throughput
// table (the --throughput-table path) and a 2-type cluster of 2 nodes x 2 GPUs
// each. Numbers are made up so that outcomes can be checked by hand.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <ostream>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/report.h"
#include "scheduler/simulator.h"

namespace crius::scheduler {
inline std::ostream& operator<<(std::ostream& o, JobState s) { return o << to_string(s); }
}  // namespace crius::scheduler

namespace sched_fixture {

namespace cs = crius::scheduler;

// model, global batch 8; iteration seconds per (type, nodes x gpus per node).
// "a": x is twice as fast as y and scales well.
// "b": needs 2 GPUs of x on one node, or all 4 GPUs of y.
// "c": fits nowhere.
inline const char* kTable =
    "model,global_batch,gpu_type,num_nodes,gpus_per_node,iter_time_s,kind\n"
    "a,8,x,1,1,10,measured\n"
    "a,8,x,1,2,5,measured\n"
    "a,8,x,2,1,6,measured\n"
    "a,8,x,2,2,2.5,measured\n"
    "a,8,y,1,1,20,measured\n"
    "a,8,y,1,2,10,measured\n"
    "a,8,y,2,1,12,measured\n"
    "a,8,y,2,2,5,measured\n"
    "b,8,x,1,1,,oom\n"
    "b,8,x,1,2,8,measured\n"
    "b,8,x,2,1,,oom\n"
    "b,8,x,2,2,4,measured\n"
    "b,8,y,1,1,,oom\n"
    "b,8,y,1,2,,oom\n"
    "b,8,y,2,1,,oom\n"
    "b,8,y,2,2,10,measured\n"
    "c,8,x,1,1,,oom\n";

inline std::string write_temp(const std::string& text, const char* suffix = ".csv") {
  std::string path = "/tmp/crius-sched-test-" + std::to_string(getpid()) + "-" +
                     std::to_string(std::rand()) + suffix;
  std::ofstream(path) << text;
  return path;
}

inline std::unique_ptr<cs::TableThroughput> table() {
  std::string path = write_temp(kTable);
  auto t = cs::TableThroughput::load(path);
  std::remove(path.c_str());
  if (!t) throw std::runtime_error(t.error());
  return std::move(t.value());
}

inline cs::ClusterState cluster(int nodes = 2) {
  return cs::ClusterState::from_partitions(
      {cs::Partition{"x", "x", nodes, 2}, cs::Partition{"y", "y", nodes, 2}});
}

inline cs::Job job(int id, const std::string& model, const std::string& gpu, int gpus,
                   double iterations, double submit = 0, double deadline = 1e18) {
  cs::Job j;
  j.id = id;
  j.name = "j" + std::to_string(id);
  j.model = model;
  j.global_batch = 8;
  j.req_gpu = gpu;
  j.req_gpus = gpus;
  j.iterations = iterations;
  j.submit_time = submit;
  j.deadline = deadline;
  return j;
}

struct Run {
  cs::SimResult result;
  std::vector<std::string> violations;  // invariant or rule breaks, per round
};

// Simulate `policy` and check invariants after every round (simulate() does it
// too and fails; here each round is also recorded for rule checks).
inline Run simulate(const std::string& policy, const std::vector<cs::Job>& jobs,
                    cs::ClusterState c = cluster(), uint64_t seed = 1,
                    std::function<void(double, const std::vector<cs::Job>&)> each_round = {},
                    int max_gpus = 0, cs::PolicyOptions opt = {}) {
  auto t = table();
  cs::CachedThroughput tput(*t);
  opt.seed = seed;
  opt.max_gpus = max_gpus;
  auto p = cs::make_policy(policy, opt);
  if (!p) throw std::runtime_error(p.error());
  cs::SimOptions so;
  so.policy = opt;
  Run run;
  so.on_round = [&](double now, const std::vector<cs::Job>& js, const std::vector<cs::Decision>&) {
    if (auto r = cs::check_invariants(c, js, tput); !r) run.violations.push_back(r.error());
    if (each_round) each_round(now, js);
  };
  auto res = cs::simulate(c, jobs, **p, tput, so);
  if (!res) throw std::runtime_error(res.error());
  run.result = std::move(res.value());
  return run;
}

inline double jct(const Run& r, int id) {
  const cs::Job& j = r.result.jobs.at(id);
  return j.state == cs::JobState::finished ? j.finish_time - j.submit_time : -1;
}

}  // namespace sched_fixture
