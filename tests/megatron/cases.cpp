// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// megatron-cases --framework megatron:X.Y TOP: every plan crius offers a Megatron-LM job of that
// release, as crius-launch --framework hands it over, one JSON line each:
//   {"world": N, "what": "model in cell (runtime)", "args": [...]}
// for every catalogue model Megatron trains, over every Cell of the shipped example clusters,
// with both Megatron runtime profiles. One plan per shape of what Megatron checks: per model and
// megatron-core profile each (TP, stages up to 9, split kind, interleaving, recomputation, SP,
// ZeRO, EP); the megatron profile, whose plans differ only in the switches' flags, once per
// (family, split kind, interleaving, TP > 1, SP, ZeRO, EP > 1). Megatron-LM 0.19 takes about
// 0.1 s to parse one argument list on 2 cores. Input of tests/cli/megatron_validate.sh, which
// runs Megatron-LM's own argument validation on them.
#include <cstdio>
#include <iostream>
#include <numeric>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "estimator/estimator.h"
#include "launcher/megatron.h"

namespace est = crius::estimator;

int main(int argc, char** argv) {
  if (argc != 4 || std::string(argv[1]) != "--framework") {
    std::cerr << "usage: megatron-cases --framework megatron:X.Y TOP\n";
    return 2;
  }
  auto f = est::parse_framework(argv[2]);
  if (!f || f->kind != est::Framework::Kind::megatron) {
    std::cerr << "megatron-cases: --framework: " << (f ? "not a Megatron release" : f.error()) << "\n";
    return 2;
  }
  const std::string top = argv[3];
  std::set<std::string> seen;
  int plans = 0, failed = 0;
  for (const char* file : {"/etc/crius/examples/dgx-h100.toml", "/etc/crius/examples/paper-sim.toml",
                           "/etc/crius/examples/paper-testbed.toml", "/etc/crius/crius.toml"}) {
    auto c = est::load_cluster(top + file, top + "/etc/crius");
    if (!c) {
      std::cerr << "megatron-cases: " << c.error() << "\n";
      return 1;
    }
    for (est::Runtime rt : {est::Runtime::megatron_core, est::Runtime::megatron})
      for (const est::Model& m : c->models.models()) {
        if (!est::check_request(*f, m, rt)) continue;
        est::Request req;
        req.model = m;
        req.global_batch = 512;
        req.runtime = rt;
        req.framework = *f;
        for (const est::Estimate& e : est::rank_cells(req, *c, {}, {})) {
          if (!e.feasible) continue;
          ++plans;
          auto a = crius::launcher::megatron_args(e.plan, m, c->gpus.runtime(rt).stack, *f);
          if (!a) {
            std::cerr << "megatron-cases: " << m.id << " in " << est::describe(e.cell) << ": " << a.error() << "\n";
            ++failed;
            continue;
          }
          const est::Plan& p = e.plan;
          const int tp = p.stages[0].tp, pp = p.pp(), ep = m.family == est::Family::moe && p.expert_parallel
                                                                  ? std::gcd(m.experts, p.stages[0].dp)
                                                                  : 1;
          std::string split = "even";
          for (const auto& st : p.stages)
            if (st.layer_end - st.layer_begin != p.stages[0].layer_end - p.stages[0].layer_begin) split = "uneven";
          const std::string shape = std::to_string(static_cast<int>(rt)) + split + est::to_string(p.schedule) +
                                    std::string(est::to_string(p.recompute)) + (p.sequence_parallel ? "sp" : "") +
                                    std::to_string(p.zero);
          const std::string key = rt == est::Runtime::megatron_core
                                      ? m.id + " " + shape + " tp" + std::to_string(tp) + " pp" + std::to_string(std::min(pp, 9)) +
                                            " ep" + std::to_string(ep)
                                      : std::to_string(static_cast<int>(m.family)) + " " + shape + (tp > 1 ? " tp" : "") +
                                            (ep > 1 ? " ep" : "");
          if (!seen.insert(key).second) continue;
          nlohmann::json j = {{"world", e.plan.world_size()},
                              {"what", m.id + " in " + est::describe(e.cell) + " (" + std::string(est::to_string(rt)) + ")"},
                              {"args", *a}};
          std::cout << j.dump() << "\n";
        }
      }
  }
  std::cerr << "megatron-cases: " << plans << " plans, " << seen.size() << " shapes kept, " << failed
            << " not handed over\n";
  return failed ? 1 : 0;
}
