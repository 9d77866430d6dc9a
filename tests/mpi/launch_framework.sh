#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-launch --framework outside Slurm: the plan of crius-estimate --json, made for a
# Megatron-Core 0.8 job, reaches every rank of the program as Megatron-LM's arguments after the
# program's own; a plan 0.8 cannot express, a model it cannot tell, and a command that already
# sets another value each stop the launch with exit 1 before any rank starts.
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON CRIUS_MODEL
C=$TOP/etc/crius/crius.toml
cat >prog.sh <<'P'
#!/bin/bash
printf '%s\n' "$@" >"args.$RANK"
P
chmod +x prog.sh
refused() {  # refused MESSAGE crius-launch-args...: exit 1, MESSAGE on stderr, no rank started
  local msg=$1; shift
  rm -f args.*
  crius-launch --cluster "$C" "$@" >out.txt 2>err.txt
  local rc=$?
  [ $rc = 1 ] || { cat err.txt; fail "crius-launch $*: exit $rc, expected 1"; }
  grep -qF -- "$msg" err.txt || { cat err.txt; fail "crius-launch $*: stderr lacks '$msg'"; }
  ls args.* >/dev/null 2>&1 && fail "crius-launch $*: a rank started"
  return 0
}

# A 0.8 job's plan: 4 ranks, 2 stages of 12 layers.
crius-estimate --cluster "$C" --model gpt3-1.3b --global-batch 16 --gpu a100 --nodes 1 --gpus-per-node 4 --stages 2 \
  --runtime megatron-core --framework megatron:0.8 --json >even.json || fail "crius-estimate"
crius-launch --cluster "$C" --plan even.json --framework megatron -- ./prog.sh --data-path x || fail "the hand-over failed"
[ "$(ls args.* | wc -l)" = 4 ] || fail "$(ls args.* | wc -l) ranks, not 4"
for f in args.*; do
  head -n 2 "$f" | tr '\n' ' ' | grep -qx -- '--data-path x ' || fail "$f: the program's own arguments first"
  grep -qx -- '--pipeline-model-parallel-size' "$f" || fail "$f: no pipeline size"
  sed -n '/^--num-layers$/{n;p}' "$f" | grep -qx 24 || fail "$f: not gpt3-1.3b's 24 layers"
done
line=$(crius-launch --cluster "$C" --plan even.json --print-megatron-args) || fail "--print-megatron-args"
[ "$line" = "$(sed -n '3,$p' args.0 | tr '\n' ' ' | sed 's/ $//')" ] || fail "--print-megatron-args differs from the hand-over"

# A plan made for crius-train: 24 layers on 16 stages, which 0.8 cannot split.
crius-estimate --cluster "$C" --model gpt3-1.3b --global-batch 16 --gpu a100 --nodes 2 --gpus-per-node 8 --stages 16 \
  --runtime megatron-core --json >uneven.json || fail "crius-estimate (uneven)"
refused "cannot hand the plan to megatron:0.8" --plan uneven.json --framework megatron:0.8 -- ./prog.sh
refused "submit with --crius-framework megatron:0.8" --plan uneven.json --framework megatron:0.8 -- ./prog.sh
# A plan of flags names no model.
refused "which model? The plan does not say; give --model" --tp 2 --pp 2 --layers 24 --framework megatron -- ./prog.sh
refused "--model: " --tp 2 --pp 2 --layers 24 --framework megatron --model no-such-model -- ./prog.sh
# The command says otherwise.
refused "the command gives --num-layers 48, the plan 24" --plan even.json --framework megatron -- ./prog.sh --num-layers 48
refused "--framework: 'deepspeed' is not a framework" --plan even.json --framework deepspeed -- ./prog.sh
echo "launch_framework passed"
