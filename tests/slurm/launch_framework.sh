#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The plan crius schedules is the plan the framework runs, on a real cluster (a100:2x8) with both
# crius plugins:
#  1. a job planned for crius-train on 16 stages (bert__1.3B's 24 layers split unevenly) whose
#     script runs `crius-launch --framework megatron:0.8 -- TRAIN`: crius-launch refuses the hand-
#     over (Megatron-Core 0.8 splits evenly) and no training process starts; the job fails;
#  2. the same Cell asked for with --crius-framework=megatron:0.8: job_submit refuses it, naming why;
#  3. a job submitted with --crius-framework=megatron:0.8: job_submit gives it a plan 0.8 runs, and
#     every rank of `crius-launch --framework megatron -- TRAIN` starts with Megatron-LM's
#     arguments for exactly the record's plan and model, and CUDA_DEVICE_MAX_CONNECTIONS=1;
#  4. a llama3-8b job submitted with --crius-framework=torchtitan:0.1: its record's plan, with the
#     megatron-core profile, reaches every rank of `crius-launch --framework torchtitan` as
#     torchtitan's flags (flavor 8B, its degrees, the batch).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
command -v mpirun >/dev/null || { echo "mpirun not installed"; exit 77; }

conf=$TEST_TMP/crius.toml
crius_conf a100:2x8 >"$conf"

cat >"$TEST_TMP/train.sh" <<'T'
#!/bin/bash
# Stands in for pretrain_gpt.py: records that it started, with which arguments.
printf '%s\n' "$@" >"$OUT.$RANK.args"
echo "CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-}" >"$OUT.$RANK.env"
T
chmod +x "$TEST_TMP/train.sh"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
job() {  # job NAME FRAMEWORK-ARG: a batch script that hands its plan to FRAMEWORK-ARG
  cat >"$1.sh" <<J
#!/bin/bash
export PATH="$B/bin:\$PATH" OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1 OUT="$TEST_TMP/$1"
[ "\${CRIUS_LAB_HOSTS:-0}" = 1 ] || export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
crius-launch --framework $2 -- "$TEST_TMP/train.sh" --data-path /nonexistent
J
}
model=(--crius-model=bert__1.3B --crius-global-batch=256)

# 1. planned for crius-train, handed to Megatron-Core 0.8: refused before any rank starts
job uneven megatron:0.8
id=$(sbatch_wait -o uneven.out "${model[@]}" --crius-cell=a100:2x8:16 --crius-framework=crius-train uneven.sh)
cat uneven.out
[ "$(job_field "$id" JobState)" = FAILED ] || fail "job $id: $(job_field "$id" JobState), not FAILED"
[ "$(job_field "$id" ExitCode)" = 1:0 ] || fail "job $id exit $(job_field "$id" ExitCode), not 1"
grep -q "cannot hand the plan to megatron:0.8: .*cannot express these stage layer ranges" uneven.out ||
  fail "crius-launch did not say why"
grep -q "submit with --crius-framework megatron:0.8" uneven.out || fail "crius-launch did not say what to do"
ls uneven.*.args 2>/dev/null && fail "a training process started with a plan it cannot run"

# 2. that Cell for a Megatron-Core 0.8 job: refused at submission
if sbatch --parsable -o /dev/null "${model[@]}" --crius-cell=a100:2x8:16 --crius-framework=megatron:0.8 \
  --wrap true 2>refused.err; then fail "job_submit gave a megatron:0.8 job a Cell its release cannot run"; fi
cat refused.err
grep -q "framework megatron:0.8 needs the 24 layers split evenly" refused.err || fail "job_submit did not say why"

# 3. a Megatron-Core 0.8 job: its plan, handed over whole
job even megatron
id=$(sbatch_wait -o even.out "${model[@]}" --crius-max-gpus=4 --crius-framework=megatron:0.8 even.sh) ||
  { cat even.out; fail "job $id: $(job_field "$id" JobState)"; }
