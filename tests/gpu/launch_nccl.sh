#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# NCCL communicators of the crius runtime (unique id via MPI_Bcast, ncclCommSplit
# per TP/DP/PP group, checked calls, async error polling): an all-reduce over each
# rank's TP group gives the sum of its members. Skips (77) without a usable GPU.
set -u
fail() { echo "FAIL: $*"; exit 1; }
RI=$B/tests/mpi/crius-rankinfo
[ -x "$RI" ] || fail "$RI not built"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "${ngpu:-0}" -ge 1 ] || { echo "SKIP: no GPU (nvidia-smi -L lists none)"; exit 77; }
n=$(( ngpu >= 4 ? 4 : ngpu ))
if [ "$n" -ge 2 ]; then opts=(--tp 2 --dp $((n / 2))); else opts=(-n 1); fi
crius-launch "${opts[@]}" -- "$RI" --nccl >out.txt 2>&1
rc=$?
cat out.txt
[ $rc = 77 ] && { echo "SKIP: $(grep SKIP out.txt | head -1)"; exit 77; }
[ $rc = 0 ] || fail "exit $rc"
python3 - out.txt <<'PY' || fail "NCCL all-reduce results"
import json, sys
rows = [json.loads(l[9:]) for l in open(sys.argv[1]) if l.startswith("RANKINFO ")]
assert rows, "no ranks"
for j in rows:
    assert j["nccl_tp_rank_sum"] == sum(j["tp_group"]), j
print(len(rows), "ranks: NCCL TP all-reduce correct")
PY
