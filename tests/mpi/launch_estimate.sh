#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The plan crius-estimate chooses runs as chosen: crius-estimate --json ->
# crius-launch --plan -> the layout matches the estimate's stages, and
# crius-train --verify passes under it.
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
[ -x "$B/bin/crius-estimate" ] || { echo "SKIP: crius-estimate not built in $B"; exit 77; }
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON
crius-estimate --model gpt3-125m --global-batch 16 --cluster "$TOP/etc/crius/crius.toml" --gpu a100 --nodes 1 \
  --gpus-per-node 8 --stages 2 --tp 2 --schedule 1f1b --json >est.json || fail "crius-estimate failed"
crius-launch --plan est.json --json >layout.json || fail "crius-launch --plan est.json"
python3 - <<'PY' || fail "layout does not follow the estimate"
import json
cell = next(c for c in json.load(open("est.json"))["cells"] if c["feasible"])
ranks = json.load(open("layout.json"))["ranks"]
stages = cell["plan"]["stages"]
assert len(ranks) == sum(s["dp"] * s["tp"] for s in stages), len(ranks)
for r in ranks:
    s = stages[r["stage"]]
    assert r["layers"] == s["layers"], (r, s)        # both [begin, end)
    assert len(r["tp_group"]) == s["tp"] and len(r["dp_group"]) == s["dp"], (r, s)
print(len(ranks), "ranks follow", [(s["layers"], s["dp"], s["tp"]) for s in stages])
PY
crius-launch --plan est.json -- crius-train --steps 2 --verify -q >train.out 2>&1
rc=$?
cat train.out
[ $rc = 0 ] && grep -q 'verify PASSED' train.out || fail "crius-train under the estimated plan: exit $rc"
