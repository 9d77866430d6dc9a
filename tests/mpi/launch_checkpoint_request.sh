#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# criusd's checkpoint request (the signal it sends crius-launch, USR1 by default) never kills a
# rank whose program did not ask for it: real Python ranks (Debian's python3) under crius-launch,
# one without a handler, one with. Each rank passes the request on as the job's checkpoint signal
# (--checkpoint-signal: TERM for a Megatron-LM job), and only to a program that handles it.
# A job resumed under another plan than its checkpoint's sees that plan (CRIUS_PREV_*), and its
# --pre-resume hook runs once before any rank, or stops the job.
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON CRIUS_CHECKPOINT_SIGNAL
py=/usr/bin/python3
[ -x "$py" ] || { echo "python3 not installed"; exit 77; }

# A rank that handles SIG (or none) writes got.RANK when it arrives; every rank waits up to 5 s
# for it, then ends normally.
cat >prog.py <<'PY'
import os, signal, sys, time
rank, sig = os.environ["RANK"], sys.argv[1]
if sig != "none" and rank in sys.argv[2].split(","):
    signal.signal(getattr(signal, "SIG" + sig), lambda s, f: open(f"got.{rank}", "w").write(signal.Signals(s).name))
open(f"ready.{rank}", "w").close()
for _ in range(50):
    if os.path.exists(f"got.{rank}"):
        break
    time.sleep(0.1)
print(f"rank {rank} ended normally", flush=True)
PY
# run NAME SIGNAL-FOR-THE-PROGRAM HANDLING-RANKS [crius-launch options]: sends USR1 to crius-launch
# once every rank is ready.
run() {
  local name=$1 sig=$2 ranks=$3; shift 3
  rm -f ready.* got.*
  crius-launch --dp 2 "$@" -- "$py" prog.py "$sig" "$ranks" >"$name.out" 2>&1 &
  local l=$!
  for _ in $(seq 1 150); do [ -e ready.0 ] && [ -e ready.1 ] && break; sleep 0.2; done
  [ -e ready.1 ] || { kill "$l"; cat "$name.out"; fail "$name: ranks did not start"; }
  kill -USR1 "$l"
  wait "$l"
  rc=$?
  [ $rc = 0 ] || { cat "$name.out"; fail "$name: crius-launch exit $rc: a rank did not survive the request"; }
  # Counted by rank, not by line: mpirun may forward two ranks' lines as one.
  [ "$(grep -o 'rank [0-9]* ended normally' "$name.out" | sort -u | wc -l)" = 2 ] ||
    { cat "$name.out"; fail "$name: not every rank ended normally"; }
}

# 1. The defaults: rank 1 handles USR1 and gets it; rank 0 has no handler and is not killed.
run default USR1 1
[ "$(cat got.1)" = SIGUSR1 ] || fail "default: rank 1 did not get SIGUSR1"
[ ! -e got.0 ] || fail "default: rank 0 got a signal it has no handler for"
grep -q "rank 0: checkpoint request not passed on as SIGUSR1: '$py' has no handler for it" default.out ||
  { cat default.out; fail "default: rank 0's skipped request not reported"; }

# 2. No handler anywhere (the issue's python3 -c 'time.sleep'): both ranks live on.
run none-handles USR1 ""
[ ! -e got.0 ] && [ ! -e got.1 ] || fail "none-handles: a rank got a signal"

# 3. A Megatron-style job: the request reaches the program as SIGTERM, which it handles.
run term TERM 0,1 --checkpoint-signal TERM
[ "$(cat got.0)" = SIGTERM ] && [ "$(cat got.1)" = SIGTERM ] || { cat term.out; fail "term: the ranks did not get SIGTERM"; }
# ... and a program without a SIGTERM handler is not killed by it.
run term-unhandled TERM "" --checkpoint-signal TERM
grep -q "not passed on as SIGTERM" term-unhandled.out || fail "term-unhandled: not reported"

