#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-sim --plot draws PNG and SVG with gnuplot; --throughput-table takes the
# artifact's measured iteration times (missing shapes from the estimator) and
# changes the result; --help lists every option.
set -eu
cluster=$TOP/etc/crius/examples/paper-testbed.toml
trace=$TOP/tests/data/traces/dummy_runtime_trace.csv
[ -f "$cluster" ] || { echo "skip: $cluster not there"; exit 77; }
command -v gnuplot >/dev/null || { echo "skip: gnuplot not installed"; exit 77; }

crius-sim --trace "$trace" --cluster "$cluster" --policy all --plot plots >out.txt
for f in jct-cdf throughput; do
  [ "$(head -c 4 plots/$f.png | od -An -c | tr -d ' ')" = '211PNG' ] || { echo "plots/$f.png is not a PNG"; exit 1; }
  grep -q '<svg' plots/$f.svg
done
[ "$(ls plots/jct-*.dat | wc -l)" -eq 7 ]

# The measured table (artifact data) replaces the estimate where it has the shape.
table=${CRIUS_ARENA_DATA:-$TOP/../shared/data/arena}/measured-calibration.csv
if [ -f "$table" ]; then
  crius-sim --trace "$trace" --cluster "$cluster" --policy fcfs --json est.json >/dev/null
  crius-sim --trace "$trace" --cluster "$cluster" --policy fcfs --throughput-table "$table" --json tab.json >/dev/null
  ! cmp -s est.json tab.json
fi

# A run's speeds saved and read back alone give the same result.
crius-sim --trace "$trace" --cluster "$cluster" --policy all --save-throughput saved.csv >a.txt
crius-sim --trace "$trace" --cluster "$cluster" --policy all --throughput-table saved.csv --table-only >b.txt
cmp a.txt b.txt
grep -q '^model,global_batch,gpu_type,num_nodes,gpus_per_node,iter_time_s,kind,dp_iter_time_s$' saved.csv
if crius-sim --trace "$trace" --cluster "$cluster" --table-only 2>err.txt; then exit 1; fi
grep -q -- '--table-only needs --throughput-table' err.txt

crius-sim --help >help.txt
for o in --trace --cluster --policy --interval --iter-scale --seed --restart-cost --deadline-mode \
         --runtime --framework --throughput-table --table-only --save-throughput --json --jobs-csv --plot \
         --no-check --timing; do
  grep -q -- "$o" help.txt || { echo "--help lacks $o"; exit 1; }
  grep -q -- "${o//-/\\\\-}" "$TOP/man/crius-sim.1" || { echo "man page lacks $o"; exit 1; }
done
echo ok
