#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-lab refuses bad input without waiting for a daemon, with one clear message: a port in
# use, a folder inside the repository, a malformed node SPEC, and a second `up` on a folder whose
# lab is running.
set -u
command -v slurmctld >/dev/null || { echo "slurmctld not installed"; exit 77; }
LAB_CMD=$TOP/scripts/crius-lab
fail() { echo "FAIL: $*"; exit 1; }

# expect RC PATTERN CMD...: CMD exits with RC and its stderr matches PATTERN (a command that
# waits instead of refusing is killed after 60 s and fails with 124)
expect() {
  local want=$1 pat=$2 rc; shift 2
  timeout 60 "$@" >out.txt 2>err.txt; rc=$?
  echo "\$ ${*#"$LAB_CMD"} -> rc $rc: $(head -n 2 err.txt)"
  [ "$rc" = "$want" ] || { cat out.txt err.txt; fail "expected exit $want, got $rc"; }
  grep -Eq -- "$pat" err.txt || fail "stderr does not match '$pat'"
}

# bad SPECs
for spec in '' 'a100' 'a100:2' 'a100:0x8' 'a100:2x0' 'A100:2x8' 'a100:2x8,a100:1x1' 'a100:2x8;rm' 'a100:2x8,,v100:1x1' 'a100:99x8' '-x:1x1'; do
  expect 2 "crius-lab: .*(--nodes|SPEC)" "$LAB_CMD" up --dir "$TEST_TMP/bad" --nodes "$spec"
done
expect 2 "unknown option '--bogus'" "$LAB_CMD" up --dir "$TEST_TMP/bad" --nodes a100:1x1 --bogus
expect 2 "unknown command" "$LAB_CMD" start --dir "$TEST_TMP/bad"
expect 2 "--dir DIR is required" "$LAB_CMD" up --nodes a100:1x1
expect 1 "no lab in" "$LAB_CMD" exec --dir "$TEST_TMP/bad" -- true
expect 2 "no command given" "$LAB_CMD" exec --dir "$TEST_TMP/bad"
[ -z "$(ls -A "$TEST_TMP/bad" 2>/dev/null)" ] || fail "a refused up left files in its folder"

# a folder inside the repository
expect 2 "inside the repository" "$LAB_CMD" up --dir "$TOP/lab-should-not-exist" --nodes a100:1x1
[ ! -e "$TOP/lab-should-not-exist" ] || { rmdir "$TOP/lab-should-not-exist"; fail "folder created in the repository"; }
expect 2 "inside the repository" "$LAB_CMD" up --dir "$TOP/tests/.." --nodes a100:1x1

# a port in use: hold a listener on a port, then ask for a block containing it
PORT='' LPID=''
for base in 23150 24150 25150 26150 27150; do
  if ! ss -Hltn | awk '{print $4}' | grep -Eq ":($base|$((base + 1))|$((base + 2)))\$"; then PORT=$((base + 1)); break; fi
done
[ -n "$PORT" ] || { echo "no free port to test with"; exit 77; }
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); print("listening", flush=True); time.sleep(60)' "$PORT" >listener.txt 2>&1 &
LPID=$!
trap 'kill $LPID 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q listening listener.txt && break; sleep 0.1; done
grep -q listening listener.txt || fail "could not open a listener on $PORT"
expect 1 "port $PORT is already in use" "$LAB_CMD" up --dir "$TEST_TMP/busy" --nodes a100:2x1 --port-base $((PORT - 1))
[ -z "$(ls "$TEST_TMP/busy/run/"*.pid "$TEST_TMP/busy/munge/"*.pid 2>/dev/null)" ] || fail "pid files left after a refused up"
for d in /proc/[0-9]*; do
  tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -qF "$TEST_TMP/busy/" && fail "process ${d#/proc/} of the refused lab left running"
done
kill $LPID; wait $LPID 2>/dev/null; trap - EXIT

# a second up on a running lab is refused, the first keeps running; stale pid files are cleaned
LAB=$TEST_TMP/lab
cleanup() { "$LAB_CMD" down --dir "$LAB" >/dev/null 2>&1; }
trap cleanup EXIT INT TERM
"$LAB_CMD" up --dir "$LAB" --nodes a100:1x2 || fail "first up failed"
expect 1 "already running.*crius-lab down --dir" "$LAB_CMD" up --dir "$LAB" --nodes a100:1x2
expect 1 "already running" "$LAB_CMD" run --dir "$LAB" --nodes a100:1x2 -- true
"$LAB_CMD" status --dir "$LAB" >status.txt || { cat status.txt; fail "the first lab was harmed by the refused up"; }
"$LAB_CMD" exec --dir "$LAB" -- srun -N1 true || fail "the first lab does not run jobs any more"
# restart: the daemons come back with the recorded command lines, and run jobs
"$LAB_CMD" restart --dir "$LAB" || fail "restart failed"
"$LAB_CMD" exec --dir "$LAB" -- srun -N1 true || fail "the restarted lab does not run jobs"
"$LAB_CMD" down --dir "$LAB" || fail "down failed"
! "$LAB_CMD" status --dir "$LAB" >/dev/null || fail "status says running after down"
# stale: pid files of dead processes -> cleaned, up works
echo 999999 >"$LAB/run/slurmctld.pid"; sleep 0.1
"$LAB_CMD" run --dir "$LAB" --nodes a100:1x1 -- srun true || fail "up over stale pid files failed"
trap - EXIT INT TERM
echo ok
