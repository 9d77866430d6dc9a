#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-train --verify: every plan (tp, pp, dp) with up to 8 ranks, gpipe and 1f1b,
# recompute, per-stage shapes, fp64 and fp32 -- in one 8-rank job (the driver
# crius-train-allplans runs each plan on the first tp*pp*dp ranks) -- and the real
# path, crius-launch -- crius-train --verify, for a few plans from each plan source.
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
unset CRIUS_PLAN_JSON CRIUS_STAGES CRIUS_STAGE_TP CRIUS_STAGE_DP CRIUS_STAGE_LAYERS SLURM_JOB_ID
crius-launch -n 8 -- "$B/tests/mpi/crius-train-allplans" >allplans.out 2>&1
rc=$?
cat allplans.out
[ $rc = 0 ] || fail "crius-train-allplans: exit $rc"
read -r _ passed failed < <(grep '^ALLPLANS' allplans.out)
[ "$passed" -ge 46 ] && [ "$failed" = 0 ] || fail "all-plans: $passed passed, $failed failed (want >= 46 plans)"

verify() { # name, crius-launch options... -- crius-train options...
  local name=$1; shift
  crius-launch "$@" >"$name.out" 2>&1
  local rc=$?
  grep -E 'verify|error|crius-launch:' "$name.out"
  [ $rc = 0 ] || { tail -20 "$name.out"; fail "$name: exit $rc"; }
  grep -q 'verify PASSED' "$name.out" || fail "$name: no 'verify PASSED'"
  grep -q 'measured iteration time' "$name.out" || fail "$name: no measured iteration time"
}
verify tp2pp2dp2_1f1b --tp 2 --pp 2 --dp 2 --micro-batches 4 --layers 4 -- crius-train --steps 3 --verify -q
CRIUS_PLAN_JSON='{"version":1,"stages":[{"layers":[0,3],"tp":2,"dp":1},{"layers":[3,6],"tp":1,"dp":2}],
  "micro_batches":3,"schedule":"gpipe"}' \
  verify env_shapes_fp32 -- crius-train --steps 3 --verify --dtype fp32 --samples 4 -q
cat > plan.json <<'JSON'
{"plan":{"version":1,"stages":[{"layers":[0,2],"tp":1,"dp":1},{"layers":[2,5],"tp":1,"dp":1},{"layers":[5,6],"tp":1,"dp":1}],
 "micro_batches":5,"micro_batch_size":1,"schedule":"1f1b","recompute":"full"}}
JSON
verify planfile_recompute --plan plan.json -- crius-train --steps 3 --verify -q
# A wrong model for the plan is a clear error, not a crash.
crius-launch --tp 3 -- crius-train --heads 8 --hidden 32 >bad.out 2>&1
rc=$?
[ $rc = 2 ] && grep -q 'tp=3 does not divide the 8 attention heads' bad.out || { cat bad.out; fail "tp=3 with 8 heads: exit $rc"; }
echo "all launch_verify checks passed"
