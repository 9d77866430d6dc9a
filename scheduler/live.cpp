// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/live.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>

#include "common/util.h"
#include "scheduler/placement.h"
#include "scheduler/policy.h"

namespace crius::scheduler {

namespace {
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\n") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return q + "\"";
}
}  // namespace

Result<void> write_replay_jobs(const std::string& path, const std::vector<Job>& jobs, const ClusterState& cluster,
                               ThroughputSource& tput) {
  std::ofstream out(path);
  if (!out) return make_error(path + ": cannot write");
  out << "job,submit_s,model,global_batch,iterations,deadline_s,gpu,gpus,partition,nodes,gpus_per_node,iter_time_s,kind\n";
  const PolicyOptions options;
  const Context ctx{cluster, {}, 0, tput, options, {}};
  for (const Job& j : jobs) {
    const std::optional<PlacedShape> pick = requested_shape(ctx, j);
    Perf run;
    if (pick) run = tput.best(j.model, j.global_batch, pick->shape, j.stack());
    const char* kind = to_string(j.kind);
    out << csv_field(j.name) << ',' << util::fixed(j.submit_time, 0) << ',' << csv_field(j.model) << ','
        << j.global_batch << ',' << util::fixed(std::ceil(j.iterations), 0) << ','
        << (std::isfinite(j.deadline) ? util::fixed(j.deadline, 0) : "") << ',' << j.req_gpu << ',' << j.req_gpus << ',';
    if (pick && run.feasible)
      out << cluster.partitions[pick->partition].name << ',' << pick->shape.nodes << ',' << pick->shape.gpus_per_node
          << ',' << util::fmt(run.iter_time_s, 6) << ',' << kind << '\n';
    else
      out << ",,,," << kind << '\n';
  }
  if (!out) return make_error(path + ": write failed");
  return {};
}

Result<SimResult> load_live(const std::string& path, const std::string& name, const std::vector<Job>& trace) {
  std::ifstream in(path);
  if (!in) return make_error(path + ": cannot open");
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < trace.size(); ++i) by_name[trace[i].name] = i;
  SimResult res;
  res.policy = name;
  res.jobs = trace;
  for (Job& j : res.jobs) {
    j.state = JobState::pending;
    j.first_start = -1;
    j.finish_time = -1;
    j.reconfigurations = 0;
  }
  std::vector<int> runs(trace.size(), 0);
  std::vector<double> last_end(trace.size(), -1);
  std::vector<std::string> last_state(trace.size());
  std::map<std::string, double> gpu_seconds;
  struct Run {
    size_t job;
    double start, end;
    int gpus;
  };
  std::vector<Run> all_runs;
  std::string line;
  int lineno = 0;
  std::map<std::string, size_t> col;
  static const char* kCols[] = {"job", "submit_s", "start_s", "end_s", "state", "gpu", "gpus"};
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = util::split_csv(line);
    const std::string at = path + ":" + std::to_string(lineno) + ": ";
    if (col.empty()) {
      for (size_t i = 0; i < f.size(); ++i) col[f[i]] = i;
      for (const char* c : kCols)
        if (!col.count(c)) return make_error(at + "header lacks column '" + c + "' (expected job,submit_s,start_s,end_s,state,gpu,gpus)");
      continue;
    }
    if (f.size() != col.size())
      return make_error(at + std::to_string(f.size()) + " fields, the header has " + std::to_string(col.size()));
    auto field = [&](const char* c) -> const std::string& { return f[col.at(c)]; };
    auto it = by_name.find(field("job"));
    if (it == by_name.end()) return make_error(at + "job '" + util::printable(field("job"), 80) + "' is not in the trace");
    double start = 0, end = 0;
    int gpus = 0;
    if (!util::parse_number(field("start_s"), start) || !util::parse_number(field("end_s"), end) || end < start)
      return make_error(at + "start_s and end_s must be numbers with start_s <= end_s");
    if (!util::parse_number(field("gpus"), gpus) || gpus < 0) return make_error(at + "column 'gpus' must be an integer >= 0");
    Job& j = res.jobs[it->second];
    const size_t i = it->second;
    if (j.first_start < 0 || start < j.first_start) j.first_start = start;
    if (end >= last_end[i]) {
      last_end[i] = end;
      last_state[i] = field("state");
    }
    ++runs[i];
    all_runs.push_back(Run{i, start, end, gpus});
    if (gpus > 0) gpu_seconds[field("gpu")] += gpus * (end - start);
  }
  if (col.empty()) return make_error(path + ": empty file, expected a header");
  res.start = std::numeric_limits<double>::infinity();
  res.end = 0;
  for (size_t i = 0; i < res.jobs.size(); ++i) {
    Job& j = res.jobs[i];
    res.start = std::min(res.start, j.submit_time);
    if (runs[i] == 0) continue;
    j.reconfigurations = runs[i] - 1;
    if (last_state[i] == "COMPLETED") {
      j.state = JobState::finished;
      j.finish_time = last_end[i];
      j.done_iterations = j.iterations;
      res.throughput_integral += j.iterations * j.global_batch;
      res.end = std::max(res.end, j.finish_time);
    } else {
      j.state = JobState::running;  // ended otherwise (FAILED, CANCELLED, TIMEOUT): not finished
    }
  }
  if (!std::isfinite(res.start)) res.start = 0;
  if (res.end < res.start) res.end = res.start;
  for (const auto& [gpu, secs] : gpu_seconds) res.gpu_seconds.emplace_back(gpu, secs);
  // The timeline: Slurm records when each run held its GPUs, not its progress, so a finished
  // job's samples are spread evenly over the time its runs held GPUs.
  std::vector<double> held(res.jobs.size(), 0);
  for (const Run& r : all_runs) held[r.job] += r.end - r.start;
  const double step = std::max(1.0, (res.end - res.start) / 500);
  for (double t = res.start; t < res.end; t += step) {
    double rate = 0;
    int busy = 0;
    for (const Run& r : all_runs) {
      if (r.start > t || r.end <= t) continue;
      busy += r.gpus;
      const Job& j = res.jobs[r.job];
      if (j.state == JobState::finished && held[r.job] > 0) rate += j.iterations * j.global_batch / held[r.job];
    }
    res.timeline.push_back(Sample{t, rate, busy});
  }
  return res;
}

}  // namespace crius::scheduler