record=$(job_field "$id" AdminComment)
printf '%s' "$record" >record.json
ranks=$(jq '[.plan.stages[] | .dp * .tp] | add' record.json)
# No --crius-runtime: the profile of the stack Megatron-LM runs by default (crius(7), FRAMEWORKS).
jq -e '.plan.framework == "megatron:0.8" and .request.framework == "megatron:0.8" and
       .plan.runtime == "megatron-core" and .request.runtime == "megatron-core"' record.json >/dev/null ||
  fail "record: $record"
[ "$(ls even.*.args | wc -l)" = "$ranks" ] || fail "$(ls even.*.args | wc -l) ranks started, the plan has $ranks"
python3 - record.json even <<'PY' || fail "the ranks did not start with the record's plan"
import glob, json, sys
rec = json.load(open(sys.argv[1])); plan = rec["plan"]; st = plan["stages"]
want = {"--tensor-model-parallel-size": st[0]["tp"], "--pipeline-model-parallel-size": len(st),
        "--micro-batch-size": plan["micro_batch_size"],
        "--global-batch-size": plan["micro_batch_size"] * plan["micro_batches"] * st[0]["dp"],
        "--num-layers": 24, "--hidden-size": 2048, "--num-attention-heads": 32, "--seq-length": 1024}
for path in glob.glob(sys.argv[2] + ".*.args"):
    args = open(path).read().split("\n")
    assert args[:2] == ["--data-path", "/nonexistent"], args  # the program's own first
    for flag, value in want.items():
        assert args[args.index(flag) + 1] == str(value), (path, flag, value, args)
    assert ("--use-distributed-optimizer" in args) == (plan.get("zero", 0) == 1), args
    assert "--overlap-grad-reduce" in args or plan["stages"][0]["dp"] == 1, args  # megatron-core's switches
    assert open(path[:-5] + ".env").read().strip() == "CUDA_DEVICE_MAX_CONNECTIONS=1"
print(len(glob.glob(sys.argv[2] + ".*.args")), "ranks started with the record's plan:", json.dumps(want))
PY

# 4. a torchtitan 0.1 job: its plan as torchtitan's flags
job titan torchtitan
id=$(sbatch_wait -o titan.out --crius-model=llama3-8b --crius-global-batch=16 --crius-max-gpus=8 \
  --crius-framework=torchtitan:0.1 titan.sh) || { cat titan.out; fail "job $id: $(job_field "$id" JobState)"; }
printf '%s' "$(job_field "$id" AdminComment)" >titan.json
jq -e '.plan.framework == "torchtitan:0.1" and .plan.runtime == "megatron-core"' titan.json >/dev/null ||
  fail "record: $(cat titan.json)"
python3 - titan.json titan <<'PY' || fail "the ranks did not start with the record's plan as torchtitan's flags"
import glob, json, sys
plan = json.load(open(sys.argv[1]))["plan"]; st = plan["stages"]
dp, tp, pp = st[0]["dp"], st[0]["tp"], len(st)
want = {"--model.flavor": "8B", "--training.seq_len": "8192", "--parallelism.tensor_parallel_degree": str(tp),
        "--parallelism.pipeline_parallel_degree": str(pp),
        "--training.global_batch_size": str(plan["micro_batch_size"] * plan["micro_batches"] * dp)}
files = glob.glob(sys.argv[2] + ".*.args")
assert len(files) == dp * tp * pp, (len(files), plan)
for path in files:
    args = open(path).read().split("\n")
    for flag, value in want.items():
        assert args[args.index(flag) + 1] == value, (path, flag, value, args)
    assert open(path[:-5] + ".env").read().strip() == "CUDA_DEVICE_MAX_CONNECTIONS="  # Megatron's alone
print(len(files), "ranks started with torchtitan's flags:", json.dumps(want))
PY
echo "launch_framework passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:2x8 "$conf" "$TEST_TMP/inner.sh"
