#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A move's resharding, by Megatron-Core's own dist_checkpointing (release 0.8), on CPU under
# crius-launch (tests/megatron/dist_ckpt.py): weights saved at TP 2 x PP 2 x DP 1 load, every
# value equal, at TP 4 x PP 1, TP 1 x PP 2 x DP 2 and TP 1 x PP 1; a checkpoint of other weights
# fails the check. Needs Megatron-LM's source (scripts/framework-sources; else it skips) and
# Debian's python3-zarr.
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON
dir=${CRIUS_MEGATRON_LM:-}
if [ -z "$dir" ]; then
  dir=$TOP/../shared/megatron-lm
  [ -d "$dir/core_r0.8.0/megatron" ] || dir=$B/framework-sources/megatron-lm
fi
m=$dir/core_r0.8.0
[ -d "$m/megatron" ] || { echo "no Megatron-LM core_r0.8.0 in $dir (scripts/framework-sources)"; exit 77; }
py=/usr/bin/python3
"$py" -c 'import torch, zarr' 2>/dev/null || { echo "Debian's python3-torch and python3-zarr are needed"; exit 77; }
# Megatron-Core 0.8 writes zarr 2 arrays (Debian 12's python3-zarr; Debian 13 has zarr 3).
"$py" -c 'import sys, zarr; sys.exit(0 if zarr.__version__.startswith("2.") else 1)' ||
  { echo "Megatron-Core 0.8's zarr format needs zarr 2 (this is $("$py" -c 'import zarr; print(zarr.__version__)'))"; exit 77; }
run() { local what=$1; shift; crius-launch "$@" -- "$py" -W ignore "$TOP/tests/megatron/dist_ckpt.py" "$m" $what "$TEST_TMP/ckpt" >"$what.out" 2>&1; }
run save --tp 2 --pp 2 --layers 4 || { cat save.out; fail "save at tp 2 pp 2 failed"; }
[ "$(grep -o ': saved ' save.out | wc -l)" = 4 ] || { cat save.out; fail "not every rank saved"; }
for case in "4:--tp 4" "4:--tp 1 --pp 2 --dp 2 --layers 4" "1:-n 1"; do
  ranks=${case%%:*} plan=${case#*:}
  run load $plan || { cat load.out; fail "load at $plan failed"; }
  n=$(grep -o 'pp [0-9]*, equal' load.out | wc -l)  # mpirun may join two ranks' lines
  [ "$n" = "$ranks" ] || { cat load.out; fail "load at $plan: $n of $ranks ranks loaded their part"; }
  echo "resharded to $plan: $n ranks equal"
done
# The check can fail: another model's weights (here: scaled) under the same names.
sed 's/^full = torch.arange(\(.*\))$/full = 2 * torch.arange(\1)/' "$TOP/tests/megatron/dist_ckpt.py" >other.py
grep -q '^full = 2 \* torch.arange' other.py || fail "test premise: could not make the other model"
crius-launch -n 1 -- "$py" -W ignore other.py "$m" load "$TEST_TMP/ckpt" >other.out 2>&1 &&
  fail "other weights loaded as equal"
grep -q "the loaded part differs from the saved weights" other.out || { cat other.out; fail "other weights: no mismatch reported"; }
echo "megatron_dist_ckpt passed"
