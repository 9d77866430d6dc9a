#!/usr/bin/env bash
# One rank dying stops every rank within 10 s, and crius-launch's exit status and
# last message say which rank and host failed.
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
command -v bc >/dev/null || { echo "SKIP: bc not installed"; exit 77; }
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON
host=$(hostname)

# A rank killed by SIGKILL while training.
crius-launch --tp 2 --pp 2 -- bash -c 'echo $$ >pid.$RANK; exec crius-train --steps 1000000 -q' >kill.out 2>&1 &
launcher=$!
for _ in $(seq 1 150); do [ -s pid.0 ] && [ -s pid.1 ] && [ -s pid.2 ] && [ -s pid.3 ] && break; sleep 0.2; done
[ -s pid.2 ] || { kill "$launcher"; fail "ranks did not start"; }
sleep 2
start=$(date +%s.%N)
kill -9 "$(cat pid.2)"
wait "$launcher"
rc=$?
grep crius-launch kill.out
[ $rc = 137 ] || fail "exit status $rc, want 137 (128 + SIGKILL)"
tail -n 1 kill.out | grep -q "crius-launch: rank 2 on host $host failed (killed by SIGKILL)" || fail "last line does not name rank 2 and host $host"
# Every rank's process is gone within 10 s of the kill.
while :; do
  alive=""
  for r in 0 1 3; do kill -0 "$(cat pid.$r)" 2>/dev/null && alive="$alive $r"; done
  took=$(echo "$(date +%s.%N) - $start" | bc)
  [ -z "$alive" ] && break
  [ "$(echo "$took < 10" | bc)" = 1 ] || fail "ranks$alive still running $took s after rank 2 was killed"
  sleep 0.1
done
echo "crius-launch returned and all ranks were gone $took s after the kill"

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
echo "all launch_kill checks passed"
