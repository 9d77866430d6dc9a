#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# criusd acts only on jobs Slurm could start now, in Slurm's priority order, and moves only
# running jobs that can come back — on a real two-type cluster (a100:1x8 + v100:1x8):
#  1. pending: a held job, one waiting for a dependency and one for its --begin time are never
#     changed; of two jobs that fit the 2 free v100 GPUs, the one Slurm ranks higher
#     (scontrol update priority) gets them.
#  2. running: a batch job without --crius-movable, a movable job with --no-requeue, a movable
#     srun job and a job with a broken record are never signalled, requeued or changed while a
#     movable crius-launch --launcher srun -- crius-train job next to them is moved: it saves its checkpoint
#     and exits on the signal, criusd requeues it held, gives it its new Cell, releases it and
#     it resumes from the checkpoint. A second criusd refuses to run beside the first.
#  3. criusd killed right after each step of a move (--die-after record, signal, requeue,
#     update) and restarted ends where an uninterrupted criusd ends: the same Cell, one requeue.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
command -v mpirun >/dev/null || { echo "mpirun not installed"; exit 77; }
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"

conf=$TEST_TMP/crius.toml
crius_conf a100:1x8,v100:1x8 >"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
export PATH="$B/bin:$PATH"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done' EXIT
settings() { scontrol show job "$1" | tr ' ' '\n' | grep -E '^(JobState|Partition|TresPerNode|Features|NumNodes|AdminComment|Priority|Restarts)='; }
crius=(--crius-model=bert__1.3B --crius-global-batch=256)
# Long jobs in the smallest Cell (one GPU): idle GPUs give criusd a reason to move them.
small=("${crius[@]}" --crius-iters=100000 --crius-deadline=60-00:00:00)
cat >loop.sh <<'J'
#!/bin/bash
trap 'echo "checkpoint $SLURM_JOB_ID" >>signals.log' USR1
echo "start $SLURM_JOB_ID restarts=${SLURM_RESTART_COUNT:-0}" >>starts.log
for _ in $(seq 3000); do sleep 0.2; done
J

