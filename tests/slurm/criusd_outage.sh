#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A criusd outage changes nothing a user sees, and criusd --rollback leaves no crius pin or hold
# behind. On a real cluster (a100:2x8 + v100:1x8) whose a100 partition only group root may use:
#  1. criusd's report an hour old (as after an hour's outage): a user's new crius job still gets
#     a Cell in a partition they may use (v100), and at most [job_submit] outage_max_gpus (4
#     here) GPUs, where without criusd's report it would get a100's 16 and be refused;
#  2. what a criusd gone for good left (hand-made, as a criusd killed mid-round leaves it): a
#     pending job pinned to a busy node, a job requeued held in the middle of a move, a running
#     job with a move in flight; `criusd --rollback --dry-run` changes nothing; `criusd
#     --rollback` clears the pin (the job starts elsewhere), releases the held job in its
#     record's Cell, and drops every move from the records.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"

conf=$TEST_TMP/crius.toml
crius_conf a100:2x8,v100:1x8 >"$conf"
printf '[job_submit]\noutage_max_gpus = 4\n' >>"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
chmod o+x "$TEST_TMP"
mkdir -p user && chmod 777 user
printf '#!/bin/bash\nfor _ in $(seq 3000); do sleep 0.2; done\n' >user/job.sh
chmod 755 user/job.sh
as_nobody() { (cd user && setpriv --reuid=65534 --regid=65534 --clear-groups "$@"); }
crius=(--crius-model=bert__1.3B --crius-global-batch=256)
gpus_of() { echo $(( $(job_field "$1" NumNodes | cut -d- -f1) * $(job_field "$1" TresPerNode | sed 's/.*://') )); }

### 1. An outage
scontrol update partitionname=a100 AllowGroups=root || fail "scontrol update partition"
criusd --once 2>once.err || { cat once.err; fail "criusd --once"; }
report=${CRIUS_FREE_GPUS_FILE:?}
grep -q '^access a100 .* groups=1 ' "$report" || { cat "$report"; fail "the report does not say who may use a100"; }
fresh=$(as_nobody sbatch --parsable -H -o /dev/null "${crius[@]}" job.sh) || fail "nobody's sbatch with a fresh report"
[ "$(job_field "$fresh" Partition)" = v100 ] || fail "fresh report: job $fresh in $(job_field "$fresh" Partition)"
# An hour without criusd: the report's time an hour back (criusd writes it; root owns it).
sed -i "s/^time .*/time $(( $(date +%s) - 3600 ))/" "$report"
stale=$(as_nobody sbatch --parsable -H -o /dev/null "${crius[@]}" job.sh 2>sbatch.err) ||
  { cat sbatch.err; fail "nobody's crius job was refused during the outage"; }
[ "$(job_field "$stale" Partition)" = v100 ] || fail "outage: job $stale in $(job_field "$stale" Partition), which its user may not use"
[ "$(gpus_of "$stale")" -le 4 ] || fail "outage: job $stale has $(gpus_of "$stale") GPUs, over outage_max_gpus 4"
echo "outage: job $stale in $(job_field "$stale" Partition) on $(gpus_of "$stale") GPUs"
job_field "$stale" AdminComment | jq -e '.request.max_gpus == null' >/dev/null ||
  fail "the outage's bound is in the job's record as its own: $(job_field "$stale" AdminComment)"
# The control: no report at all (a site without criusd) is the empty cluster's best Cell.
mv "$report" "$report.away"
none=$(as_nobody sbatch --parsable -H -o /dev/null "${crius[@]}" job.sh 2>none.err)
if [ -n "$none" ]; then
  [ "$(job_field "$none" Partition)" = a100 ] && [ "$(gpus_of "$none")" -gt 4 ] ||
    fail "control: without a report job $none got $(job_field "$none" Partition) $(gpus_of "$none") GPUs"
  scancel "$none"
else
  grep -q "not permitted to use this partition" none.err || { cat none.err; fail "control: unexpected refusal"; }
