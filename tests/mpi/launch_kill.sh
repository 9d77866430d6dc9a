#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# One rank dying stops every rank, and crius-launch's exit status and last message say
# which rank and host failed. crius-launch returns only once the MPI launcher has ended, and
# then no rank may be left running; how long that took is printed, not checked (crius-launch
# --kill-timeout is the bound it enforces, tests/bench/launch-overhead.sh the figures).
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON
host=$(hostname)

# A rank killed by SIGKILL while training.
crius-launch --tp 2 --pp 2 -- bash -c 'echo $$ >pid.$RANK; exec crius-train --steps 1000000 -q' >kill.out 2>&1 &
launcher=$!
for _ in $(seq 1 150); do [ -s pid.0 ] && [ -s pid.1 ] && [ -s pid.2 ] && [ -s pid.3 ] && break; sleep 0.2; done
[ -s pid.2 ] || { kill "$launcher"; fail "ranks did not start"; }
sleep 2
start=$(date +%s%N)
kill -9 "$(cat pid.2)"
wait "$launcher"
rc=$?
grep crius-launch kill.out
[ $rc = 137 ] || fail "exit status $rc, want 137 (128 + SIGKILL)"
tail -n 1 kill.out | grep -q "crius-launch: rank 2 on host $host failed (killed by SIGKILL)" || fail "last line does not name rank 2 and host $host"
# No rank is left running (a zombie, dead and not yet reaped, is not running). A rank still
# running after 60 s means the launch hangs.
running() { # the ranks (of 0 1 3) whose process exists and is not a zombie
  local r st
  for r in 0 1 3; do
    st=$(sed 's/.*) //' "/proc/$(cat pid.$r)/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$st" ] && [ "$st" != Z ] && printf ' %s' "$r"
  done
}
for _ in $(seq 600); do alive=$(running); [ -z "$alive" ] && break; sleep 0.1; done
[ -z "$alive" ] || fail "ranks$alive still running after crius-launch returned"
echo "crius-launch returned and all ranks were stopped $(( ($(date +%s%N) - start) / 1000000 )) ms after the kill"

# A rank exiting with a status.
crius-launch -n 3 -- bash -c 'if [ "$RANK" = 1 ]; then exit 5; fi; sleep 60' >exit.out 2>&1
rc=$?
[ $rc = 5 ] || { cat exit.out; fail "rank exiting 5: crius-launch exit $rc"; }
tail -n 1 exit.out | grep -q "rank 1 on host $host failed (exit status 5)" || { cat exit.out; fail "exit message"; }
# A program that cannot be run.
crius-launch -n 2 -- ./no-such-program >nx.out 2>&1
rc=$?
[ $rc = 127 ] || { cat nx.out; fail "missing program: exit $rc, want 127"; }
grep -q "cannot run './no-such-program'" nx.out || fail "missing program message"
# A rank that prints a failure line of crius-launch's form with a number out of range: the
# line is passed on, not parsed into a crash (it threw std::out_of_range out of std::stoi).
crius-launch -n 1 -- bash -c 'echo "crius-launch: rank 99999999999 on host x failed: no [status 99999999999]" >&2; exit 4' >big.out 2>&1
rc=$?
[ $rc = 4 ] || { cat big.out; fail "a rank's out-of-range failure line: crius-launch exit $rc, want 4"; }
grep -q "rank 99999999999 on host x failed" big.out || fail "the rank's line was not passed on"
echo "all launch_kill checks passed"