### 1. Pending jobs: only those Slurm could start now, in its priority order.
block_a=$(sbatch --parsable -p a100 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 600') || fail "plain sbatch"
block_v=$(sbatch --parsable -p v100 --gres=gpu:v100:6 -o /dev/null --wrap 'sleep 600') || fail "plain sbatch"
wait_state "$block_a" RUNNING; wait_state "$block_v" RUNNING
held=$(sbatch --parsable -o /dev/null --hold "${crius[@]}" loop.sh)
dep=$(sbatch --parsable -o /dev/null --dependency=afterok:"$block_a" "${crius[@]}" loop.sh)
later=$(sbatch --parsable -o /dev/null --begin=now+3600 "${crius[@]}" loop.sh)
low=$(sbatch --parsable -o /dev/null "${crius[@]}" loop.sh)
high=$(sbatch --parsable -o /dev/null "${crius[@]}" loop.sh)
scontrol update jobid="$low" priority=100 && scontrol update jobid="$high" priority=200 || fail "scontrol update priority"
sleep 1
for j in $held $dep $later $low $high; do
  [ "$(job_field "$j" Partition)" = a100 ] || fail "test premise: job_submit should put job $j on a100"
done
for j in $held $dep $later $low; do settings "$j" >"before.$j"; done
criusd --once 2>once.err || { cat once.err; fail "criusd --once failed"; }
cat once.err
[ "$(job_field "$high" Partition)" = v100 ] || fail "the higher-priority job $high was not given the free v100 GPUs"
for j in $held $dep $later $low; do
  settings "$j" | diff "before.$j" - || fail "criusd changed job $j"
done
grep -q "job $held not considered: held" once.err || fail "no reason logged for the held job"
grep -q "job $dep not considered: waits for a dependency" once.err || fail "no reason logged for the dependent job"
grep -q "job $later not considered: waits for its begin time" once.err || fail "no reason logged for the --begin job"
scancel "$block_a" "$block_v" "$held" "$dep" "$later" "$low" "$high"
sleep 1

### 2. Running jobs: only the movable one moves; it resumes from its checkpoint.
cat >train.sh <<J
#!/bin/bash
export OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1
# nodes that share one host talk over loopback; nodes that are hosts over their own network
[ "\${CRIUS_LAB_HOSTS:-0}" = 1 ] || export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
exec crius-launch --launcher srun -- crius-train --steps 1000000 --hidden 32 --heads 4 --ffn 64 --seq 8 --vocab 64 \
  --no-estimate -q --checkpoint-dir "$TEST_TMP/ckpt" --checkpoint-every 2 --resume
J
nomov=$(sbatch --parsable -o /dev/null "${small[@]}" loop.sh)
noreq=$(sbatch --parsable -o /dev/null --no-requeue --crius-movable "${small[@]}" loop.sh)
srun "${small[@]}" --crius-movable -J interactive sleep 600 & pids+=($!)
broken=$(sbatch --parsable -o /dev/null --wrap 'sleep 600')
for j in $nomov $noreq $broken; do wait_state "$j" RUNNING; done
for _ in $(seq 50); do inter=$(squeue -h -n interactive -t R -o %i); [ -n "$inter" ] && break; sleep 0.2; done
[ -n "$inter" ] || fail "the srun job did not start"
scontrol update jobid="$broken" admincomment='{"crius":2,"request":{}}' || fail "scontrol update admincomment"
ctl=$(sbatch --parsable -o train.out --open-mode=append --crius-movable "${small[@]}" train.sh)
wait_state "$ctl" RUNNING
# Training under way (its checkpoint signal handler set): the first periodic checkpoint.
for _ in $(seq 300); do grep -q "checkpoint .* at step" train.out && break; sleep 0.2; done
grep -q "checkpoint .* at step" train.out || { cat train.out; fail "crius-train did not start training"; }
for j in $nomov $noreq $inter $broken; do settings "$j" >"before.$j"; done
from=$(job_field "$ctl" AdminComment | jq -c .cell)
criusd 2>loop.err & criusd_pid=$!; pids+=($criusd_pid)
sleep 2
criusd --once 2>second.err; rc=$?
[ $rc = 1 ] && grep -q "another criusd runs" second.err || fail "a second criusd ran beside the first (rc $rc): $(cat second.err)"
for _ in $(seq 300); do
  [ "$(job_field "$ctl" Restarts)" = 1 ] && [ "$(job_field "$ctl" JobState)" = RUNNING ] &&
    ! job_field "$ctl" AdminComment | grep -q '"move"' && grep -q "resumed from" train.out && break
  sleep 0.2
done
kill -0 "$criusd_pid" || fail "criusd stopped"
kill "$criusd_pid"; wait "$criusd_pid"
cat loop.err
echo "--- train.out"; cat train.out
to=$(job_field "$ctl" AdminComment | jq -c .cell)
[ "$from" != "$to" ] || fail "the movable job was not moved: $(scontrol show job "$ctl")"
[ "$(job_field "$ctl" Restarts)" = 1 ] || fail "the movable job was requeued $(job_field "$ctl" Restarts) times"
grep -q "resumed from .* at step [1-9]" train.out || fail "the moved job did not resume from its checkpoint"
for j in $nomov $noreq $inter $broken; do
  settings "$j" | diff "before.$j" - || fail "criusd changed job $j"
done
! grep -qE "checkpoint ($nomov|$noreq)\$" signals.log 2>/dev/null || fail "a job that cannot come back was signalled"
grep -q "job $nomov not considered: not movable: runs without --crius-movable" loop.err || fail "no reason for $nomov"
grep -q "job $noreq not considered: not movable: its requeue is not allowed" loop.err || fail "no reason for $noreq"
grep -q "job $inter not considered: not movable: not a batch job" loop.err || fail "no reason for the srun job"
grep -q "job $broken not considered: its record does not read" loop.err || fail "no reason for the broken record"
scancel "$nomov" "$noreq" "$inter" "$broken" "$ctl"
sleep 1

### 3. Killed after each step, restarted: the same end state as an uninterrupted criusd.
for step in none record signal requeue update; do
  id=$(sbatch --parsable -o "job.%j.out" --crius-movable "${small[@]}" loop.sh)
  wait_state "$id" RUNNING
  # RUNNING comes before the script runs: signalled before its trap is set, the shell would die.
  for _ in $(seq 150); do grep -q "^start $id " starts.log 2>/dev/null && break; sleep 0.2; done
  grep -q "^start $id " starts.log || fail "job $id did not start its script"
  if [ "$step" != none ]; then
    criusd --die-after "$step" 2>"die.$step.err"; rc=$?
    [ $rc = 137 ] || { cat "die.$step.err"; fail "criusd --die-after $step exited $rc"; }
  fi
  criusd 2>"after.$step.err" & criusd_pid=$!; pids+=($criusd_pid)
  for _ in $(seq 150); do
    [ "$(job_field "$id" JobState)" = RUNNING ] && [ "$(job_field "$id" Restarts)" = 1 ] &&
      ! job_field "$id" AdminComment | grep -q '"move"' && break
    sleep 0.2
  done
  kill "$criusd_pid"; wait "$criusd_pid"
  cell=$(job_field "$id" AdminComment | jq -c .cell)
  echo "$step: $(job_field "$id" JobState) restarts $(job_field "$id" Restarts) cell $cell signals $(grep -c "checkpoint $id\$" signals.log)"
  [ "$(job_field "$id" JobState)" = RUNNING ] && [ "$(job_field "$id" Restarts)" = 1 ] ||
    { cat "die.$step.err" "after.$step.err" starts.log 2>/dev/null; scontrol show job "$id"; fail "--die-after $step: job $id did not end the move running, requeued once"; }
  ! job_field "$id" AdminComment | grep -q '"move"' || fail "--die-after $step: move left in the record"
  [ "$step" = none ] && want=$cell
  [ "$cell" = "$want" ] || fail "--die-after $step: ended in $cell, an uninterrupted criusd in $want"
  grep -q "checkpoint $id\$" signals.log || fail "--die-after $step: job $id never got the checkpoint signal"
  scancel "$id"
done
echo "criusd bounds checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x8,v100:1x8 "$conf" "$TEST_TMP/inner.sh"
