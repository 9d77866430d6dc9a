#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-train on the GPU path (cuBLAS products, NCCL all-reduces) verifies against
# the one-rank CPU reference. Skips (77) without a GPU or without a CUDA build.
set -u
fail() { echo "FAIL: $*"; exit 1; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "${ngpu:-0}" -ge 1 ] || { echo "SKIP: no GPU (nvidia-smi -L lists none)"; exit 77; }
grep -q '^HAVE_CUDA *= *1' "$TOP/config.mk" || { echo "SKIP: built without CUDA"; exit 77; }
if [ "$ngpu" -ge 4 ]; then opts=(--tp 2 --pp 2); elif [ "$ngpu" -ge 2 ]; then opts=(--tp 2); else opts=(-n 1); fi
for dtype in fp64 fp32; do
  crius-launch "${opts[@]}" --micro-batches 2 -- crius-train --device gpu --dtype $dtype --steps 3 --verify -q >out.$dtype 2>&1
  rc=$?
  cat out.$dtype
  [ $rc = 0 ] || fail "$dtype: exit $rc"
  grep -q 'verify PASSED' out.$dtype || fail "$dtype: not verified"
  grep -q 'gpu (cuBLAS' out.$dtype || fail "$dtype: did not run on the GPU backend"
done
# Against its estimate: the measured iteration time beside the estimator's for the same plan on
# this machine's own profile (reported, not checked: a timing ratio is not a test; the figure
# goes to docs/results.md).
crius-launch "${opts[@]}" --micro-batches 2 -- crius-train --device gpu --dtype fp32 --steps 10 >est.out 2>&1 ||
  { cat est.out; fail "fp32 timing run: exit $?"; }
grep 'crius-train: \(measured\|estimated\)' est.out
grep -q 'crius-train: estimated iteration time .*measured/estimated' est.out || fail "no estimate beside the measured time"
