#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# criusd gives a job only Cells Slurm lets it have — on a real cluster with accounting and
# AccountingStorageEnforce=limits (a100:2x8 + v100:1x8, slurmdbd + MariaDB):
#  1. a QOS with MaxTRESPerJob=gres/gpu=8: job_submit, which cannot see it, gives a job of that
#     QOS 16 GPUs and the job pends as QOSMaxGRESPerJob; criusd gives it a Cell of at most 8
#     GPUs and it starts (the criusd before this check left it pending forever); once criusd's
#     report carries the QOS's limit, job_submit gives a new job of that QOS at most 8 GPUs;
#  2. the same job, --crius-movable, with idle GPUs beside it: criusd does not grow it past 8;
#  3. the v100 partition allowed to another account only (AllowAccounts): job_submit does not
#     choose it for a job of account lab although criusd's report has it free, and criusd does
#     not move the job there from a full a100; allowed to all again, it does;
#  4. accounting sees the GPU type of every run: that job, moved back to a100 once it frees,
#     shows gres/gpu:v100 for its first run and gres/gpu:a100 for its second in sacct (crius
#     asks Slurm 22.05 for untyped GPUs and a type feature, which is what lets a pending job
#     change type; the allocation is typed, per node);
#  5. an account with GrpTRES=gres/gpu=12, then cpu=12, then mem=1500 (the job asks 1000M a
#     node): a movable job on 8 GPUs with 8 more free beside it is not grown to 16 (without the
#     limit, it is);
#  6. [job_submit] time_limit_factor = 2 (on in this whole test) and a QOS with MaxWall=30: a
#     job of that QOS submitted before criusd's report knew of it gets crius's limit of many
#     hours and pends as QOSMaxWallDurationPerJobLimit; criusd sets its limit again within the
#     QOS's 30 minutes, in the same Cell, and it starts; once the report carries the MaxWall,
#     job_submit gives a new job of that QOS 30 minutes at once.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
for c in mariadbd slurmdbd sacctmgr; do command -v $c >/dev/null || { echo "$c not installed (scripts/install-deps)"; exit 77; }; done

conf=$TEST_TMP/crius.toml
crius_conf a100:2x8,v100:1x8 >"$conf"
printf '\n[job_submit]\ntime_limit_factor = 2\n' >>"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
gpus_of() { # ID: GPUs of the job's Cell (nodes x GPUs per node)
  echo $(( $(job_field "$1" NumNodes | cut -d- -f1) * $(job_field "$1" TresPerNode | sed 's/.*://') ))
}
printf '#!/bin/bash\ntrap "exit 0" USR1\nfor _ in $(seq 3000); do sleep 0.2; done\n' >loop.sh
chmod +x loop.sh
crius=(--crius-model=bert__1.3B --crius-global-batch=256 --crius-iters=100000)

sacctmgr -i add qos gpu8 set MaxTRESPerJob=gres/gpu=8 >/dev/null || fail "sacctmgr add qos"
sacctmgr -i modify user root set qos+=gpu8 >/dev/null || fail "sacctmgr modify user"
for _ in $(seq 50); do scontrol show assoc_mgr flags=qos qos=gpu8 2>/dev/null | grep -q 'MaxTRESPJ=.*gres/gpu=8' && break; sleep 0.2; done
scontrol show assoc_mgr flags=qos qos=gpu8 | grep -q 'MaxTRESPJ=.*gres/gpu=8' || fail "slurmctld does not know QOS gpu8"

### 1. A Cell over the QOS's per-job limit, replaced by one within it.
j=$(sbatch --parsable -o /dev/null --qos=gpu8 --crius-movable "${crius[@]}" loop.sh) || fail "sbatch --qos=gpu8"
sleep 1
[ "$(gpus_of "$j")" -gt 8 ] || fail "test premise: job_submit should give job $j more than 8 GPUs, gave $(gpus_of "$j")"
for _ in $(seq 50); do [ "$(job_field "$j" Reason)" = QOSMaxGRESPerJob ] && break; sleep 0.2; done
[ "$(job_field "$j" Reason)" = QOSMaxGRESPerJob ] || fail "test premise: job $j should pend as QOSMaxGRESPerJob: $(job_field "$j" Reason)"
criusd --once 2>once.err || { cat once.err; fail "criusd --once"; }
cat once.err
grep -q "update_pending job $j" once.err || fail "criusd did not give job $j a Cell within its QOS"
wait_state "$j" RUNNING
[ "$(gpus_of "$j")" -le 8 ] || fail "job $j runs on $(gpus_of "$j") GPUs, over its QOS's 8"