fi
mv "$report.away" "$report"
# A Cell the job names itself, over the outage's bound, is still given.
own=$(as_nobody sbatch --parsable -H -o /dev/null --crius-cell=v100:1x8 "${crius[@]}" job.sh 2>own.err) ||
  { cat own.err; fail "outage: a job naming its own Cell of 8 GPUs was refused"; }
[ "$(gpus_of "$own")" = 8 ] || fail "outage: job $own got $(gpus_of "$own") GPUs, it named 8"
scancel "$fresh" "$stale" "$own"
criusd --once 2>/dev/null || fail "criusd --once"  # criusd is back: a fresh report
scontrol update partitionname=a100 AllowGroups=ALL || fail "scontrol update partition"

### 2. What a criusd gone for good leaves, rolled back
blocker=$(sbatch --parsable -p a100 -w a100-1 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 600') || fail "plain sbatch"
wait_state "$blocker" RUNNING
# a pending job pinned (by "criusd") to the busy a100-1
p=$(sbatch --parsable -H -o /dev/null --crius-cell=a100:1x8 "${crius[@]}" user/job.sh) || fail "sbatch pinned"
rec=$(job_field "$p" AdminComment | jq -c '.nodes = ["a100-1"] | .by = "criusd"')
scontrol update jobid="$p" ReqNodeList=a100-1 AdminComment="$rec" || fail "pin job $p"
scontrol release "$p"
# a job requeued held by a move to a100 that never finished
h=$(sbatch --parsable -o /dev/null --crius-cell=v100:1x8 --crius-movable "${crius[@]}" user/job.sh) || fail "sbatch held"
wait_state "$h" RUNNING
scontrol requeuehold "$h" || fail "requeuehold"
wait_state "$h" PENDING
rec=$(job_field "$h" AdminComment | jq -c '.move = {cell: (.cell | .gpu = "a100" | .partition = "a100"), phase: "requeued", since: 1,
  reason: "upgrade", nodes: ["a100-2"]} | .history = [{from: "v100:1x8:1", to: "a100:1x8:1", reason: "upgrade", started: 1}]')
scontrol update jobid="$h" AdminComment="$rec" || fail "record the move of job $h"
sleep 1
[ "$(job_field "$p" JobState)" = PENDING ] && [ "$(job_field "$p" ReqNodeList)" = a100-1 ] || fail "test premise: job $p pinned, pending"
[ "$(job_field "$h" JobState)" = PENDING ] && [ "$(job_field "$h" Priority)" = 0 ] || fail "test premise: job $h held"
before=$(scontrol show job "$p"; scontrol show job "$h")
criusd --rollback --dry-run >dry.out 2>dry.err || { cat dry.out dry.err; fail "criusd --rollback --dry-run"; }
cat dry.out
[ "$(grep -c '\[dry run\]' dry.out)" = 2 ] || fail "the dry run should list 2 actions"
[ "$before" = "$(scontrol show job "$p"; scontrol show job "$h")" ] || fail "the dry run changed a job"
criusd --rollback >roll.out 2>roll.err || { cat roll.out roll.err; fail "criusd --rollback"; }
cat roll.out roll.err
wait_state "$p" RUNNING
[ "$(job_field "$p" NodeList)" = a100-2 ] || fail "job $p did not start elsewhere: $(job_field "$p" NodeList)"
wait_state "$h" RUNNING
[ "$(job_field "$h" Partition)" = v100 ] || fail "job $h released in $(job_field "$h" Partition), not its record's v100"
for j in "$p" "$h"; do
  job_field "$j" AdminComment | jq -e '(.move == null) and ((.nodes // []) | length == 0)' >/dev/null ||
    fail "job $j: crius's pin or move is still in its record: $(job_field "$j" AdminComment)"
done
job_field "$h" AdminComment | jq -e '.history[-1].outcome == "rolled back (criusd --rollback)"' >/dev/null ||
  fail "job $h: the rollback is not in its record's history"
criusd --rollback >again.out 2>&1 || fail "a second rollback failed"
grep -q "0 actions, 0 failed" again.out || fail "a second rollback found work: $(cat again.out)"
scancel "$blocker" "$p" "$h"
echo "criusd_outage passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:2x8,v100:1x8 "$conf" "$TEST_TMP/inner.sh"
