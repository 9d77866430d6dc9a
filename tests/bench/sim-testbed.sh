#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Every policy on the artifact's testbed trace (244 jobs) with the paper's testbed cluster
# (16 x 2 A40 + 16 x 2 A10), iterations as in the trace: noisy truth (the default: policies
# decide with the estimator, jobs run at the measured table where it has the shape, else at
# the estimator's speed with a seeded per-shape error) and oracle, each with the flat and the
# paper's restart model; then the deadline mode (EDF baselines, deadline-aware crius). crius
# takes the paper's rule, --objective throughput: in rounds that may move every job (this
# model), the fastest Cell; the live default, adaptive, is tests/bench/live-replay.sh's.
# Paper (testbed): Crius 1.49x FCFS, 1.38x Gavel, 1.20x ElasticFlow-LS throughput.
set -eu
# Scratch files go to the runner's folder (tests/bench/run), or to a fresh one when run alone.
if [ -z "${TEST_TMP:-}" ]; then TEST_TMP=$(mktemp -d); trap 'rm -rf "$TEST_TMP"' EXIT; fi
cd "$TEST_TMP"
data=${CRIUS_ARENA_DATA:-$TOP/../shared/data/arena}
trace=$TOP/tests/data/traces/runtime_trace.csv
cluster=$TOP/etc/crius/examples/paper-testbed.toml
[ -f "$trace" ] && [ -f "$cluster" ] || { echo "skip: $trace or $cluster missing"; exit 0; }
table=()
[ -f "$data/measured-calibration.csv" ] && table=(--throughput-table "$data/measured-calibration.csv") ||
  echo "note: $data/measured-calibration.csv missing: the noisy truth is the estimator's alone"
runs=()
for truth in noisy oracle; do
  for restart in flat paper; do
    crius-sim --trace "$trace" --cluster "$cluster" --policy all --objective throughput --truth "$truth" --restart-model "$restart" \
      "${table[@]}" --timing --json "$truth-$restart.json" >"$truth-$restart.txt" 2>/dev/null
    runs+=("$truth/$restart=$truth-$restart.json")
  done
done
echo "--- mean JCT (s) / throughput (samples/s)"
python3 "$TOP/tests/bench/sim-table.py" "${runs[@]}"
echo
echo "--- crius's rounds (noisy, flat): $(grep -m1 -i 'round' noisy-flat.txt | sed 's/^ *//')"
echo "--- deadline mode (deadline-aware crius, EDF baselines, ElasticFlow-LS as it is)"
for truth in noisy oracle; do
  for restart in flat paper; do
    crius-sim --trace "$trace" --cluster "$cluster" --policy all --objective throughput --deadline-mode --truth "$truth" \
      --restart-model "$restart" "${table[@]}" --json "dl-$truth-$restart.json" >/dev/null 2>&1
  done
done
python3 - dl-noisy-flat.json dl-noisy-paper.json dl-oracle-flat.json dl-oracle-paper.json \
  noisy-flat.json noisy-paper.json oracle-flat.json oracle-paper.json <<'PY'
import json, sys
runs = [(f.replace(".json", ""), json.load(open(f))["policies"]) for f in sys.argv[1:]]
print("| run | " + " | ".join(runs[0][1]) + " |")
print("|---" * (len(runs[0][1]) + 1) + "|")
for label, p in runs:
    print(f"| {label} (deadlines met, mean JCT) | " + " | ".join(
        f"{v['deadlines_met']} ({100 * v['deadlines_met'] / max(1, v['deadlines']):.0f}%), {v['jct_mean_s']:,.0f}"
        for v in p.values()) + " |")
PY
