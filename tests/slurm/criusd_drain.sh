#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Stopping criusd mid-move, on a real two-type cluster (a100:1x8 + v100:1x8), with a movable
# crius job that criusd first put on v100 while a100 was full:
#  1. criusd dies right after it requeued the job (held, on its way to a100) and comes back
#     after move_resume_limit_s: the move is rolled back, not finished: the job runs again in
#     its old Cell (v100), criusd's hold released, the record's history says "rolled back";
#  2. `criusd --drain` while criusd moves the job to a100 (signal sent, grace running): criusd
#     finishes that move (requeue, new Cell, release), starts no other, and exits; no job is
#     left held.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"

conf=$TEST_TMP/crius.toml
crius_conf a100:1x8,v100:1x8 "move_resume_limit_s = 4" "max_moves_per_job_per_hour = 16" >"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
export PATH="$B/sbin:$PATH"
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null' EXIT

blocker=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 300') || fail "plain sbatch"
wait_state "$blocker" RUNNING
cat >job.sh <<'J'
#!/bin/bash
echo "start on $SLURMD_NODENAME restarts=${SLURM_RESTART_COUNT:-0}" >>progress.log
trap 'echo "checkpoint on $SLURMD_NODENAME" >>progress.log' USR1
for _ in $(seq 1500); do sleep 0.2; done
J
id=$(sbatch --parsable -o job.out --open-mode=append --crius-model=bert__1.3B --crius-global-batch=256 --crius-movable \
  --crius-checkpoint-grace=3 job.sh) || fail "crius sbatch"
# its own checkpoint grace (the site's is 2 s) reaches the record through SPANK and job_submit
job_field "$id" AdminComment | jq -e '.request.checkpoint_grace_s == 3' >/dev/null ||
  fail "--crius-checkpoint-grace not recorded: $(job_field "$id" AdminComment)"
sleep 1
[ "$(job_field "$id" Partition)" = a100 ] || fail "test premise: job_submit should choose a100"
criusd --once 2>once.err || { cat once.err; fail "criusd --once failed"; }
wait_state "$id" RUNNING
[ "$(job_field "$id" Partition)" = v100 ] || fail "test premise: job $id not moved to v100"
scancel "$blocker"
wait_state "$blocker" CANCELLED 20 2>/dev/null || true

# 1. criusd dies right after the requeue; it comes back too late to finish the move
criusd --die-after requeue 2>die.err
cat die.err
grep -q "die-after requeue" die.err || fail "criusd did not die after the requeue"
wait_state "$id" PENDING 20
job_field "$id" AdminComment | grep -qE '"phase":"requeu(ing|ed)"' || fail "move not recorded as requeued"
# what its user sees: the move in flight, and the move in its history
PATH="$B/bin:$PATH" crius-status "$id" >status1.txt || fail "crius-status failed"
cat status1.txt
grep -qE "^  moving to a100:1x8:1 in a100: requeu(ing|ed) since " status1.txt && grep -q "in flight  (upgrade" status1.txt ||
  fail "crius-status does not show the move in flight"
sleep 5  # past move_resume_limit_s (4 s)
criusd --once 2>late.err || { cat late.err; fail "criusd --once failed after the interruption"; }
cat late.err
grep -q "job $id: the move to a100.* is rolled back" late.err || fail "the interrupted move was not rolled back"
wait_state "$id" RUNNING
[ "$(job_field "$id" Partition)" = v100 ] || fail "job $id did not run again in its old Cell: $(job_field "$id" Partition)"
[ "$(job_field "$id" Restarts)" = 1 ] || fail "job $id Restarts=$(job_field "$id" Restarts)"
PATH="$B/bin:$PATH" crius-status --json "$id" >status2.json || fail "crius-status --json failed"
jq -e --argjson id "$id" '.[0].job == $id and .[0].state == "RUNNING" and
  (.[0].record.history[-1].outcome | startswith("rolled back:"))' status2.json >/dev/null ||
  fail "crius-status --json after the rollback: $(cat status2.json)"
job_field "$id" AdminComment | jq -e '(.move == null) and (.cell.gpu == "v100") and
  (.history[-1].outcome | startswith("rolled back: criusd did not continue the move within 4 s"))' >/dev/null ||
  fail "the record after the rollback: $(job_field "$id" AdminComment)"

# 2. criusd moves it to a100 again; drained while the checkpoint grace runs
criusd 2>loop.err & pid=$!
for _ in $(seq 100); do grep -q "checkpoint job $id" loop.err && break; sleep 0.1; done
grep -q "checkpoint job $id" loop.err || { cat loop.err; fail "criusd did not start moving job $id"; }
criusd --drain 60 2>drain.err || { cat drain.err loop.err; fail "criusd --drain failed"; }
cat drain.err loop.err
kill -0 "$pid" 2>/dev/null && fail "criusd still runs after criusd --drain returned"
wait "$pid" || fail "the drained criusd exited with $?"
pid=
grep -q "draining: finishing the moves in flight" loop.err && grep -q "drained: no move in flight; exiting" loop.err ||
  fail "criusd did not say it drained"
grep -q "finish_move job $id" loop.err || fail "criusd exited before it finished the move"
wait_state "$id" RUNNING
[ "$(job_field "$id" Partition)" = a100 ] || fail "job $id not on a100 after the drain"
[ "$(job_field "$id" Restarts)" = 2 ] || fail "job $id Restarts=$(job_field "$id" Restarts), want 2"
job_field "$id" AdminComment | jq -e '(.move == null) and .history[-1].outcome == "moved"' >/dev/null ||
  fail "the record after the drained move: $(job_field "$id" AdminComment)"
[ -z "$(squeue -h -t PENDING -o %i)" ] || fail "jobs left pending: $(squeue -t PENDING)"
criusd --drain 5 2>none.err || fail "criusd --drain with no criusd running failed"
grep -q "no criusd runs" none.err || fail "criusd --drain without a criusd: $(cat none.err)"
cat progress.log
scancel "$id"
echo "criusd drain checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x8,v100:1x8 "$conf" "$TEST_TMP/inner.sh"
