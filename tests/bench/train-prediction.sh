#!/usr/bin/env bash
# crius-train's measured iteration time against the estimator's prediction for the same plan
# on this machine, over plans of 1, 2 and 4 ranks: on the profile crius-train measures at
# start alone ("uncalibrated"), and with crius-profile's calibration of this machine for that
# many ranks ("calibrated": its attention and memory efficiencies and measured MPI
# collectives, crius-profile(1)). Ranks beyond the cores share them: crius-profile and
# crius-train measure with every rank running, so they see that sharing too.
set -eu
command -v mpirun >/dev/null || { echo "skip: mpirun not installed"; exit 0; }
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON
shape="--hidden 128 --ffn 512 --heads 8 --seq 64 --layers 4"
model="$shape --steps 6 --warmup 2 -q"
for n in 1 2 4; do
  crius-launch -n $n -- crius-profile $shape --samples 8 --out "cal-$n.toml" -q --check </dev/null >"cal-$n.out" 2>&1 ||
    { cat "cal-$n.out"; exit 1; }
  sed -n 's/^crius-profile: \(fp.*step.*\)/  calibration at '"$n"' ranks, \1/p' "cal-$n.out"
done
printf '%-34s %5s %11s %11s %9s %11s %9s\n' plan ranks measured_s uncal_s meas/unc calib_s meas/cal
i=0
while IFS=$'\t' read -r ranks launch train; do
  i=$((i + 1))
  crius-launch $launch -- crius-train $model $train --calibration "cal-$ranks.toml" --report "r$i.json" </dev/null \
    >"r$i.out" 2>&1 || { cat "r$i.out"; exit 1; }
  python3 - "r$i.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["plan"]
shape = ",".join(f"tp{s['tp']}dp{s['dp']}" for s in p["stages"])
name = f"pp{len(p['stages'])} {shape} mb{p['micro_batches']} {p['schedule']} {j['dtype']}"
e, m = j["estimate"]["iter_time_s"], j["median_iteration_time_s"]
u = j["estimate"]["calibration"]["uncalibrated_iter_time_s"]
print(f"{name:<34} {j['ranks']:5d} {m:11.4f} {u:11.4f} {m / u:9.2f} {e:11.4f} {m / e:9.2f}")
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
