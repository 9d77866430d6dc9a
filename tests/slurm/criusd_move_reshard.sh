#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A real move keeps a real training job's state under another plan. On a real two-type cluster
# (a100:1x4 + v100:1x2, nodes as hosts where the machine allows), with each launcher (mpirun,
# srun): a PyTorch job (tests/torch/reshard_train.py: a small GPT whose parameters and Adam
# moments are sharded by its plan's TP and DP, gloo on CPU) starts on v100 while a100 is busy
# (moved there by criusd, or put there by job_submit), under TP 2 x DP 1; when a100 frees, criusd
# signals it, it saves with torch.distributed.checkpoint and exits, and criusd requeues it on
# a100, where it resumes under TP 1 x DP 4 from the saved step, resharded. Its loss at every
# step equals, to rounding, that of a run never moved (TP 2 x DP 2, outside Slurm).
# Needs PyTorch's torch.distributed.checkpoint with ShardedTensor (Debian 13's 2.6); Debian
# 12's PyTorch 1.13 has none (its forerunner, torch.distributed._shard, does not import on
# Python 3.11), and the test skips saying so.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
command -v mpirun >/dev/null || { echo "mpirun not installed"; exit 77; }
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
PY=/usr/bin/python3  # Debian's, for which python3-torch is installed
why=$("$PY" -c 'import torch.distributed.checkpoint, torch.distributed._shard.sharded_tensor' 2>&1) ||
  { echo "this PyTorch cannot save sharded tensors with torch.distributed.checkpoint: ${why##*$'\n'}"; exit 77; }
export OMP_NUM_THREADS=1 USE_LIBUV=0  # Debian 13's PyTorch is built without libuv
STEPS=30
train=$TOP/tests/torch/reshard_train.py

# The run never moved: 4 ranks, TP 2 x DP 2, the job's global batch.
(
  . "$TOP/tests/mpi/lib_launch.bash"
  need_mpi
  unset SLURM_JOB_ID CRIUS_PLAN_JSON CRIUS_STAGES CRIUS_CHECKPOINT_SIGNAL
  export OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
  "$B/bin/crius-launch" --tp 2 --dp 2 -- "$PY" "$train" "$TEST_TMP/ref.ckpt" "$TEST_TMP/ref.log" \
    --steps $STEPS --global-batch 64 >"$TEST_TMP/ref.out" 2>&1
) || { cat "$TEST_TMP/ref.out"; fail "the run that is never moved failed"; }
[ "$(wc -l <"$TEST_TMP/ref.log")" = $STEPS ] || fail "the run never moved logged $(wc -l <"$TEST_TMP/ref.log") steps"

conf=$TEST_TMP/crius.toml
crius_conf a100:1x4,v100:1x2 "max_moves_per_round = 1" >"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
for launcher in mpirun srun; do
  echo "== $launcher"
  blocker=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:4 -o /dev/null --wrap 'sleep 300') || fail "plain sbatch"
  wait_state "$blocker" RUNNING
  cat >"job.$launcher.sh" <<J
#!/bin/bash
export PATH="$B/bin:\$PATH" OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=1 USE_LIBUV=0
[ "\${CRIUS_LAB_HOSTS:-0}" = 1 ] || export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
echo "start on \$SLURMD_NODENAME restarts=\${SLURM_RESTART_COUNT:-0}"
exec crius-launch --launcher $launcher -- $PY "$train" "$TEST_TMP/$launcher.ckpt" "$TEST_TMP/$launcher.log" \
  --steps $STEPS --global-batch \$CRIUS_GLOBAL_BATCH --pace 1
