#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-launch inside a real (local, fake-GPU) Slurm 22.05 allocation of two nodes:
# the plan comes from the job's CRIUS_PLAN_JSON as written at submission,
# ranks are placed in blocks (stage 0 on the first node, stage 1 on the second),
# and crius-launch -- crius-train --verify passes, with mpirun and with srun --mpi=pmix.
set -u
command -v slurmctld >/dev/null || { echo "SKIP: slurmctld not installed"; exit 77; }
command -v mpirun >/dev/null || { echo "SKIP: mpirun not installed"; exit 77; }
[ -x "$TOP/scripts/crius-lab" ] || { echo "SKIP: scripts/crius-lab missing"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

cat >"$TEST_TMP/job.sh" <<EOF2
#!/bin/bash
set -u
export PATH="$B/bin:\$PATH"
# Where the fake nodes share one host, Open MPI's shared-memory transport (vader) would
# mix the two "nodes'" segments and crash, so ranks talk over TCP here.
export OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1
# nodes that share one host talk over loopback; nodes that are hosts over their own network
[ "\${CRIUS_LAB_HOSTS:-0}" = 1 ] || export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
echo "nodes=\$SLURM_JOB_NODELIST"
# MASTER_ADDR is Slurm's NodeAddr of the first node (127.0.0.1 where nodes share this host)
scontrol show node a100-1 | tr ' ' '\n' | sed -n 's/^NodeAddr=//p' >"$TEST_TMP/addr"
crius-launch --dry-run
crius-launch -- "$B/tests/mpi/crius-rankinfo" >"$TEST_TMP/ranks.out" || exit 11
crius-launch -- "$B/bin/crius-train" --steps 3 --verify -q || exit 12
crius-launch --launcher srun -- "$B/tests/mpi/crius-rankinfo" >"$TEST_TMP/ranks-srun.out" || exit 13
crius-launch --launcher srun -- "$B/bin/crius-train" --steps 3 --verify -q || exit 14
EOF2
chmod +x "$TEST_TMP/job.sh"
cat >"$TEST_TMP/inner.sh" <<EOF2
#!/bin/bash
set -u
cd "$TEST_TMP"
# The plan as the job_submit plugin writes it into a job's environment (this job has no crius
# record: crius-launch falls back to CRIUS_PLAN_JSON).
export CRIUS_GPUS_PER_NODE=2 CRIUS_PLAN_JSON='{"version":1,"stages":[{"layers":[0,2],"tp":2,"dp":1},{"layers":[2,6],"tp":2,"dp":1}],"micro_batches":4,"schedule":"1f1b"}'
sbatch -W -p a100 -N2 --gres=gpu:a100:2 -o "$TEST_TMP/job.out" "$TEST_TMP/job.sh"
echo "sbatch rc=\$?"
EOF2
chmod +x "$TEST_TMP/inner.sh"
"$TOP/scripts/crius-lab" run --dir "$TEST_TMP/lab" --nodes a100:2x8 -- "$TEST_TMP/inner.sh" || fail "crius-lab run failed"
cat "$TEST_TMP/job.out"
grep -q 'sbatch: error' "$TEST_TMP/job.out" && fail "sbatch error"
n=$(grep -c 'verify PASSED' "$TEST_TMP/job.out")
[ "$n" = 2 ] || fail "crius-train --verify passed $n of 2 times (mpirun, srun)"
for f in ranks.out ranks-srun.out; do
  [ "$(grep -c RANKINFO "$TEST_TMP/$f")" = 4 ] || fail "$f: not 4 ranks"
  python3 - "$TEST_TMP/$f" "$(cat "$TEST_TMP/addr")" <<'PY' || fail "$f: ranks on the wrong nodes"
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith("RANKINFO "): continue
    j = json.loads(l[9:]); e = j["env"]; r = j["rank"]
    want = "a100-1" if r < 2 else "a100-2"
    assert e["SLURMD_NODENAME"] == want, (r, e)
    assert e["CRIUS_HOST"] == want, (r, e)
    assert e["LOCAL_RANK"] == str(r % 2) and e["GROUP_RANK"] == str(r // 2), (r, e)
    assert e["CRIUS_PP_RANK"] == str(r // 2) and e["CRIUS_TP_RANK"] == str(r % 2), (r, e)
    assert e["CRIUS_STAGE_LAYERS"] == "0-1,2-5" and e["MASTER_ADDR"] == sys.argv[2], (r, e)
    assert j["tp_group"] == [2 * (r // 2), 2 * (r // 2) + 1], j
print(sys.argv[1], "ok")
PY
done
echo "launch_sbatch passed"
