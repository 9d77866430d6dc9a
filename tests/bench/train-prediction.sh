#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-train's measured iteration time against the estimator's prediction for the same plan
# on this machine, over plans of 1, 2 and 4 ranks: on the profile crius-train measures at
# start alone ("uncalibrated"), and with crius-profile's calibration of this machine for that
# many ranks ("calibrated": its attention and memory efficiencies and measured MPI
# collectives, crius-profile(1)). Every rank is bound to its own share of the cores
# (crius-launch --bind-cpus), four ranks two to a core, in the calibration as in the runs.
# Each plan runs TRAIN_PREDICTION_REPEAT times (3): a machine shared with others slows
# whole runs down now and then, and the median run is the figure.
set -eu
# Scratch files go to the runner's folder (tests/bench/run), or to a fresh one when run alone.
if [ -z "${TEST_TMP:-}" ]; then TEST_TMP=$(mktemp -d); trap 'rm -rf "$TEST_TMP"' EXIT; fi
cd "$TEST_TMP"
command -v mpirun >/dev/null || { echo "skip: mpirun not installed"; exit 0; }
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON
shape="--hidden 128 --ffn 512 --heads 8 --seq 64 --layers 4"
model="$shape --steps 6 --warmup 2 -q"
for n in 1 2 4; do
  crius-launch -n $n --bind-cpus -- crius-profile $shape --out "cal-$n.toml" -q --check </dev/null >"cal-$n.out" 2>&1 ||
    { cat "cal-$n.out"; exit 1; }
  sed -n 's/^crius-profile: \(fp.*step.*\)/  calibration at '"$n"' ranks, \1/p' "cal-$n.out"
done
repeat=${TRAIN_PREDICTION_REPEAT:-3}
echo "  each plan run $repeat times; the run of median measured/calibrated is shown, with the range of that ratio"
printf '%-34s %5s %11s %11s %9s %11s %9s %11s\n' plan ranks measured_s uncal_s meas/unc calib_s meas/cal cal_range
i=0
while IFS=$'\t' read -r ranks launch train; do
  i=$((i + 1))
  for k in $(seq "$repeat"); do
    crius-launch $launch --bind-cpus -- crius-train $model $train --calibration "cal-$ranks.toml" --report "r$i-$k.json" \
      </dev/null >"r$i-$k.out" 2>&1 || { cat "r$i-$k.out"; exit 1; }
  done
  python3 - r$i-*.json <<'PY'
import json, sys
runs = []
for f in sys.argv[1:]:
    j = json.load(open(f))
    e, m = j["estimate"]["iter_time_s"], j["median_iteration_time_s"]
    runs.append((m / e, j, e, m, j["estimate"]["calibration"]["uncalibrated_iter_time_s"]))
runs.sort(key=lambda r: r[0])
ratio, j, e, m, u = runs[len(runs) // 2]
p = j["plan"]
shape = ",".join(f"tp{s['tp']}dp{s['dp']}" for s in p["stages"])
name = f"pp{len(p['stages'])} {shape} mb{p['micro_batches']} {p['schedule']} {j['dtype']}"
spread = f"{runs[0][0]:.2f}-{runs[-1][0]:.2f}"
print(f"{name:<34} {j['ranks']:5d} {m:11.4f} {u:11.4f} {m / u:9.2f} {e:11.4f} {ratio:9.2f} {spread:>11}")
PY
done <<'PLANS'
1	-n 1	--samples 8
1	-n 1	--samples 8 --dtype fp32
2	--dp 2	--samples 8
2	--tp 2	--samples 8
2	--pp 2 --layers 4	--samples 8
2	--pp 2 --layers 4 --micro-batches 4 --schedule gpipe	--samples 2
2	--pp 2 --layers 4 --micro-batches 4	--samples 2
4	--dp 4	--samples 8
4	--tp 2 --dp 2	--samples 8
4	--tp 2 --pp 2 --layers 4 --micro-batches 2	--samples 4
PLANS
