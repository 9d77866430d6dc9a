#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-launch --rank-shim sh: every rank's environment from POSIX sh alone (no crius binary, no
# libslurm where the rank runs: a container image) is the environment crius-launch's own shim
# gives the same rank, for plans with DP, TP and PP; the command that starts the ranks names no
# crius program; a program without a USR1 handler ignores the request; plans with per-stage
# shapes are refused.
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON CRIUS_CHECKPOINT_SIGNAL
cat >dump.sh <<'SH'
#!/bin/sh
env | grep -E '^(RANK|LOCAL_RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|GROUP_RANK|MASTER_ADDR|MASTER_PORT|CRIUS_[A-Z_]*)=' | sort >"$1.$RANK"
SH
chmod +x dump.sh
for plan in "--tp 2 --dp 2" "--tp 2 --pp 2 --layers 8" "--dp 2 --pp 2 --layers 6"; do
  rm -f crius.* sh.*
  crius-launch $plan --master-port 29611 -- ./dump.sh crius >/dev/null 2>&1 || fail "$plan: crius shim launch failed"
  crius-launch $plan --master-port 29611 --rank-shim sh -v -- ./dump.sh sh >sh.log 2>&1 || { cat sh.log; fail "$plan: sh shim launch failed"; }
  for r in 0 1 2 3; do
    [ -s "crius.$r" ] || fail "$plan: rank $r did not run under the crius shim"
    diff "crius.$r" "sh.$r" >diff.out || { cat diff.out; fail "$plan: rank $r's environment differs between the shims"; }
  done
  grep -q "/bin/sh -c" sh.log && ! grep -q -- "--rank-exec" sh.log || fail "$plan: the ranks were not started by sh alone"
done
# A resumed job: both shims give every rank the plan its checkpoint was saved under.
rm -f crius.* sh.*
export CRIUS_PREV_PLAN_JSON='{"version":1,"stages":[{"tp":1,"dp":1}]}' CRIUS_PREV_CELL=a100:1x1:1
crius-launch --dp 2 --master-port 29611 -- ./dump.sh crius >/dev/null 2>&1 || fail "resumed: crius shim launch failed"
crius-launch --dp 2 --master-port 29611 --rank-shim sh -- ./dump.sh sh >/dev/null 2>&1 || fail "resumed: sh shim launch failed"
unset CRIUS_PREV_PLAN_JSON CRIUS_PREV_CELL
for r in 0 1; do
  grep -q '^CRIUS_PREV_PLAN_HASH=' "sh.$r" || fail "resumed: rank $r of the sh shim lacks CRIUS_PREV_*"
  diff "crius.$r" "sh.$r" >diff.out || { cat diff.out; fail "resumed: rank $r's environment differs between the shims"; }
done
# A request to a program without a handler: ignored, the rank lives on.
cat >sleeper.sh <<'SH'
#!/bin/sh
touch "ready.$RANK"; sleep 3; echo "rank $RANK ended normally"
SH
chmod +x sleeper.sh
rm -f ready.*
crius-launch --dp 2 --rank-shim sh -- ./sleeper.sh >req.out 2>&1 & l=$!
for _ in $(seq 50); do [ -e ready.0 ] && [ -e ready.1 ] && break; sleep 0.1; done
kill -USR1 "$l"; wait "$l"; rc=$?
[ $rc = 0 ] && [ "$(grep -c 'ended normally' req.out)" = 2 ] || { cat req.out; fail "a USR1 request killed a rank (exit $rc)"; }
# Per-stage shapes: refused, saying why.
cat >shapes.json <<'J'
{"version":1,"stages":[{"layers":[0,4],"tp":2,"dp":1},{"layers":[4,8],"tp":1,"dp":1}]}
J
out=$(crius-launch --plan shapes.json --rank-shim sh -- true 2>&1); rc=$?
[ $rc = 2 ] && grep -q "the sh shim runs uniform plans only" <<<"$out" || fail "shapes: exit $rc: $out"
out=$(crius-launch --dp 2 --rank-shim bash -- true 2>&1); rc=$?
[ $rc = 2 ] && grep -q "'bash' is not crius or sh" <<<"$out" || fail "--rank-shim bash: exit $rc: $out"
echo "launch_container passed"
