#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The submission path on a real two-type cluster: sbatch/srun/salloc with --crius-* options
# run in the partition and shape job_submit/crius chose, with the CRIUS_* plan in the job;
# --crius-cell pins are honoured; a model file is forwarded; a plain job is untouched.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
cat >job.sh <<'J'
#!/bin/bash
echo "node=$SLURMD_NODENAME part=$SLURM_JOB_PARTITION nodes=$SLURM_JOB_NUM_NODES ntasks=$SLURM_NTASKS gpus=$CUDA_VISIBLE_DEVICES"
env | grep '^CRIUS_' | sort
srun --ntasks=1 true
J
# check_job ID OUT: the job's allocation is the Cell in its CRIUS_CELL and its record
check_job() {
  local id=$1 out=$2 cell gpu n g s nodes tasks
  cell=$(sed -n 's/^CRIUS_CELL=//p' "$out")
  [ -n "$cell" ] || fail "job $id: no CRIUS_CELL in the job ($(cat "$out"))"
  IFS=':x' read -r gpu n g s <<<"$cell"
  grep -q "^node=$gpu-[0-9]* part=$gpu nodes=$n ntasks=$((n * g)) gpus=$(seq -s, 0 $((g - 1)))\$" "$out" ||
    fail "job $id: allocation does not match CRIUS_CELL=$cell: $(head -n1 "$out")"
  [ "$(job_field "$id" Features)" = "$gpu" ] || fail "job $id: Features=$(job_field "$id" Features), want $gpu"
  [ "$(job_field "$id" TresPerNode)" = "$(crius_tres "$gpu" "$g")" ] || fail "job $id: TresPerNode=$(job_field "$id" TresPerNode)"
  scontrol show job "$id" |
    grep -qF "\"cell\":{\"gpu\":\"$gpu\",\"gpus_per_node\":$g,\"nodes\":$n,\"partition\":\"$gpu\",\"stages\":$s}" ||
    fail "job $id: AdminComment does not record $cell: $(scontrol show job "$id" | grep AdminComment)"
  for k in CRIUS_PARTITION CRIUS_STAGES CRIUS_STAGE_DP CRIUS_STAGE_TP CRIUS_MICRO_BATCHES CRIUS_EST_ITER_S CRIUS_PLAN_JSON; do
    grep -q "^$k=." "$out" || fail "job $id: $k missing"
  done
  echo "job $id ok: $cell"
}

# 1. catalogue model, auto Cell, with --crius-explain
id=$(sbatch_wait -o s1.out --crius-model=bert__1.3B --crius-global-batch=256 --crius-explain job.sh 2>s1.err) ||
  { cat s1.err; fail "sbatch 1 failed"; }
cat s1.err s1.out
check_job "$id" s1.out
chosen=$(sed -n 's/^crius: chosen \([^ ]*\) .*/\1/p' s1.err)
[ "$chosen" = "$(sed -n 's/^CRIUS_CELL=//p' s1.out)" ] || fail "--crius-explain chose '$chosen', job has another Cell"
grep -q '^  1   ' s1.err || fail "--crius-explain printed no ranked Cells"
# the submit host's estimate (SPANK) and slurmctld's (job_submit) agree
iter=$(awk '$1 == "1" {print $4; exit}' s1.err)
[ "$iter" = "$(printf '%.4g' "$(sed -n 's/^CRIUS_EST_ITER_S=//p' s1.out)")" ] ||
  fail "--crius-explain says ${iter} s per iteration, the job's CRIUS_EST_ITER_S=$(sed -n 's/^CRIUS_EST_ITER_S=//p' s1.out)"
! grep -q 'crius: chosen' s1.out || fail "--crius-explain printed again inside the job"

# 2. pinned type, and a full pin
id=$(sbatch_wait -o s2.out --crius-model=bert__1.3B --crius-global-batch=256 --crius-cell=v100 job.sh) || fail "sbatch 2"
check_job "$id" s2.out
grep -q '^CRIUS_GPU=v100$' s2.out || fail "--crius-cell=v100 not honoured"
id=$(sbatch_wait -o s3.out --crius-model=gpt3-1.3b --crius-global-batch=64 --crius-cell=v100:1x4:2 job.sh) || fail "sbatch 3"
check_job "$id" s3.out
grep -q '^CRIUS_CELL=v100:1x4:2$' s3.out || fail "--crius-cell=v100:1x4:2 not honoured: $(grep CRIUS_CELL s3.out)"

# 3. the user's -p list restricts the partitions crius may choose
id=$(sbatch_wait -o s4.out -p v100 --crius-model=bert__1.3B --crius-global-batch=256 job.sh) || fail "sbatch 4"
check_job "$id" s4.out
grep -q '^CRIUS_PARTITION=v100$' s4.out || fail "-p v100 not honoured"

