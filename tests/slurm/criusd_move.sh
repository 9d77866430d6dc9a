#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# criusd on a real two-type cluster (a100:1x8 + v100:1x8):
#  1. a100 is full (a plain job): a crius job that job_submit put on a100 waits there;
#     `criusd --once --dry-run` changes nothing; `criusd --once` moves it to the idle v100
#     partition, where it starts.
#  2. the plain job ends: criusd moves the running crius job (--crius-movable) back to the
#     faster a100 — it receives the checkpoint signal, is requeued held, gets the a100 Cell,
#     is released and restarts on a100. criusd is killed
#     with SIGKILL right after it sent the signal and restarted: the move completes once
#     (Restarts=1), as an uninterrupted run would.
#  3. the plain job's settings are never changed.
# The crius job has --crius-iters and no --time, and [job_submit] time_limit_factor is on: its
# time limit is crius's in each Cell it gets (job_submit_crius(8), TIME LIMITS).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"

conf=$TEST_TMP/crius.toml
crius_conf a100:1x8,v100:1x8 "max_moves_per_round = 1" "metrics_file = \"$TEST_TMP/criusd.prom\"" >"$conf"
printf '[job_submit]\ntime_limit_factor = 2\n' >>"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
settings() { scontrol show job "$1" | tr ' ' '\n' | grep -E '^(Partition|TresPerNode|Features|NumNodes|AdminComment|Comment|Priority)='; }

blocker=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 300') || fail "plain sbatch"
wait_state "$blocker" RUNNING
blocker_before=$(settings "$blocker")

cat >job.sh <<'J'
#!/bin/bash
echo "start on $SLURMD_NODENAME restarts=${SLURM_RESTART_COUNT:-0} gpus=$CUDA_VISIBLE_DEVICES" >>progress.log
trap 'echo "checkpoint on $SLURMD_NODENAME" >>progress.log' USR1
for _ in $(seq 600); do sleep 0.2; done
J
id=$(sbatch --parsable -o job.out --open-mode=append --crius-model=bert__1.3B --crius-global-batch=256 --crius-iters=100000 \
  --crius-movable job.sh) || fail "crius sbatch"
# limit_is_crius ID: the job's time limit is the one its record says crius set last; prints it
limit_is_crius() {
  local want got
  want=$(job_field "$1" AdminComment | jq -r '.time_limit_min // 0')
  got=$(job_field "$1" TimeLimit | awk -F'[-:]' '{ print (NF == 4) ? $1 * 1440 + $2 * 60 + $3 : $1 * 60 + $2 }')
  [ "$want" -gt 0 ] && [ "$got" = "$want" ] ||
    { echo "FAIL: job $1: time limit $(job_field "$1" TimeLimit), crius's $want minutes" >&2; return 1; }
  echo "$want"
}
on_a100=$(limit_is_crius "$id") || exit 1
sleep 1
[ "$(job_field "$id" JobState)" = PENDING ] || fail "crius job should wait behind the plain job"
[ "$(job_field "$id" Partition)" = a100 ] || fail "test premise: job_submit should choose a100, chose $(job_field "$id" Partition)"

# 1. dry run: decides the move, changes nothing
before=$(settings "$id")
criusd --once --dry-run --json >dry.json 2>dry.err || { cat dry.err; fail "criusd --dry-run failed"; }
jq -e --argjson id "$id" '.actions[] | select(.job == $id and .action == "update_pending" and .to.gpu == "v100")' dry.json >/dev/null ||
  fail "dry run did not decide to move job $id to v100: $(cat dry.json)"
[ "$before" = "$(settings "$id")" ] || fail "dry run changed the job"
[ ! -e criusd.prom ] || fail "a dry run wrote the metrics file"
# metric NAME: its value in criusd's metrics file (0 when absent)
metric() { awk -v n="$1" '$1 == n {v = $2} END {print v + 0}' criusd.prom; }

