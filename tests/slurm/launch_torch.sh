#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A PyTorch torch.distributed job (Debian's python3-torch, gloo on CPU) across two lab nodes
# that are network hosts of their own: `crius-launch -- python3 torch_groups.py` with the default
# launcher (mpirun) and no --master-addr. Every rank meets at MASTER_ADDR, which is Slurm's
# NodeAddr of the first node, builds Megatron-LM's tensor-, data- and pipeline-parallel groups
# of the plan (tp 2 x dp 2 x pp 2 on 2 x 4 GPUs), and all-reduces within each of them.
set -u
command -v slurmctld >/dev/null || { echo "slurmctld not installed"; exit 77; }
command -v mpirun >/dev/null || { echo "mpirun not installed"; exit 77; }
# Debian's interpreter: python3-torch is installed for it, whatever python3 is first on PATH
PY=/usr/bin/python3
"$PY" -c 'import torch.distributed' 2>/dev/null || { echo "python3-torch not installed (scripts/install-deps)"; exit 77; }
[ "${CRIUS_LAB_ONE_HOST:-0}" = 1 ] && { echo "CRIUS_LAB_ONE_HOST=1: nodes are not hosts"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

cat >"$TEST_TMP/job.sh" <<EOF2
#!/bin/bash
set -u
scontrol show node a100-1 | tr ' ' '\n' | sed -n 's/^NodeAddr=//p' >"$TEST_TMP/addr"
export OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=1
# Debian 13's PyTorch 2.6 is built without libuv, which its TCPStore asks for by default
export USE_LIBUV=0
"$B/bin/crius-launch" -- $PY "$TOP/tests/slurm/torch_groups.py" "$TEST_TMP/rank"
EOF2
chmod +x "$TEST_TMP/job.sh"
cat >"$TEST_TMP/inner.sh" <<EOF2
#!/bin/bash
set -u
[ "\${CRIUS_LAB_HOSTS:-0}" = 1 ] || { echo "\${CRIUS_LAB_HOSTS_WHY:-nodes share one host}"; exit 77; }
cd "$TEST_TMP"
export CRIUS_GPUS_PER_NODE=4 CRIUS_PLAN_JSON='{"version":1,"stages":[{"layers":[0,2],"tp":2,"dp":2},{"layers":[2,4],"tp":2,"dp":2}],"micro_batches":4,"schedule":"1f1b"}'
sbatch -W -p a100 -N2 --gres=gpu:a100:4 -o "$TEST_TMP/job.out" "$TEST_TMP/job.sh"
EOF2
chmod +x "$TEST_TMP/inner.sh"
"$TOP/scripts/crius-lab" run --dir "$TEST_TMP/lab" --nodes a100:2x4 -- "$TEST_TMP/inner.sh"; rc=$?
[ $rc = 77 ] && exit 77
cat "$TEST_TMP/job.out" "$TEST_TMP"/rank.*
[ $rc = 0 ] || fail "the job failed (rc $rc)"
python3 - "$TEST_TMP" "$(cat "$TEST_TMP/addr")" <<'PY' || fail "the torch ranks did not meet as planned"
import glob, json, sys
ranks = {}
for path in glob.glob(sys.argv[1] + "/rank.*"):
    r = json.load(open(path))
    ranks[r["rank"]] = r
assert sorted(ranks) == list(range(8)), sorted(ranks)
for rank, r in ranks.items():
    assert r["host"] == ("a100-1" if rank < 4 else "a100-2"), r
    assert r["master_addr"] == sys.argv[2] and r["master_addr"] != "a100-1", r
    assert r["tp_rank"] == rank % 2 and r["pp_rank"] == rank // 4, r
    s = rank // 4
    want = {"tp": [rank - rank % 2, rank - rank % 2 + 1],
            "dp": [4 * s + rank % 2, 4 * s + rank % 2 + 2],
            "pp": [rank % 4, rank % 4 + 4]}
    assert r["groups"] == want, (r, want)
    assert r["sums"] == {k: sum(v) for k, v in want.items()}, r
print("8 torch ranks on 2 hosts met at", sys.argv[2], "and reduced in their tp, dp and pp groups")
PY
echo "launch_torch passed"
