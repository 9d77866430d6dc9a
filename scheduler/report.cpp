// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler/report.h"

#include "common/util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

namespace crius::scheduler {

Summary summarize(const SimResult& r, const ClusterState& cluster) {
  Summary s;
  s.policy = r.policy;
  s.jobs = static_cast<int>(r.jobs.size());
  std::vector<double> jct, queue;
  std::map<std::string, std::vector<double>> by_kind;
  for (const Job& j : r.jobs) {
    s.reconfigurations += j.reconfigurations;
    if (std::isfinite(j.deadline)) {
      ++s.deadlines;
      s.deadlines_met += j.state == JobState::finished && j.finish_time <= j.deadline;
    }
    if (j.state == JobState::unrunnable) ++s.unrunnable;
    if (j.state != JobState::finished) continue;
    ++s.finished;
    jct.push_back(j.finish_time - j.submit_time);
    by_kind[to_string(j.kind)].push_back(jct.back());
    queue.push_back(j.first_start - j.submit_time);
  }
  auto mean = [](const std::vector<double>& v) {
    return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
  };
  s.jct_mean_s = mean(jct);
  if (by_kind.size() > 1)
    for (const auto& [kind, v] : by_kind) s.jct_mean_by_kind_s[kind] = mean(v);
  s.jct_median_s = util::median(jct);
  s.jct_p99_s = util::percentile_nearest_rank(jct, 0.99);
  s.queue_mean_s = mean(queue);
  s.makespan_s = r.end - r.start;
  s.throughput_mean = s.makespan_s > 0 ? r.throughput_integral / s.makespan_s : 0;
  for (const auto& [gpu, secs] : r.gpu_seconds) {
    int n = cluster.total_gpus(gpu);
    s.utilisation[gpu] = (n > 0 && s.makespan_s > 0) ? secs / (n * s.makespan_s) : 0;
  }
  s.rounds = static_cast<int>(r.round_wall_s.size());
  s.round_p99_ms = util::percentile_nearest_rank(r.round_wall_s, 0.99) * 1e3;
  s.round_max_ms = r.round_wall_s.empty()
                       ? 0
                       : *std::max_element(r.round_wall_s.begin(), r.round_wall_s.end()) * 1e3;
  return s;
}

std::string format_summary(const Summary& s, bool with_timing) {
  std::ostringstream o;
  o << "policy " << s.policy << "\n";
  o << "  jobs finished      " << s.finished << " of " << s.jobs;
  if (s.unrunnable) o << " (" << s.unrunnable << " unrunnable)";
  o << "\n";
  o << "  JCT mean/median/p99 " << util::fixed(s.jct_mean_s, 0) << " / " << util::fixed(s.jct_median_s, 0)
    << " / " << util::fixed(s.jct_p99_s, 0) << " s\n";
  if (!s.jct_mean_by_kind_s.empty()) {
    o << "  JCT mean by kind  ";
    for (const auto& [kind, v] : s.jct_mean_by_kind_s) o << " " << kind << " " << util::fixed(v, 0);
    o << " s\n";
  }
  o << "  queueing mean      " << util::fixed(s.queue_mean_s, 0) << " s\n";
  o << "  makespan           " << util::fixed(s.makespan_s, 0) << " s\n";
  o << "  throughput mean    " << util::fixed(s.throughput_mean, 2) << " samples/s\n";
  o << "  GPU utilisation   ";
  for (const auto& [gpu, u] : s.utilisation) o << " " << gpu << " " << util::fixed(100 * u, 1) << "%";
  o << "\n";
  o << "  reconfigurations   " << s.reconfigurations << "\n";
  if (s.deadlines > 0)
    o << "  deadlines met      " << s.deadlines_met << " of " << s.deadlines << " ("
      << util::fixed(100.0 * s.deadlines_met / s.deadlines, 1) << "%)\n";
  if (with_timing)
    o << "  round time p99/max " << util::fixed(s.round_p99_ms, 2) << " / " << util::fixed(s.round_max_ms, 2)
      << " ms over " << s.rounds << " rounds\n";
  return o.str();
}

std::string format_comparison(const std::vector<Summary>& all) {
  const Summary* base = nullptr;
  for (const Summary& s : all)
    if (s.policy == "crius") base = &s;
  std::ostringstream o;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-15s %8s %10s %10s %10s %10s %10s %12s %8s\n", "policy",
                "finished", "JCT mean", "JCT med", "JCT p99", "queue", "makespan", "throughput",
                "reconf");
  o << buf;
  for (const Summary& s : all) {
    std::snprintf(buf, sizeof buf, "%-15s %8d %10.0f %10.0f %10.0f %10.0f %10.0f %12.2f %8d\n",
                  s.policy.c_str(), s.finished, s.jct_mean_s, s.jct_median_s, s.jct_p99_s,
                  s.queue_mean_s, s.makespan_s, s.throughput_mean, s.reconfigurations);
    o << buf;
  }
  if (base) {
    o << "\nratios against crius (JCT: policy / crius, >1 = crius faster; throughput: crius / "
         "policy)\n";
    std::snprintf(buf, sizeof buf, "%-15s %10s %10s %10s %10s\n", "policy", "JCT mean", "JCT p99",
                  "makespan", "throughput");
    o << buf;
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    for (const Summary& s : all) {
      std::snprintf(buf, sizeof buf, "%-15s %9.2fx %9.2fx %9.2fx %9.2fx\n", s.policy.c_str(),
                    ratio(s.jct_mean_s, base->jct_mean_s), ratio(s.jct_p99_s, base->jct_p99_s),
                    ratio(s.makespan_s, base->makespan_s),
                    ratio(base->throughput_mean, s.throughput_mean));
      o << buf;
    }
  }
  return o.str();
}

