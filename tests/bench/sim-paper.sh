#!/usr/bin/env bash
# Every policy on the artifact's simulation traces (philly 1,938 jobs, venus
# 438, pai 125) with the paper's 1,280-GPU cluster, as the artifact's simulator
# ran them: iterations divided by 5 (--iter-scale 0.2), rounds of 300 s.
# Paper (simulation): mean JCT 81% lower than FCFS, 77% than Gavel, 75% than Sia.
# Takes several minutes (philly with sia and elasticflow-ls is the longest).
# SIM_TRACES="venus pai" runs a subset.
set -eu
data=${CRIUS_ARENA_DATA:-$TOP/../shared/data/arena}
cluster=$TOP/etc/crius/examples/paper-sim.toml
[ -f "$cluster" ] || { echo "skip: $cluster missing"; exit 0; }
for t in ${SIM_TRACES:-philly venus pai}; do
  trace=$TOP/tests/data/traces/simulate_trace_$t.csv
  [ -f "$trace" ] || { echo "skip $t: $trace missing"; continue; }
  echo "--- $t"
  start=$(date +%s)
  crius-sim --trace "$trace" --cluster "$cluster" --policy all --iter-scale 0.2 --timing \
    --json "sim-$t.json" 2>unrunnable.txt | sed -n '/^policy  /,$p'
  echo "unrunnable reports: $(wc -l <unrunnable.txt) (per policy: $(sed -E 's/^crius-sim: ([^:]+):.*/\1/' unrunnable.txt | sort | uniq -c | tr '\n' ' '))"
  python3 - "sim-$t.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["policies"]
c = p["crius"]["jct_mean_s"]
print("mean JCT of crius vs: " + ", ".join(
    f"{n} {100 * (1 - c / v['jct_mean_s']):+.0f}%".replace("+", "-", 1) if c < v["jct_mean_s"]
    else f"{n} +{100 * (c / v['jct_mean_s'] - 1):.0f}%" for n, v in p.items() if n != "crius"))
PY
  echo "wall time $(( $(date +%s) - start )) s"
done