# criusd's report now carries the QOS's per-job limit: job_submit keeps a new job within it.
k=$(sbatch --parsable -H -o /dev/null --qos=gpu8 "${crius[@]}" loop.sh) || fail "sbatch --qos=gpu8"
[ "$(gpus_of "$k")" -le 8 ] || fail "job_submit gave job $k $(gpus_of "$k") GPUs with criusd's report of QOS gpu8"
grep -q '^qos gpu8 gpus=8 nodes=-1 wall_s=-1$' "${CRIUS_FREE_GPUS_FILE:?}" || { cat "$CRIUS_FREE_GPUS_FILE"; fail "no QOS limit in the report"; }
scancel "$k"

### 2. Idle GPUs beside it: no growth past the limit.
criusd --once --dry-run --json >grow.json 2>grow.err || { cat grow.err; fail "criusd --once --dry-run"; }
jq -e --argjson j "$j" '[.actions[] | select(.job == $j and (.to.nodes * .to.gpus_per_node) > 8)] | length == 0' grow.json >/dev/null ||
  fail "criusd would grow job $j past its QOS's limit: $(jq -c .actions grow.json)"
jq -e --argjson j "$j" '.jobs[] | select(.job == $j and .considered == "policy")' grow.json >/dev/null ||
  fail "job $j was not offered to the policy: $(jq -c .jobs grow.json)"