# 4. a model file: read on the submit host, forwarded as content
cat >mymodel.toml <<'M'
family = "transformer"
layers = 12
hidden = 1024
heads = 16
ffn_hidden = 4096
seq_len = 1024
vocab = 50257
dtype = "fp16"
M
id=$(sbatch_wait -o s5.out --crius-model=./mymodel.toml --crius-global-batch=32 --crius-iters=1000 job.sh) || fail "sbatch 5"
check_job "$id" s5.out
grep -q '^CRIUS_MODEL=./mymodel.toml$' s5.out && grep -q '^CRIUS_EST_RUN_S=' s5.out || fail "model file job: CRIUS_MODEL/CRIUS_EST_RUN_S"
scontrol show job "$id" | grep -q '"model_file":true' || fail "model file not recorded"

# 4b. --crius-iters without --time, [job_submit] time_limit_factor = 2: crius gives the job a
# time limit, 2 x the estimated time of its iterations plus 5 minutes (job_submit_crius(8),
# TIME LIMITS), and records that it did; the user's own --time stays.
minutes() { awk -F'[-:]' '{ print (NF == 4) ? $1 * 1440 + $2 * 60 + $3 : $1 * 60 + $2 }'; }
t=$(scontrol show job "$id" | grep -o '"iter_time_s":[0-9.eE+-]*' | head -n1 | cut -d: -f2)
want=$(awk -v t="$t" 'BEGIN { m = (2 * 1000 * t + 300) / 60; printf "%d", (m == int(m)) ? m : int(m) + 1 }')
[ "$(job_field "$id" TimeLimit | minutes)" = "$want" ] ||
  fail "crius's time limit: $(job_field "$id" TimeLimit), want $want minutes (iter_time_s $t)"
scontrol show job "$id" | grep -q '"time_limit_factor":2' || fail "crius's time limit not recorded"
id=$(sbatch --parsable -H -o /dev/null --time=7 --crius-model=bert__1.3B --crius-global-batch=256 --crius-iters=1000 job.sh) ||
  fail "sbatch --time"
[ "$(job_field "$id" TimeLimit)" = 00:07:00 ] || fail "the user's --time=7 became $(job_field "$id" TimeLimit)"
! scontrol show job "$id" | grep -q time_limit_factor || fail "a user's --time recorded as crius's"
scancel "$id"

# 5. srun and salloc
srun -o s6.out --crius-model=bert__1.3B --crius-global-batch=64 --crius-cell=v100 \
  bash -c 'echo "$SLURMD_NODENAME $SLURM_JOB_PARTITION $CUDA_VISIBLE_DEVICES $CRIUS_CELL"' || fail "srun"
cat s6.out
cell=$(awk 'NR==1 {print $4}' s6.out)
[[ $cell == v100:* ]] || fail "srun: no CRIUS_CELL=v100:* in the tasks"
IFS=':x' read -r _ n g _ <<<"$cell"
[ "$(awk '{print $1}' s6.out | sort -u | wc -l)" = "$n" ] || fail "srun: tasks on a different node count than $cell"
awk -v want="$(seq -s, 0 $((g - 1)))" '$2 != "v100" || $3 != want {exit 1}' s6.out || fail "srun: wrong partition or GPUs for $cell"
salloc --crius-model=bert__1.3B --crius-global-batch=64 --crius-cell=a100:1x4 \
  srun bash -c 'echo "$SLURMD_NODENAME $SLURM_JOB_PARTITION $CUDA_VISIBLE_DEVICES $CRIUS_CELL"' >s7.out 2>s7.err || { cat s7.err; fail "salloc"; }
cat s7.out
grep -Eq '^a100-[12] a100 0,1,2,3 a100:1x4:[0-9]+$' s7.out || fail "salloc: unexpected allocation or CRIUS_CELL"

# 6. a job without crius options is untouched
id=$(sbatch_wait -o s8.out -p a100 -N1 --gres=gpu:a100:2 job.sh) || fail "plain sbatch"
[ "$(job_field "$id" TresPerNode)" = "$(tres_gpu a100:2)" ] || fail "plain job: TresPerNode=$(job_field "$id" TresPerNode)"
[ "$(job_field "$id" Features)" = "(null)" ] || fail "plain job: Features changed to $(job_field "$id" Features)"
! scontrol show job "$id" | grep -q 'AdminComment=' || fail "plain job: AdminComment set"
! grep -q '^CRIUS_CELL' s8.out || fail "plain job got CRIUS_CELL"
grep -q 'gpus=0,1$' s8.out || fail "plain job: $(head -n1 s8.out)"
grep 'job_submit/crius' "$CRIUS_LAB_DIR/log/slurmctld.log"
echo "all submission checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
# The shipped catalogues and cluster, with crius's time limits turned on.
mkdir -p "$TEST_TMP/conf" && cp -r "$TOP/etc/crius/." "$TEST_TMP/conf/"
printf '\n[job_submit]\ntime_limit_factor = 2\n' >>"$TEST_TMP/conf/crius.toml"
plugin_lab_run a100:2x8,v100:2x8 "$TEST_TMP/conf/crius.toml" "$TEST_TMP/inner.sh"