criusd --once 2>once.err || { cat once.err; fail "criusd --once failed"; }
cat once.err
wait_state "$id" RUNNING
[ "$(job_field "$id" Partition)" = v100 ] || fail "job $id not moved to v100"
[ "$(job_field "$id" Features)" = v100 ] || fail "job $id Features=$(job_field "$id" Features)"
job_field "$id" AdminComment | grep -q '"partition":"v100"' || fail "record not updated: $(job_field "$id" AdminComment)"
# RUNNING comes before the batch script's first line: give the script a moment to write it.
for _ in $(seq 50); do grep -q "^start on v100-1 restarts=0" progress.log 2>/dev/null && break; sleep 0.2; done
grep -q "^start on v100-1 restarts=0" progress.log || fail "job did not start on v100: $(cat progress.log)"
on_v100=$(limit_is_crius "$id") || exit 1
[ "$on_v100" != "$on_a100" ] || fail "the time limit did not follow the Cell: $on_a100 minutes on a100 and v100"
cat criusd.prom
[ "$(metric crius_criusd_rounds_total)" = 1 ] && [ "$(metric 'crius_criusd_actions_total{kind="update_pending"}')" = 1 ] &&
  [ "$(metric 'crius_criusd_jobs{state="PENDING"}')" = 1 ] || fail "metrics after the pending move"
[ "$(stat -c %a criusd.prom)" = 644 ] || fail "metrics file mode $(stat -c %a criusd.prom)"

# 2. free a100; criusd (looping) signals the job; kill -9 it right after, restart it.
[ "$blocker_before" = "$(settings "$blocker")" ] || fail "criusd changed the plain job"
scancel "$blocker"
wait_state "$blocker" CANCELLED 20 2>/dev/null || true
criusd 2>loop1.err & pid=$!
for _ in $(seq 100); do grep -q "checkpoint job $id" loop1.err && break; sleep 0.1; done
kill -9 "$pid"; wait "$pid" 2>/dev/null
cat loop1.err
grep -q "checkpoint job $id" loop1.err || fail "criusd did not start moving job $id to a100"
job_field "$id" AdminComment | grep -qE '"phase":"signall(ing|ed)"' || fail "move not recorded before the signal"
criusd 2>loop2.err & pid=$!
for _ in $(seq 150); do
  [ "$(job_field "$id" Partition)" = a100 ] && [ "$(job_field "$id" JobState)" = RUNNING ] && break; sleep 0.2; done
kill "$pid"; wait "$pid"
cat loop2.err criusd.prom
# the second criusd's counters: its move of the running job, from the requeue on
[ "$(metric 'crius_criusd_actions_total{kind="finish_move"}')" = 1 ] && [ "$(metric crius_criusd_rounds_total)" -ge 2 ] ||
  fail "metrics after the move of the running job"
[ "$(job_field "$id" Partition)" = a100 ] || fail "job $id not moved to a100: $(scontrol show job "$id")"
wait_state "$id" RUNNING
sleep 1
cat progress.log
grep -q "^checkpoint on v100-1" progress.log || fail "the job never got the checkpoint signal"
grep -q "^start on a100-1 restarts=1" progress.log || fail "job did not restart once on a100"
[ "$(job_field "$id" Restarts)" = 1 ] || fail "job requeued $(job_field "$id" Restarts) times, want 1"
! job_field "$id" AdminComment | grep -q '"move"' || fail "move still recorded after it finished"
limit_is_crius "$id" >/dev/null || exit 1
# The audit: the record keeps the move, from where to where, and that it ended moved.
job_field "$id" AdminComment | jq -e '.history | length == 1 and (.[0] | (.from | startswith("v100:1x")) and
  (.to | startswith("a100:1x")) and (.reason | length > 0) and .outcome == "moved" and .ended >= .started)' >/dev/null ||
  fail "the move is not in the record's history: $(job_field "$id" AdminComment)"
# ... and what the job ran, and saved its checkpoint, under: crius-launch's CRIUS_PREV_* for it.
job_field "$id" AdminComment | jq -e '.saved_under.cell.gpu == "v100" and (.saved_under.plan.stages | length >= 1)' >/dev/null ||
  fail "the record does not say what the checkpoint was saved under: $(job_field "$id" AdminComment)"
scancel "$id"
echo "criusd checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x8,v100:1x8 "$conf" "$TEST_TMP/inner.sh"
