#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The crius policy's ablation (as the Crius paper's crius-ns/-nh/-no): each mechanism turned
# off alone (crius-sim --crius-without), the multi-step search turned on (--search-depth) and a
# wider search (--search-fits, --search-jobs),
# against sia and fcfs, on the testbed trace and the three simulation traces, with the flat and
# the paper's restart model, noisy truth over --truth-seed 1..SEEDS (3).
# Per cell: mean JCT over the seeds, and the jobs (summed over the seeds) whose JCT is more than
# 3x their fcfs JCT of the same seed. Takes about 15 minutes on 2 cores, sia on philly most of it;
# SIM_TRACES="testbed venus pai" runs a subset.
set -eu
if [ -z "${TEST_TMP:-}" ]; then TEST_TMP=$(mktemp -d); trap 'rm -rf "$TEST_TMP"' EXIT; fi
cd "$TEST_TMP"
data=${CRIUS_ARENA_DATA:-$TOP/../shared/data/arena}
table=()
[ -f "$data/measured-calibration.csv" ] && table=(--throughput-table "$data/measured-calibration.csv") ||
  echo "note: $data/measured-calibration.csv missing: the noisy truth is the estimator's alone"
seeds=${SEEDS:-3}
variants=("crius:" "depth-2:--search-depth 2" "wide:--search-fits 32 --search-jobs 64"
  "wide+depth-2:--search-fits 32 --search-jobs 64 --search-depth 2" "-search:--crius-without search"
  "-scaling:--crius-without scaling" "-type-change:--crius-without type-change"
  "-migration:--crius-without migration" "-opportunistic:--crius-without opportunistic"
  "-upgrade:--crius-without upgrade")
for t in ${SIM_TRACES:-testbed venus pai philly}; do
  if [ "$t" = testbed ]; then
    trace=$TOP/tests/data/traces/runtime_trace.csv cluster=$TOP/etc/crius/examples/paper-testbed.toml scale=1
  else
    trace=$TOP/tests/data/traces/simulate_trace_$t.csv cluster=$TOP/etc/crius/examples/paper-sim.toml scale=0.2
  fi
  [ -f "$trace" ] && [ -f "$cluster" ] || { echo "skip $t: $trace or $cluster missing"; continue; }
  for restart in flat paper; do
    for seed in $(seq "$seeds"); do
      run() {  # NAME POLICY ARGS...
        local name=$1 policy=$2; shift 2
        crius-sim --trace "$trace" --cluster "$cluster" --policy "$policy" --objective throughput --iter-scale $scale \
          --restart-model $restart --truth-seed "$seed" "${table[@]}" "$@" --jobs-csv "$t.$restart.$seed.$name.csv" \
          >/dev/null 2>"$t.$restart.$seed.$name.err" || { cat "$t.$restart.$seed.$name.err"; exit 1; }
      }
      run fcfs fcfs
      run sia sia
      for v in "${variants[@]}"; do
        # shellcheck disable=SC2086  # the variant's options split on purpose
        run "${v%%:*}" crius ${v#*:}
      done
    done
  done
done
names=("${variants[@]%%:*}")
python3 - "$seeds" "${names[*]} sia" ./*.csv <<'PY'
import collections, csv, statistics, sys
seeds = int(sys.argv[1])
order = sys.argv[2].split()
runs = collections.defaultdict(dict)  # (trace, restart) -> name -> seed -> {job: row}
for f in sys.argv[3:]:
    t, restart, seed, name = f[2:-4].split(".", 3)
    runs[(t, restart)].setdefault(name, {})[seed] = {r["job_id"]: r for r in csv.DictReader(open(f))}
for (t, restart), by in sorted(runs.items()):
    print(f"--- {t}, {restart} restart: mean JCT (s) over {seeds} seeds, jobs over 3x their fcfs JCT")
    for name in order:
        per_seed = by[name]
        means, over = [], 0
        for seed, jobs in per_seed.items():
            fcfs = by["fcfs"][seed]
            done = [j for j in jobs.values() if j["state"] == "finished"]
            means.append(statistics.mean(float(j["jct_s"]) for j in done))
            over += sum(1 for j in done if fcfs[j["job_id"]]["state"] == "finished"
                        and float(j["jct_s"]) > 3 * float(fcfs[j["job_id"]]["jct_s"]))
        print(f"{name:16s} {statistics.mean(means):10,.0f} {over:4d}   seeds: " +
              " ".join(f"{m:,.0f}" for m in means))
PY
