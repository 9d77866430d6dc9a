#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A blocked job takes its GPUs back from an opportunistic one, live (a100:1x8):
#   a plain job holds 4 GPUs; job A (bert__15B, whose every Cell needs 8 a100 GPUs) waits;
#   job B, submitted after A, movable, is fitted by criusd into the 4 free GPUs and runs: it is
#   opportunistic (it started while A, ahead of it, waited). The plain job ends: 8 GPUs would
#   be free without B, so criusd preempts B (checkpoint, requeue) and A runs; B resumes later.
# Then the same with a plain Slurm job as the blocked head (criusd queues plain jobs too).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
conf=$TEST_TMP/crius.toml
cat >"$conf" <<EOF2
gpus = "$TOP/etc/crius/gpus.toml"
models = "$TOP/etc/crius/models.toml"
[[partition]]
name = "a100"
gpu = "a100"
nodes = 1
gpus_per_node = 8
intra_node_bw_gbs = 300.0
inter_node_bw_gbs = 200.0
inter_node_latency_us = 5.0
[criusd]
interval_s = 1
checkpoint_grace_s = 5
min_runtime_s = 0
lock_file = "$TEST_TMP/criusd.lock"
EOF2
cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
state() { job_field "$1" JobState; }
wait_for() { # ID STATE seconds
  for _ in $(seq $(($3 * 5))); do [ "$(state "$1")" = "$2" ] && return 0; sleep 0.2; done
  fail "job $1 not $2 after $3 s: $(scontrol show job "$1" | grep -E 'JobState|Restarts')"
}
block=$(sbatch --parsable --gres=gpu:a100:4 -o /dev/null --wrap "touch $TEST_TMP/block.started; exec sleep 600") ||
  fail "plain sbatch"
wait_for "$block" RUNNING 20
# A job cancelled while its batch launch is still in flight can stay RUNNING: wait for its script.
for _ in $(seq 100); do [ -e block.started ] && break; sleep 0.2; done
a=$(sbatch --parsable -o a.out --crius-model=bert__15B --crius-global-batch=256 --wrap 'sleep 600') || fail "sbatch A"
[ "$(jq -r '.cell | "\(.nodes)x\(.gpus_per_node)"' <<<"$(job_field "$a" AdminComment)")" = 1x8 ] || fail "test premise: A's Cell is not 1x8"
b=$(sbatch --parsable -o b.out --crius-movable --crius-model=bert__350M --crius-global-batch=64 --crius-iters=100000 \
  --wrap "exec crius-launch --launcher srun -- crius-train --emulate -q --time-scale 50 --checkpoint-dir $TEST_TMP/ckpt --resume") ||
  fail "sbatch B"
criusd 2>criusd.log & pid=$!
trap 'kill "$pid" 2>/dev/null' EXIT
wait_for "$b" RUNNING 30
[ "$(state "$a")" = PENDING ] || fail "A does not wait"
echo "B runs in $(jq -c .cell <<<"$(job_field "$b" AdminComment)") while A waits"
sleep 3
scancel "$block"
wait_for "$block" CANCELLED 30
wait_for "$a" RUNNING 60
# B ended on the checkpoint signal; criusd requeues it in its next round.
for _ in $(seq 150); do [ "$(job_field "$b" Restarts)" = 1 ] && break; sleep 0.2; done
kill "$pid"; wait "$pid"
grep -v "not considered" criusd.log
grep -q "checkpoint job $b .*preempted by the blocked queue head $a" criusd.log || fail "B was not preempted for A"
for _ in $(seq 50); do grep -q "resumed from" b.out && break; [ "$(state "$b")" = PENDING ] && break; sleep 0.2; done
echo "A: $(state "$a"); B: $(state "$b"), Restarts=$(job_field "$b" Restarts)"
[ "$(job_field "$b" Restarts)" = 1 ] || fail "B was requeued $(job_field "$b" Restarts) times"
grep -q "stopped after the checkpoint signal" b.out || { cat b.out; fail "B did not checkpoint"; }

# The same for a plain Slurm job as the blocked head: P asks the whole node (8 GPUs) while a
# plain job holds 4; C, a movable crius job submitted after P, starts in the 4 free GPUs. When
# the holder ends, criusd preempts C for P (Slurm's order: P is ahead), and Slurm starts P.
scancel "$a" "$b"
wait_for "$a" CANCELLED 30
for _ in $(seq 150); do [ -z "$(squeue -h -j "$b" -o %T 2>/dev/null | grep -v CANCELLED)" ] && break; sleep 0.2; done
block=$(sbatch --parsable --gres=gpu:a100:4 -o /dev/null --wrap "touch $TEST_TMP/block2.started; exec sleep 600") ||
  fail "plain sbatch"
wait_for "$block" RUNNING 30
for _ in $(seq 100); do [ -e block2.started ] && break; sleep 0.2; done
p=$(sbatch --parsable --gres=gpu:a100:8 -o /dev/null --wrap 'exec sleep 600') || fail "plain sbatch P"
for _ in $(seq 50); do [ "$(job_field "$p" Reason)" = Resources ] && break; sleep 0.2; done
c=$(sbatch --parsable -o c.out --crius-movable --crius-model=bert__350M --crius-global-batch=64 --crius-iters=100000 \
  --wrap "exec crius-launch --launcher srun -- crius-train --emulate -q --time-scale 50 --checkpoint-dir $TEST_TMP/ckpt-c --resume") ||
  fail "sbatch C"
criusd 2>criusd2.log & pid=$!
wait_for "$c" RUNNING 30
[ "$(state "$p")" = PENDING ] || fail "P does not wait"
sleep 3
scancel "$block"
wait_for "$block" CANCELLED 30
wait_for "$p" RUNNING 60
for _ in $(seq 150); do [ "$(job_field "$c" Restarts)" = 1 ] && break; sleep 0.2; done
kill "$pid"; wait "$pid"
trap - EXIT
grep -v "not considered" criusd2.log
grep -q "checkpoint job $c .*preempted by the blocked queue head $p" criusd2.log || fail "C was not preempted for the plain job P"
echo "P: $(state "$p"); C: $(state "$c"), Restarts=$(job_field "$c" Restarts)"
[ "$(job_field "$c" Restarts)" = 1 ] || fail "C was requeued $(job_field "$c" Restarts) times"
echo "criusd opportunistic checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x8 "$conf" "$TEST_TMP/inner.sh"
