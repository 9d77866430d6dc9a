// SPDX-FileCopyrightText: 2026 The crius developers
// SPDX-License-Identifier: GPL-2.0-or-later
// framework-cases --framework F TOP [--no-rule]: every plan crius offers a job of framework F
// (megatron:X.Y or torchtitan:X.Y), as crius-launch --framework hands it over, one JSON line each:
//   {"world": N, "what": "model in cell (runtime)", "args": [...]}
// for every catalogue model F trains, over every Cell of the shipped example clusters, with each
// runtime profile F runs. One plan per shape of what the framework checks: per model and
// megatron-core profile each (TP, stages up to 9, split kind, interleaving, recomputation, SP,
// ZeRO, EP; for torchtitan also DP > 1 and micro-batches > 1); the megatron profile, whose plans differ only in the
// switches' flags, once per (family, split kind, interleaving, TP > 1, SP, ZeRO, EP > 1).
// --no-rule (torchtitan): the plans searched as for crius-train, handed over without the rule,
// to show that torchtitan's own checks refuse what the rule keeps from its jobs.
// Input of tests/cli/megatron_validate.sh and tests/cli/torchtitan_validate.sh.
#include <cstdio>
#include <iostream>
#include <numeric>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "estimator/estimator.h"
#include "launcher/megatron.h"
#include "launcher/torchtitan.h"

namespace est = crius::estimator;

int main(int argc, char** argv) {
  const bool no_rule = argc == 5 && std::string(argv[4]) == "--no-rule";
  if ((argc != 4 && !no_rule) || std::string(argv[1]) != "--framework") {
    std::cerr << "usage: framework-cases --framework megatron:X.Y|torchtitan:X.Y TOP [--no-rule]\n";
    return 2;
  }
  auto f = est::parse_framework(argv[2]);
  if (!f || f->kind == est::Framework::Kind::crius_train) {
    std::cerr << "framework-cases: --framework: " << (f ? "crius-train runs every plan" : f.error()) << "\n";
    return 2;
  }
  const bool titan = f->kind == est::Framework::Kind::torchtitan;
  if (no_rule && !titan) {
    std::cerr << "framework-cases: --no-rule is for torchtitan\n";
    return 2;
  }
  const std::string top = argv[3];
  std::set<std::string> seen;
  int plans = 0, failed = 0;
  for (const char* file : {"/etc/crius/examples/dgx-h100.toml", "/etc/crius/examples/paper-sim.toml",
                           "/etc/crius/examples/paper-testbed.toml", "/etc/crius/crius.toml"}) {
    auto c = est::load_cluster(top + file, top + "/etc/crius");
    if (!c) {
      std::cerr << "framework-cases: " << c.error() << "\n";
      return 1;
    }
    for (est::Runtime rt : {est::Runtime::megatron_core, est::Runtime::megatron})
      for (const est::Model& m : c->models.models()) {
        if (!est::check_request(*f, m, rt)) continue;
        const est::StackSwitches stack = c->gpus.runtime(rt).stack;
        est::Request req;
        req.model = m;
        req.global_batch = 512;
        req.runtime = rt;
        req.framework = no_rule ? est::Framework{} : *f;
        for (const est::Estimate& e : est::rank_cells(req, *c, {}, {})) {
          if (!e.feasible) continue;
          const est::Plan& p = e.plan;
          // The torchtitan rule refuses the megatron profile's unfused attention for every plan.
          if (no_rule && !est::check_plan(*f, m, p, &stack) &&
              est::check_plan(*f, m, p, &stack).error().find("fused_attention") != std::string::npos)
            continue;
          ++plans;
          auto a = no_rule ? crius::Result<std::vector<std::string>>(crius::launcher::torchtitan_flags_unchecked(p, m, stack, *f))
                   : titan ? crius::launcher::torchtitan_args(p, m, stack, *f)
                           : crius::launcher::megatron_args(p, m, stack, *f);
          if (!a) {
            std::cerr << "framework-cases: " << m.id << " in " << est::describe(e.cell) << ": " << a.error() << "\n";
            ++failed;
            continue;
          }
          const int tp = p.stages[0].tp, pp = p.pp(), dp = p.stages[0].dp,
                    ep = m.family == est::Family::moe && p.expert_parallel ? std::gcd(m.experts, dp) : 1;
          bool even = true;
          for (const auto& st : p.stages) even = even && st.layer_end - st.layer_begin == p.stages[0].layer_end - p.stages[0].layer_begin;
          const std::string split = std::string(p.uniform() ? "" : "shapes ") + (even ? "even" : "uneven");
          const std::string shape = std::to_string(static_cast<int>(rt)) + split + est::to_string(p.schedule) +
                                    std::string(est::to_string(p.recompute)) + (p.sequence_parallel ? "sp" : "") +
                                    std::to_string(p.zero) + (titan && dp > 1 ? "dp" : "") +
                                    (titan && p.micro_batches > 1 ? "mb" : "");
          const std::string key = rt == est::Runtime::megatron_core
                                      ? m.id + " " + shape + " tp" + std::to_string(tp) + " pp" + std::to_string(std::min(pp, 9)) +
                                            " ep" + std::to_string(ep)
                                      : std::to_string(static_cast<int>(m.family)) + " " + shape + (tp > 1 ? " tp" : "") +
                                            (ep > 1 ? " ep" : "");
          if (!seen.insert(key).second) continue;
          nlohmann::json j = {{"world", p.world_size()},
                              {"what", m.id + " in " + est::describe(e.cell) + " (" + std::string(est::to_string(rt)) + ")"},
                              {"args", *a}};
          // What the estimate took the model to be, for the check against torchtitan's flavor.
          if (titan)
            j["dims"] = {{"layers", m.layers}, {"hidden", m.hidden}, {"heads", m.heads},
                         {"kv_heads", m.kv_heads ? m.kv_heads : m.heads}, {"ffn_hidden", m.ffn_hidden}};
          std::cout << j.dump() << "\n";
        }
      }
  }
  std::cerr << "framework-cases: " << plans << " plans, " << seen.size() << " shapes kept, " << failed
            << " not handed over\n";
  return failed ? 1 : 0;
}
