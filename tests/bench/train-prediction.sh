#!/usr/bin/env bash
# crius-train's measured iteration time against the estimator's prediction for
# the same plan on this machine's measured CPU profile (crius-train(1)), over
# plans of 1, 2 and 4 ranks. Ranks beyond the cores share them: the profile is
# measured with every rank running, so it sees that sharing too.
set -eu
command -v mpirun >/dev/null || { echo "skip: mpirun not installed"; exit 0; }
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON
model="--hidden 128 --ffn 512 --heads 8 --seq 64 --layers 4 --steps 6 --warmup 2 -q"
printf '%-34s %5s %11s %11s %9s\n' plan ranks measured_s estimated_s meas/est
i=0
while IFS=$'\t' read -r launch train; do
  i=$((i + 1))
  crius-launch $launch -- crius-train $model $train --report "r$i.json" </dev/null >"r$i.out" 2>&1 || { cat "r$i.out"; exit 1; }
  python3 - "r$i.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["plan"]
shape = ",".join(f"tp{s['tp']}dp{s['dp']}" for s in p["stages"])
name = f"pp{len(p['stages'])} {shape} mb{p['micro_batches']} {p['schedule']} {j['dtype']}"
e, m = j["estimate"]["iter_time_s"], j["median_iteration_time_s"]
print(f"{name:<34} {j['ranks']:5d} {m:11.4f} {e:11.4f} {m / e:9.2f}")
PY
done <<'PLANS'
-n 1	--samples 8
-n 1	--samples 8 --dtype fp32
--dp 2	--samples 8
--tp 2	--samples 8
--pp 2 --layers 4	--samples 8
--pp 2 --layers 4 --micro-batches 4 --schedule gpipe	--samples 2
--pp 2 --layers 4 --micro-batches 4	--samples 2
--dp 4	--samples 8
--tp 2 --dp 2	--samples 8
--tp 2 --pp 2 --layers 4 --micro-batches 2	--samples 4
PLANS