J
  id=$(sbatch --parsable -o "job.$launcher.out" --open-mode=append --crius-model=bert__2.6B --crius-global-batch=64 \
    --crius-iters=100000 --crius-movable --crius-checkpoint-grace=120 "job.$launcher.sh") || fail "crius sbatch"
  sleep 1
  # job_submit puts it on a100 to wait, or on v100 where criusd's last report says it starts now
  if [ "$(job_field "$id" Partition)" = a100 ]; then
    criusd --once 2>"once.$launcher.err" || { cat "once.$launcher.err"; fail "criusd --once failed"; }
  fi
  wait_state "$id" RUNNING
  [ "$(job_field "$id" Partition)" = v100 ] || fail "job $id not moved to v100: $(cat "once.$launcher.err")"
  # a few steps on v100, then a100 frees and criusd moves the running job
  steps_logged() { cat "$launcher.log" 2>/dev/null | wc -l; }
  for _ in $(seq 300); do [ "$(steps_logged)" -ge 3 ] && break; sleep 0.2; done
  [ "$(steps_logged)" -ge 3 ] || { cat "job.$launcher.out"; fail "$launcher: no training steps on v100"; }
  scancel "$blocker"
  criusd 2>"loop.$launcher.err" & pid=$!
  # it saves and exits (COMPLETED), criusd requeues it on a100, it ends there. Slurm shows the
  # requeued job COMPLETED with Restarts=1 for a moment before PENDING: the end is every step logged.
  for _ in $(seq 900); do
    case $(job_field "$id" JobState),$(job_field "$id" Restarts) in
      COMPLETED,1) [ "$(steps_logged)" -ge "$STEPS" ] && break ;;
      FAILED,* | CANCELLED,* | TIMEOUT,*) break ;; esac; sleep 0.2; done
  kill "$pid"; wait "$pid"
  cat "loop.$launcher.err" "job.$launcher.out"
  [ "$(job_field "$id" JobState)" = COMPLETED ] || fail "$launcher: job $id $(job_field "$id" JobState), exit $(job_field "$id" ExitCode)"
  [ "$(job_field "$id" Partition)" = a100 ] || fail "$launcher: job $id not moved back to a100"
  [ "$(job_field "$id" Restarts)" = 1 ] || fail "$launcher: job requeued $(job_field "$id" Restarts) times, want 1"
  grep -q "^saved step [0-9]* on the checkpoint signal" "job.$launcher.out" || fail "$launcher: the job did not save on the signal"
  job_field "$id" AdminComment >"record.$launcher.json"
done
echo "criusd_move_reshard: both jobs moved"
INNER
chmod +x "$TEST_TMP/inner.sh"
export B TOP STEPS PY train
plugin_lab_run a100:1x4,v100:1x2 "$conf" "$TEST_TMP/inner.sh" || fail "the moves (above)"

# Every step once; the first steps under v100's plan, the rest resumed under a100's from the
# saved step; every loss that of the run never moved.
for launcher in mpirun srun; do
  "$PY" - "$TEST_TMP/ref.log" "$TEST_TMP/$launcher.log" "$TEST_TMP/record.$launcher.json" <<'PY' || fail "$launcher: the moved job's losses"
import json, sys
ref = [json.loads(l) for l in open(sys.argv[1])]
got = [json.loads(l) for l in open(sys.argv[2])]
record = json.load(open(sys.argv[3]))
assert [g["step"] for g in got] == [r["step"] for r in ref], [g["step"] for g in got]
before = [g for g in got if g["resumed_at"] == 0]
after = [g for g in got if g["resumed_at"] > 0]
assert before and after and after[0]["step"] == before[-1]["step"] + 1 == after[0]["resumed_at"] + 1, (before, after)
assert {(g["tp"], g["dp"], g["cell"]) for g in before} == {(2, 1, "v100:1x2:1")}, before[0]
assert {(g["tp"], g["dp"], g["cell"], g["prev_cell"]) for g in after} == {(1, 4, "a100:1x4:1", "v100:1x2:1")}, after[0]
stages = record["plan"]["stages"]
assert record["cell"]["gpu"] == "a100" and [(s["tp"], s["dp"]) for s in stages] == [(1, 4)], record
assert record["saved_under"]["cell"]["gpu"] == "v100", record
worst = max(abs(g["loss"] - r["loss"]) / r["loss"] for g, r in zip(got, ref))
assert worst < 1e-9, f"loss differs from the run never moved by {worst:.2e}"
print(f"{sys.argv[2]}: steps 1-{before[-1]['step']} under tp 2 x dp 1 on v100, "
      f"{after[0]['step']}-{after[-1]['step']} resumed under tp 1 x dp 4 on a100; losses within {worst:.1e} "
      f"of the run never moved (tp 2 x dp 2), {ref[0]['loss']:.4f} -> {ref[-1]['loss']:.4f}")
PY
done
echo "criusd_move_reshard passed"
