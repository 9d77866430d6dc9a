// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// crius-import-sacct: a site's sacct history as a crius-sim trace (crius-import-sacct(1)).
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "common/util.h"
#include "estimator/estimator.h"
#include "scheduler/sacct_import.h"

namespace {
constexpr int kExitNone = 1, kExitUsage = 2;
int fail(int code, const std::string& msg) {
  std::cerr << "crius-import-sacct: " << msg << "\n";
  return code;
}
}  // namespace

int main(int argc, char** argv) {
  namespace cs = crius::scheduler;
  namespace ce = crius::estimator;
  CLI::App app{"crius-import-sacct: turn an sacct export into a crius-sim trace"};
  std::string sacct_file, map_file, cluster_file, out_file, runtime_name = "alpa";
  app.add_option("--sacct", sacct_file, "sacct -a -X -P -o " + crius::util::join(cs::sacct_import_fields(), ",") +
                                            " output (- for standard input)")
      ->required();
  app.add_option("--map", map_file, "the [[rule]] file mapping jobs to models and global batches")->required();
  app.add_option("--cluster", cluster_file, "crius.toml of the cluster the jobs ran on")->required();
  app.add_option("--runtime", runtime_name, "runtime profile of the estimates: alpa (crius-sim's default), megatron or megatron-core");
  app.add_option("--out", out_file, "write the trace here (default: standard output)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(kExitUsage, e.what());
  }
  auto runtime = ce::parse_runtime(runtime_name);
  if (!runtime) return fail(kExitUsage, "--runtime: " + runtime.error());
  auto cluster = ce::load_cluster(cluster_file);
  if (!cluster) return fail(kExitUsage, cluster.error());
  auto rules = cs::load_import_rules(map_file, cluster->models);
  if (!rules) return fail(kExitUsage, rules.error());
  std::string text;
  if (sacct_file == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    auto t = crius::util::read_file(sacct_file);
    if (!t) return fail(kExitUsage, t.error());
    text = std::move(*t);
  }
  const std::string source = sacct_file == "-" ? "(standard input)" : sacct_file;
  auto rep = cs::import_sacct(text, source, *rules, *cluster, *runtime);
  if (!rep) return fail(kExitUsage, rep.error());
  for (const auto& n : rep->notes) std::cerr << "crius-import-sacct: left out " << n << "\n";
  std::cerr << "crius-import-sacct: " << rep->jobs.size() << " jobs imported; left out: " << rep->no_gpus
            << " without GPUs, " << rep->never_ran << " that never ran, " << rep->unmapped << " that no rule maps, "
            << rep->infeasible << " that do not fit\n";
  const std::string csv = cs::to_trace_csv(*rep, source);
  if (out_file.empty()) {
    std::cout << csv;
  } else {
    std::ofstream out(out_file);
    if (!(out << csv)) return fail(kExitUsage, out_file + ": cannot write");
  }
  return rep->jobs.empty() ? kExitNone : 0;
}
