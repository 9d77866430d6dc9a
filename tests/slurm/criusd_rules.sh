#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# criusd touches exactly the job it means, and leaves what is not its own — on a real cluster
# (a100:1x8 + v100:2x8):
#  1. a job array's two tasks run on v100; a100 frees: criusd moves the task whose id is the
#     array's alone — signalled, requeued and given a100 as ARRAY_TASK — while the other task
#     gets no signal and keeps running where it was; crius-launch in each task reads that
#     task's own plan.
#  2. an admin holds a job in the middle of its move (after criusd's requeue): criusd gives it
#     its new Cell and leaves the admin's hold (JobHeldAdmin) in place.
#  3. a crius job submitted held, released after a movable job started and ahead of it in
#     Slurm's order does not take that job's GPUs back: it waited since its release, not since
#     its submission (the criusd before this check preempted the running job for it).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"

conf=$TEST_TMP/crius.toml
crius_conf a100:1x8,v100:2x8 "max_moves_per_round = 1" >"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done' EXIT
crius=(--crius-model=bert__1.3B --crius-global-batch=256 --crius-max-gpus=8 --crius-iters=100000)
cat >loop.sh <<'J'
#!/bin/bash
trap 'echo "checkpoint $SLURM_JOB_ID" >>signals.log; exit 0' USR1
echo "start $SLURM_JOB_ID on $SLURMD_NODENAME restarts=${SLURM_RESTART_COUNT:-0}" >>starts.log
for _ in $(seq 3000); do sleep 0.2; done
J
chmod +x loop.sh
block_a() { sbatch --parsable -p a100 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 600'; }

### 1. One task of an array moved, the other untouched.
block=$(block_a) || fail "plain sbatch"
wait_state "$block" RUNNING
criusd --once 2>report.err || { cat report.err; fail "criusd --once"; }  # the free-GPU report: v100 free
arr=$(sbatch --parsable --array=0-1 -o /dev/null "${crius[@]}" --crius-movable loop.sh) || fail "sbatch --array"
wait_state "${arr}_0" RUNNING; wait_state "${arr}_1" RUNNING
# The task that keeps the array's own id (Slurm splits the others off into new ids) is the one
# a plain id would mix up with the whole array: it is the one to move.
if [ "$(job_field "${arr}_0" JobId)" = "$arr" ]; then t0=${arr}_0 t1=${arr}_1; else t0=${arr}_1 t1=${arr}_0; fi
[ "$(job_field "$t0" JobId)" = "$arr" ] || fail "test premise: one task keeps the array's id: $(squeue -r -o '%i %A %T')"
[ "$(job_field "$t0" Partition)" = v100 ] && [ "$(job_field "$t1" Partition)" = v100 ] ||
  fail "test premise: both tasks should run on v100: $(squeue -r -o '%i %P %T')"
id1=$(job_field "$t1" JobId)
# the policy moves $t0 first (set both: 24.11's default priority/multifactor gives every job 1)
scontrol update jobid="$t0" priority=3 && scontrol update jobid="$t1" priority=2 || fail "priorities of $t0 and $t1"
scancel "$block"
criusd 2>move.err & pids+=($!)
for _ in $(seq 300); do
  [ "$(job_field "$t0" Partition)" = a100 ] && [ "$(job_field "$t0" JobState)" = RUNNING ] && break; sleep 0.2; done
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null
cat move.err starts.log signals.log 2>/dev/null
[ "$(job_field "$t0" Partition)" = a100 ] && [ "$(job_field "$t0" JobState)" = RUNNING ] ||
  fail "$t0 was not moved to a100: $(scontrol show job "$t0" | head -n 4)"
grep -q "checkpoint $arr\$" signals.log || fail "$t0 did not get the checkpoint signal"
! grep -q "checkpoint $id1\$" signals.log || fail "$t1 got the checkpoint signal meant for $t0"
[ "$(job_field "$t0" Restarts)" = 1 ] || fail "$t0 requeued $(job_field "$t0" Restarts) times"
[ "$(job_field "$t1" Restarts)" = 0 ] || fail "$t1 was requeued"
[ "$(job_field "$t1" JobState)" = RUNNING ] && [ "$(job_field "$t1" Partition)" = v100 ] || fail "$t1 left v100"
# crius-launch in a task runs that task's plan, read by its own id (asked for by the array's id,
# slurmctld answers with every task): a100 in one stage here, v100 in two for the other task.
for t in "$t0" "$t1"; do
  id=$(job_field "$t" JobId)
  want=$(job_field "$t" AdminComment | jq -c .plan)
  got=$(SLURM_JOB_ID=$id crius-launch --dry-run --json | jq -c .plan) || fail "crius-launch --dry-run for $t"
  [ "$got" = "$want" ] || fail "crius-launch of $t ($id) reads another plan: $got, its record has $want"
done
scancel "$arr"

### 2. An admin's hold placed mid-move stays.
block=$(block_a) || fail "plain sbatch"
wait_state "$block" RUNNING
criusd --once 2>report.err || { cat report.err; fail "criusd --once"; }
m=$(sbatch --parsable -o /dev/null "${crius[@]}" --crius-movable loop.sh) || fail "sbatch"
wait_state "$m" RUNNING
[ "$(job_field "$m" Partition)" = v100 ] || fail "test premise: job $m should run on v100"
scancel "$block"
wait_state "$block" CANCELLED 20 2>/dev/null || true
criusd --die-after requeue 2>die.err; rc=$?
cat die.err
[ $rc = 137 ] || fail "criusd --die-after requeue exited $rc"
wait_state "$m" PENDING
# (scontrol shows the requeue's state text as the Reason still; the reason Slurm keeps is now
# JobHeldAdmin, and only an operator can release it.)
scontrol hold "$m" || fail "scontrol hold"
criusd --once 2>finish.err || { cat finish.err; fail "criusd --once after the hold"; }
cat finish.err
grep -q "finish_move job $m" finish.err || fail "criusd did not finish the move"
[ "$(job_field "$m" Partition)" = a100 ] || fail "job $m did not get its new Cell"
sleep 1
[ "$(job_field "$m" JobState)" = PENDING ] && [ "$(job_field "$m" Priority)" = 0 ] ||
  fail "criusd released an admin's hold: $(scontrol show job "$m" | head -n 4)"
! job_field "$m" AdminComment | grep -q '"move"' || fail "the move is still in the record"
scontrol release "$m"
wait_state "$m" RUNNING
scancel "$m"

### 3. Held, then released after another job started: no preemption for it.
vblock=$(sbatch --parsable -p v100 -N2 --gres=gpu:v100:8 -o /dev/null --wrap 'sleep 600') || fail "plain sbatch"
wait_state "$vblock" RUNNING
p=$(sbatch --parsable -H -o /dev/null "${crius[@]}" loop.sh) || fail "sbatch -H"
rm -f "${CRIUS_FREE_GPUS_FILE:?}"  # job_submit counts the held job's Cell taken until the next report
r=$(sbatch --parsable -o /dev/null "${crius[@]}" --crius-movable loop.sh) || fail "sbatch"
wait_state "$r" RUNNING
[ "$(job_field "$r" Partition)" = a100 ] || fail "test premise: job $r should run on a100"
sleep 1
scontrol release "$p"
# Ahead of the running job in Slurm's order, as a job of a higher QOS or fairshare would be.
scontrol update jobid="$p" priority=$(($(job_field "$r" Priority) + 100)) || fail "priority of job $p"
criusd --once --json >held.json 2>held.err || { cat held.err; fail "criusd --once"; }
cat held.err
! jq -e --argjson r "$r" '.actions[] | select(.job == $r)' held.json >/dev/null ||
  fail "criusd took job $r's GPUs for job $p, which was held when $r started: $(jq -c .actions held.json)"
[ "$(job_field "$r" JobState)" = RUNNING ] || fail "job $r does not run"
scancel "$vblock" "$p" "$r"
echo "criusd rules checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x8,v100:2x8 "$conf" "$TEST_TMP/inner.sh"
