#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Every policy on the artifact's simulation traces (philly 1,938 jobs, venus 438, pai 125)
# with the paper's 1,280-GPU cluster, as the artifact's simulator ran them: iterations
# divided by 5 (--iter-scale 0.2), rounds of 300 s; noisy truth (the default: jobs run at the
# artifact's measured iteration times where they exist, else at the estimator's with a seeded
# per-shape error) and oracle, each with the flat and the paper's restart model.
# Paper (simulation): mean JCT 81% lower than FCFS, 77% than Gavel, 75% than Sia.
# Takes about 15 minutes (philly is the longest). SIM_TRACES="venus pai" runs a subset.
set -eu
# Scratch files go to the runner's folder (tests/bench/run), or to a fresh one when run alone.
if [ -z "${TEST_TMP:-}" ]; then TEST_TMP=$(mktemp -d); trap 'rm -rf "$TEST_TMP"' EXIT; fi
cd "$TEST_TMP"
data=${CRIUS_ARENA_DATA:-$TOP/../shared/data/arena}
cluster=$TOP/etc/crius/examples/paper-sim.toml
[ -f "$cluster" ] || { echo "skip: $cluster missing"; exit 0; }
table=()
[ -f "$data/measured-calibration.csv" ] && table=(--throughput-table "$data/measured-calibration.csv") ||
  echo "note: $data/measured-calibration.csv missing: the noisy truth is the estimator's alone"
for t in ${SIM_TRACES:-philly venus pai}; do
  trace=$TOP/tests/data/traces/simulate_trace_$t.csv
  [ -f "$trace" ] || { echo "skip $t: $trace missing"; continue; }
  echo "--- $t"
  start=$(date +%s)
  runs=()
  for truth in noisy oracle; do
    for restart in flat paper; do
      crius-sim --trace "$trace" --cluster "$cluster" --policy all --objective throughput --iter-scale 0.2 --truth "$truth" \
        --restart-model "$restart" "${table[@]}" --json "$t-$truth-$restart.json" >/dev/null 2>"unrunnable-$truth-$restart.txt"
      runs+=("$truth/$restart=$t-$truth-$restart.json")
    done
  done
  python3 "$TOP/tests/bench/sim-table.py" "${runs[@]}"
  for f in unrunnable-*.txt; do
    [ -s "$f" ] && echo "$f: $(sed -E 's/^crius-sim: ([^:]+):.*/\1/' "$f" | sort | uniq -c | tr '\n' ' ')"
  done
  echo "wall time $(($(date +%s) - start)) s"
done