# 4. none: the job saves on its own schedule; nothing is passed on (here: no SIGTERM to a program
# that handles it; the request itself, USR1, may reach a program of its own accord, as Slurm
# signals every process of a step).
run nothing TERM 0,1 --checkpoint-signal none
[ ! -e got.0 ] && [ ! -e got.1 ] || fail "nothing: a rank got a signal"

# 5. A bad name is a usage error naming it; Megatron's hand-over turns its signal handler on.
out=$(crius-launch --dp 2 --checkpoint-signal KILL -- true 2>&1); rc=$?
[ $rc = 2 ] && grep -q "'KILL' is not a checkpoint signal (USR1, USR2, TERM, INT, HUP, URG or none)" <<<"$out" ||
  fail "--checkpoint-signal KILL: exit $rc: $out"
crius-launch --tp 2 --pp 2 --layers 24 --framework megatron --model bert__1.3B --cluster "$TOP/etc/crius/examples/paper-sim.toml" \
  --print-args >megatron.args || fail "megatron hand-over failed"
grep -q -- "--exit-signal-handler" megatron.args || fail "Megatron-LM's SIGTERM handler was not turned on"
crius-launch --tp 2 --pp 2 --layers 24 --framework megatron --model bert__1.3B --cluster "$TOP/etc/crius/examples/paper-sim.toml" \
  --checkpoint-signal none --print-args >none.args || fail "megatron hand-over failed"
! grep -q -- "--exit-signal-handler" none.args || fail "--exit-signal-handler without a SIGTERM checkpoint"

# 6. Resumed under another plan: the hook runs once, first; the ranks see the previous plan.
prev='{"version":1,"stages":[{"tp":1,"dp":1}]}'
rm -f hook.* rank.*
CRIUS_PREV_PLAN_JSON=$prev CRIUS_PREV_CELL=a100:1x1:1 crius-launch --dp 2 \
  --pre-resume 'echo "$CRIUS_PREV_CELL $CRIUS_PREV_PLAN_JSON" >>hook.out; ls rank.* >hook.ranks 2>&1 || true' \
  -- sh -c 'echo "$CRIUS_PREV_PLAN_HASH $CRIUS_PLAN_HASH" >rank.$RANK' >resume.out 2>&1 || { cat resume.out; fail "resume: launch failed"; }
[ "$(wc -l <hook.out)" = 1 ] || fail "resume: the hook ran $(wc -l <hook.out) times"
grep -q '^a100:1x1:1 {.*"stages":\[{"dp":1,"tp":1}\]' hook.out || fail "resume: the hook did not see the previous Cell and plan: $(cat hook.out)"
grep -q "No such file" hook.ranks || fail "resume: a rank started before the hook"
read -r ph nh <rank.1
[ -n "$ph" ] && [ "$ph" != "$nh" ] || fail "resume: rank 1 did not get the previous plan's hash ($ph, now $nh)"
# The same plan: nothing to convert, no hook.
rm -f hook.out
CRIUS_PREV_PLAN_JSON='{"version":1,"stages":[{"tp":1,"dp":2}]}' crius-launch --dp 2 --pre-resume 'echo ran >>hook.out' -- true ||
  fail "same plan: launch failed"
[ ! -e hook.out ] || fail "same plan: the hook ran"
# A failing hook stops the job before any rank.
rm -f rank.*
CRIUS_PREV_PLAN_JSON=$prev crius-launch --dp 2 --pre-resume 'exit 3' -- sh -c 'touch rank.$RANK' >fail.out 2>&1
rc=$?
[ $rc = 1 ] && grep -q -- "--pre-resume failed (exit status 3); no rank started" fail.out || { cat fail.out; fail "failing hook: exit $rc"; }
! ls rank.* >/dev/null 2>&1 || fail "failing hook: a rank started"
echo "launch_checkpoint_request passed"
