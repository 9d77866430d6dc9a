#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The checkpoint signal sent to crius-launch reaches every rank; crius-train
# checkpoints and stops; a run with ANOTHER plan resumes from the checkpoint and
# ends exactly where an uninterrupted run ends.
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON

crius-launch --tp 2 --pp 2 --micro-batches 2 -- crius-train --steps 1000000 --samples 2 --checkpoint-dir ck >run1.out 2>&1 &
launcher=$!
for _ in $(seq 1 200); do grep -q 'step 3 ' run1.out && break; sleep 0.1; done
grep -q 'step 3 ' run1.out || { kill "$launcher"; cat run1.out; fail "training did not reach step 3"; }
kill -USR1 "$launcher"
wait "$launcher"
rc=$?
grep -E 'checkpoint|stopped' run1.out
[ $rc = 0 ] || { tail run1.out; fail "checkpointed run: exit $rc"; }
grep -q 'stopped after the checkpoint signal' run1.out || fail "no stop after the signal"
n=$(sed -n 's/.*stopped after the checkpoint signal at step \([0-9]*\).*/\1/p' run1.out)
[ -s ck/crius-train.ckpt ] || fail "no checkpoint file"
total=$((n + 3))

# Resume with another plan (pure DP over 2 ranks) and verify against one rank from the same checkpoint.
crius-launch --dp 2 --micro-batches 2 -- crius-train --steps $total --checkpoint-dir ck --resume --verify --samples 2 --report r2.json >run2.out 2>&1 \
  || { cat run2.out; fail "resumed run failed"; }
grep -q "resumed from ck/crius-train.ckpt at step $n" run2.out || { cat run2.out; fail "did not resume at step $n"; }
grep -q 'verify PASSED' run2.out || { cat run2.out; fail "resumed run does not verify"; }
# An uninterrupted one-rank run of the same steps ends with the same loss.
crius-launch -n 1 --micro-batches 2 -- crius-train --steps $total --samples 2 --report r1.json -q >run3.out 2>&1 || fail "reference run failed"
python3 - <<'PY' || fail "resumed losses differ from the uninterrupted run"
import json
a = json.load(open("r1.json"))["losses"]
b = json.load(open("r2.json"))
first = b["first_step"]
for i, l in enumerate(b["losses"]):
    ref = a[first + i]
    assert abs(l - ref) <= 1e-9 * max(1, abs(ref)), (first + i, l, ref)
print("resumed steps", first, "..", first + len(b["losses"]) - 1, "match the uninterrupted run")
PY
echo "all launch_checkpoint checks passed"
