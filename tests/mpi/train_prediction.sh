#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-train measures this machine (GEMMs at the model's shapes, memory, MPI
# all-reduce) and prints the estimator's iteration time for the plan it runs
# next to the measured one. The prediction reacts to the plan (TP and DP plans
# communicate, a pipeline has a bubble), its breakdown adds up, and crius-train
# says why when there is none. How close prediction and measurement are is a
# timing ratio: tests/bench/train-prediction.sh reports it; the bubble's size
# for a plan is a unit test of the estimator (pipeline_bubble_follows_the_plan).
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON
model="--hidden 64 --ffn 256 --heads 4 --seq 32 --layers 4 --steps 3 -q"
run() {  # NAME LAUNCH-ARGS... -- TRAIN-ARGS...
  local name=$1; shift
  crius-launch "$@" --report "$name.json" >"$name.out" 2>&1 || { cat "$name.out"; fail "$name: exit $?"; }
  grep -E 'measured|estimate' "$name.out"
}
run one -n 1 -- crius-train $model --samples 4
run pp2 --pp 2 --layers 4 -- crius-train $model --samples 4
run tp2 --tp 2 -- crius-train $model --samples 4 --dtype fp32
run dp2 --dp 2 --micro-batches 2 -- crius-train $model --samples 4
python3 - <<'PY' || fail "prediction"
import json
r = {n: json.load(open(n + ".json")) for n in ("one", "pp2", "tp2", "dp2")}
for n, j in r.items():
    est, meas = j["estimate"]["iter_time_s"], j["median_iteration_time_s"]
    p = j["estimate"]["profile"]
    assert p["gemm_gflops"] > 0 and p["memory_gbs"] > 0 and p["allreduce_gbs"] > 0, (n, p)
    assert est > 0 and meas > 0, f"{n}: measured {meas} s, estimated {est} s"
    b = j["estimate"]["breakdown"]
    assert abs(sum(b.values()) - est) <= 1e-6 * est, (n, b, est)
assert r["tp2"]["estimate"]["breakdown"]["tp_comm"] > 0, "no TP communication in a TP plan"
assert r["dp2"]["estimate"]["breakdown"]["dp_comm"] > 0, "no gradient all-reduce in a DP plan"
assert r["pp2"]["estimate"]["breakdown"]["bubble"] > 0, "no bubble in a pipeline"
for n in ("one", "tp2", "dp2"):
    assert r[n]["estimate"]["breakdown"]["bubble"] == 0, f"{n}: a bubble without a pipeline"
assert r["one"]["estimate"]["breakdown"]["tp_comm"] == r["one"]["estimate"]["breakdown"]["dp_comm"] == 0, "one rank communicates"
PY
# No prediction: stages of different shapes, and --no-estimate.
crius-launch --pp 2 --tp 2,1 --dp 1,2 -- crius-train $model --samples 4 >uneven.out 2>&1 || { cat uneven.out; fail "uneven plan failed"; }
grep -q 'no estimate: the estimator costs stages of one shape' uneven.out || { cat uneven.out; fail "no reason for the missing estimate"; }
crius-launch -n 1 -- crius-train $model --samples 4 --no-estimate >none.out 2>&1 || fail "--no-estimate run failed"
! grep -q estimate none.out || { cat none.out; fail "--no-estimate still estimated"; }
echo "ok"
