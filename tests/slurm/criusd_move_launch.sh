#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A job criusd moves runs the plan of the Cell it was moved to: on a real two-type cluster
# (a100:1x4 + v100:1x4) a crius job that job_submit put on a100 waits behind a plain job;
# criusd moves it to v100, where it starts and runs crius-launch -- crius-rankinfo and
# crius-launch -- crius-train. Its batch environment still names the a100 Cell of submission;
# the record (the source of truth, crius(7)) names v100, and so do its ranks and its srun steps.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
command -v mpirun >/dev/null || { echo "mpirun not installed"; exit 77; }
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"

conf=$TEST_TMP/crius.toml
crius_conf --shipped-criusd a100:1x4,v100:1x4 >"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
blocker=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:4 -o /dev/null --wrap 'sleep 300') || fail "plain sbatch"
for _ in $(seq 150); do [ "$(job_field "$blocker" JobState)" = RUNNING ] && break; sleep 0.2; done

cat >job.sh <<J
#!/bin/bash
export PATH="$B/bin:\$PATH" OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1
# nodes that share one host talk over loopback; nodes that are hosts over their own network
[ "\${CRIUS_LAB_HOSTS:-0}" = 1 ] || export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
echo "batch CRIUS_CELL=\$CRIUS_CELL"
crius-launch -- "$B/tests/mpi/crius-rankinfo" >ranks.out 2>launch.err || exit 11
crius-launch -- crius-train --steps 2 --hidden 32 --heads 4 --ffn 64 --seq 8 --vocab 64 --no-estimate -q \
  >train.out 2>&1 || exit 12
srun --ntasks=1 bash -c 'echo "srun CRIUS_CELL=\$CRIUS_CELL"'
J
id=$(sbatch --parsable -o job.out --crius-model=bert__1.3B --crius-global-batch=256 job.sh) || fail "crius sbatch"
sleep 1
[ "$(job_field "$id" Partition)" = a100 ] || fail "test premise: job_submit should choose a100"
criusd --once 2>once.err || { cat once.err; fail "criusd --once failed"; }
cat once.err
for _ in $(seq 600); do
  case $(job_field "$id" JobState) in COMPLETED|FAILED|CANCELLED|TIMEOUT) break ;; esac; sleep 0.2; done
scancel "$blocker"
cat job.out launch.err train.out
[ "$(job_field "$id" JobState)" = COMPLETED ] || fail "job $id: $(job_field "$id" JobState) (exit $(job_field "$id" ExitCode))"
[ "$(job_field "$id" Partition)" = v100 ] || fail "job $id not moved to v100"
record=$(job_field "$id" AdminComment)
jq -e '.cell.gpu == "v100" and .by == "criusd"' <<<"$record" >/dev/null || fail "record: $record"
cell=$(jq -r '"\(.cell.gpu):\(.cell.nodes)x\(.cell.gpus_per_node):\(.cell.stages)"' <<<"$record")
ranks=$(jq '[.plan.stages[] | .dp * .tp] | add' <<<"$record")
grep -q '^batch CRIUS_CELL=a100:' job.out || fail "the batch environment should still name the a100 Cell of submission"
grep -q "criusd moved this job to Cell $cell" launch.err || fail "crius-launch did not run the record's plan"
[ "$(grep -c RANKINFO ranks.out)" = "$ranks" ] || fail "$(grep -c RANKINFO ranks.out) ranks, the record's plan has $ranks"
printf '%s' "$record" >record.json
python3 - ranks.out "$cell" record.json <<'PY' || fail "ranks do not run the record's Cell and plan"
import json, sys
record = json.load(open(sys.argv[3]))
for line in open(sys.argv[1]):
    if not line.startswith("RANKINFO "): continue
    env = json.loads(line[9:])["env"]
    assert env["CRIUS_CELL"] == sys.argv[2], env
    assert json.loads(env["CRIUS_PLAN_JSON"]) == record["plan"], (env["CRIUS_PLAN_JSON"], record["plan"])
print("every rank runs", sys.argv[2])
PY
grep -q 'measured iteration time' train.out || fail "crius-train did not run the moved plan"
grep -qx "srun CRIUS_CELL=$cell" job.out || fail "the job's srun step does not see the record's Cell $cell"
echo "criusd_move_launch passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x4,v100:1x4 "$conf" "$TEST_TMP/inner.sh"