### 3. A partition the job's account may not use.
other=$(sbatch --parsable -p a100 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 600') || fail "plain sbatch"
wait_state "$other" RUNNING
sacctmgr -i add account other >/dev/null || fail "sacctmgr add account"
scontrol update partitionname=v100 allowaccounts=other || fail "scontrol update partition"
# criusd's report says v100 is free, and that account lab may not use it: job_submit puts the
# job on a100, where it waits (it used to choose v100, and Slurm refused the submission).
criusd --once 2>report.err || { cat report.err; fail "criusd --once"; }
grep -q '^access v100 up=1 .* allow_accounts=other ' "${CRIUS_FREE_GPUS_FILE:?}" ||
  { cat "$CRIUS_FREE_GPUS_FILE"; fail "criusd's report does not say who v100 lets in"; }
grep -qx 'partition v100 8' "$CRIUS_FREE_GPUS_FILE" || { cat "$CRIUS_FREE_GPUS_FILE"; fail "test premise: v100 free in the report"; }
w=$(sbatch --parsable -o /dev/null "${crius[@]}" --crius-max-gpus=8 --crius-movable loop.sh) ||
  fail "sbatch of a crius job refused (job_submit chose a partition its account may not use?)"
[ "$(job_field "$w" Partition)" = a100 ] || fail "job_submit put job $w on $(job_field "$w" Partition), not a100"
criusd --once 2>denied.err || { cat denied.err; fail "criusd --once"; }
cat denied.err
! grep -q "update_pending job $w .* -> v100" denied.err || fail "criusd moved job $w into v100, which its account may not use"
[ "$(job_field "$w" Partition)" = a100 ] || fail "job $w left a100"
scontrol update partitionname=v100 allowaccounts=ALL || fail "scontrol update partition"
criusd --once 2>allowed.err || { cat allowed.err; fail "criusd --once"; }
cat allowed.err
grep -q "update_pending job $w .* -> v100" allowed.err || fail "criusd did not move job $w to v100 once its account could use it"
wait_state "$w" RUNNING

### 4. sacct: the type of each run, before and after a move.
scancel "$other" "$j"
wait_state "$other" CANCELLED 20 2>/dev/null || true
criusd 2>move.err & pid=$!
for _ in $(seq 150); do
  [ "$(job_field "$w" Partition)" = a100 ] && [ "$(job_field "$w" JobState)" = RUNNING ] && break; sleep 0.2; done
kill "$pid"; wait "$pid" 2>/dev/null
cat move.err
[ "$(job_field "$w" Partition)" = a100 ] && [ "$(job_field "$w" JobState)" = RUNNING ] || fail "job $w was not moved to a100"
# slurmdbd learns of the second start a moment after slurmctld
for _ in $(seq 150); do sacct -n -D -X -j "$w" -P -o State,Partition | grep -qx 'RUNNING|a100' && break; sleep 0.2; done
sacct -D -X -j "$w" -P -o JobID,Partition,State,AllocTRES | tee runs.txt
# loop.sh ends on the checkpoint signal, so criusd requeues a job that has already completed.
# Before 25.11.3 Slurm logged that run again as REQUEUED; from 25.11.3 it stays COMPLETED
# (commit 72918a141c, ticket 24379: "On requeue, don't complete jobs that are already complete").
first=REQUEUED
v=$(sinfo -V | awk '{print $2}')
if printf '25.11.3\n%s\n' "$v" | sort -C -V; then first=COMPLETED; fi
grep -qE "^$w\|v100\|$first\|.*gres/gpu:v100=8" runs.txt ||
  fail "sacct does not show the v100 run as $first (Slurm $v) with gres/gpu:v100"
grep -qE "^$w\|a100\|RUNNING\|.*gres/gpu:a100=8" runs.txt || fail "sacct does not show the a100 run with gres/gpu:a100"

### 5. An account's GrpTRES: a job does not grow past what it leaves.
r=$(sbatch --parsable -o /dev/null --mem=1000 "${crius[@]}" --crius-movable loop.sh) || fail "sbatch"
wait_state "$r" RUNNING
[ "$(gpus_of "$r")" = 8 ] || fail "test premise: job $r should run on 8 GPUs, got $(gpus_of "$r")"
scancel "$w"
wait_state "$w" CANCELLED 20 2>/dev/null || true
grows() { criusd --once --dry-run --json 2>/dev/null | jq -r --argjson r "$r" '[.actions[] | select(.job == $r) | .to.nodes * .to.gpus_per_node] | max // 0'; }
[ "$(grows)" -gt 8 ] || fail "the control: with the a100 node beside it free, job $r should grow"
acct=$(job_field "$r" Account)
sacctmgr -i modify account "$acct" set GrpTRES=gres/gpu=12 >/dev/null || fail "sacctmgr modify account"
for _ in $(seq 50); do scontrol show assoc_mgr flags=assoc accounts="$acct" 2>/dev/null | grep -q 'GrpTRES=.*gres/gpu=12' && break; sleep 0.2; done
[ "$(grows)" -le 8 ] || fail "criusd would grow job $r past its account's GrpTRES=gres/gpu=12"
sacctmgr -i modify account "$acct" set GrpTRES=gres/gpu=-1 >/dev/null
# CPUs (a task per GPU, one CPU each here): Slurm does not check them for a job criusd changed.
sacctmgr -i modify account "$acct" set GrpTRES=cpu=12 >/dev/null || fail "sacctmgr modify account"
for _ in $(seq 50); do scontrol show assoc_mgr flags=assoc accounts="$acct" 2>/dev/null | grep -q 'GrpTRES=cpu=12' && break; sleep 0.2; done
scontrol show assoc_mgr flags=assoc accounts="$acct" | grep -q 'GrpTRES=cpu=12' || fail "slurmctld does not know GrpTRES=cpu=12"
[ "$(grows)" -le 8 ] || fail "criusd would grow job $r past its account's GrpTRES=cpu=12"
sacctmgr -i modify account "$acct" set GrpTRES=cpu=-1 >/dev/null
# Memory (--mem=1000 a node): GrpTRES=mem=1500 leaves it one node.
sacctmgr -i modify account "$acct" set GrpTRES=mem=1500 >/dev/null || fail "sacctmgr modify account"
for _ in $(seq 50); do scontrol show assoc_mgr flags=assoc accounts="$acct" 2>/dev/null | grep -qE 'GrpTRES=[^ ]*mem=1500M?\(' && break; sleep 0.2; done
scontrol show assoc_mgr flags=assoc accounts="$acct" | grep -qE 'GrpTRES=[^ ]*mem=1500M?\(' || fail "slurmctld does not know GrpTRES=mem=1500"
[ "$(grows)" -le 8 ] || fail "criusd would grow job $r past its account's GrpTRES=mem=1500"
sacctmgr -i modify account "$acct" set GrpTRES=mem=-1 >/dev/null
scancel -u "$(id -un)"

### 6. A time limit crius set, within the QOS's MaxWall.
for _ in $(seq 100); do [ -z "$(squeue -h -o %i)" ] && break; sleep 0.2; done
criusd --once 2>/dev/null || fail "criusd --once"  # a report of all GPUs free, before the QOS exists
sacctmgr -i add qos wall30 set MaxWall=30 >/dev/null || fail "sacctmgr add qos wall30"
sacctmgr -i modify user root set qos+=wall30 >/dev/null || fail "sacctmgr modify user"
for _ in $(seq 50); do scontrol show assoc_mgr flags=qos qos=wall30 2>/dev/null | grep -q 'MaxWallPJ=30' && break; sleep 0.2; done
scontrol show assoc_mgr flags=qos qos=wall30 | grep -q 'MaxWallPJ=30' || fail "slurmctld does not know QOS wall30's MaxWall"
minutes() { # ID: the job's TimeLimit in minutes
  job_field "$1" TimeLimit | awk -F'[-:]' 'NF == 4 { print ($1 * 24 + $2) * 60 + $3; next } { print $1 * 60 + $2 }'
}
t=$(sbatch --parsable -o /dev/null --qos=wall30 "${crius[@]}" loop.sh) || fail "sbatch --qos=wall30"
[ "$(minutes "$t")" -gt 30 ] || fail "test premise: crius's limit of job $t should be over 30 minutes: $(job_field "$t" TimeLimit)"
for _ in $(seq 50); do [ "$(job_field "$t" Reason)" = QOSMaxWallDurationPerJobLimit ] && break; sleep 0.2; done
[ "$(job_field "$t" Reason)" = QOSMaxWallDurationPerJobLimit ] ||
  fail "test premise: job $t should pend as QOSMaxWallDurationPerJobLimit: $(job_field "$t" Reason)"
criusd --once 2>wall.err || { cat wall.err; fail "criusd --once"; }
cat wall.err
# the Cell job_submit gave it, all GPUs being free, is the one the policy starts it in
grep -q "update_pending job $t \(.*\) -> \1, time limit 30 min" wall.err ||
  fail "criusd did not set job $t's limit within its QOS's MaxWall, in its Cell"
wait_state "$t" RUNNING
[ "$(job_field "$t" TimeLimit)" = 00:30:00 ] || fail "job $t's limit is $(job_field "$t" TimeLimit), not the QOS's 30 minutes"
scontrol show job "$t" | grep -q '"time_limit_min":30' || fail "job $t's record does not keep crius's 30 minutes"
grep -q '^qos wall30 gpus=-1 nodes=-1 wall_s=1800$' "$CRIUS_FREE_GPUS_FILE" || { cat "$CRIUS_FREE_GPUS_FILE"; fail "no MaxWall in the report"; }
u=$(sbatch --parsable -H -o /dev/null --qos=wall30 "${crius[@]}" loop.sh 2>submit.err) || { cat submit.err; fail "sbatch --qos=wall30"; }
[ "$(job_field "$u" TimeLimit)" = 00:30:00 ] || fail "job_submit gave job $u $(job_field "$u" TimeLimit) with criusd's report of QOS wall30"
grep -q 'crius: time limit 30 minutes: .*MaxWall' submit.err || { cat submit.err; fail "sbatch does not say the limit is the MaxWall's"; }
scancel -u "$(id -un)"
echo "criusd limits checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:2x8,v100:1x8 "$conf" "$TEST_TMP/inner.sh" --accounting --enforce-limits