nlohmann::json to_json(const std::vector<Summary>& all) {
  nlohmann::json out;
  out["policies"] = nlohmann::json::object();
  for (const Summary& s : all) {
    out["policies"][s.policy] = {{"finished", s.finished},
                                 {"jct_mean_s", s.jct_mean_s},
                                 {"jct_median_s", s.jct_median_s},
                                 {"jct_p99_s", s.jct_p99_s},
                                 {"queue_mean_s", s.queue_mean_s},
                                 {"makespan_s", s.makespan_s},
                                 {"throughput_mean", s.throughput_mean},
                                 {"reconfigurations", s.reconfigurations},
                                 {"deadlines", s.deadlines},
                                 {"deadlines_met", s.deadlines_met}};
    if (!s.jct_mean_by_kind_s.empty()) out["policies"][s.policy]["jct_mean_by_kind_s"] = s.jct_mean_by_kind_s;
  }
  return out;
}

Result<void> write_jobs_csv(const std::string& path, const std::vector<SimResult>& runs) {
  std::ofstream out(path);
  if (!out) return make_error(path + ": cannot write");
  out << "policy,job_id,model,batch_size,req_gpu,req_gpus,submit_s,start_s,finish_s,jct_s,state,"
         "last_gpu,last_gpus,reconfigurations\n";
  for (const SimResult& r : runs)
    for (const Job& j : r.jobs) {
      bool fin = j.state == JobState::finished;
      out << r.policy << ',' << j.name << ',' << j.model << ',' << j.global_batch << ','
          << j.req_gpu << ',' << j.req_gpus << ',' << util::fixed(j.submit_time, 0) << ','
          << (j.first_start >= 0 ? util::fixed(j.first_start, 0) : "") << ','
          << (fin ? util::fixed(j.finish_time, 1) : "") << ','
          << (fin ? util::fixed(j.finish_time - j.submit_time, 1) : "") << ',' << to_string(j.state)
          << ',' << j.alloc.shape.gpu << ',' << (j.alloc.empty() ? 0 : j.alloc.shape.gpus()) << ','
          << j.reconfigurations << '\n';
    }
  if (!out) return make_error(path + ": write failed");
  return {};
}

Result<void> write_plots(const std::string& dir, const std::vector<SimResult>& runs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(dir + ": cannot create: " + ec.message());
  for (const SimResult& r : runs) {
    std::vector<double> jct;
    for (const Job& j : r.jobs)
      if (j.state == JobState::finished) jct.push_back((j.finish_time - j.submit_time) / 3600);
    std::sort(jct.begin(), jct.end());
    std::ofstream cdf(dir + "/jct-" + r.policy + ".dat");
    for (size_t i = 0; i < jct.size(); ++i) cdf << jct[i] << ' ' << double(i + 1) / jct.size() << '\n';
    std::ofstream tl(dir + "/throughput-" + r.policy + ".dat");
    for (const Sample& s : r.timeline)
      tl << (s.time - r.start) / 3600 << ' ' << s.throughput << ' ' << s.busy_gpus << '\n';
    if (!cdf || !tl) return make_error(dir + ": cannot write plot data");
  }
  std::string gp = dir + "/plots.gp";
  {
    std::ofstream g(gp);
    for (const char* term : {"pngcairo size 900,600", "svg size 900,600"}) {
      std::string ext = std::string(term).substr(0, 3) == "png" ? "png" : "svg";
      g << "set terminal " << term << "\nset key bottom right\nset grid\n";
      g << "set output '" << dir << "/jct-cdf." << ext << "'\n";
      g << "set title 'Job completion time CDF'\nset xlabel 'JCT (hours)'\nset ylabel 'fraction of jobs'\n";
      g << "plot ";
      for (size_t i = 0; i < runs.size(); ++i)
        g << (i ? ", " : "") << "'" << dir << "/jct-" << runs[i].policy << ".dat' with steps lw 2 title '"
          << runs[i].policy << "'";
      g << "\nset key top right\nset output '" << dir << "/throughput." << ext << "'\n";
      g << "set title 'Cluster throughput'\nset xlabel 'time (hours)'\nset ylabel 'samples/s'\n";
      g << "plot ";
      for (size_t i = 0; i < runs.size(); ++i)
        g << (i ? ", " : "") << "'" << dir << "/throughput-" << runs[i].policy
          << ".dat' with lines lw 1.5 title '" << runs[i].policy << "'";
      g << "\nset output '" << dir << "/gpus." << ext << "'\n";
      g << "set title 'GPUs in use'\nset xlabel 'time (hours)'\nset ylabel 'GPUs'\n";
      g << "plot ";
      for (size_t i = 0; i < runs.size(); ++i)
        g << (i ? ", " : "") << "'" << dir << "/throughput-" << runs[i].policy
          << ".dat' using 1:3 with steps lw 1.5 title '" << runs[i].policy << "'";
      g << "\nunset output\n";
    }
  }
  std::string cmd = "gnuplot '" + gp + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return make_error("cannot run gnuplot");
  std::string output;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) output += buf;
  int rc = pclose(p);
  if (rc != 0) return make_error("gnuplot failed: " + output);
  return {};
}

}  // namespace crius::scheduler
