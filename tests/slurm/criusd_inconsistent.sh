#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# One job never stops criusd's round, and Slurm's word on where jobs may run is final — on a
# real cluster (a100:2x8 + v100:1x8):
#  1. a user's `scontrol update` of a crius job's Cell fields (partition, GRES, node count) is
#     refused by job_modify, naming why in slurmctld's log; other fields stay the user's to
#     change; root may change them.
#  2. a running --crius-movable job whose nodes an admin drains, and a pending job an admin moved
#     to another partition: `criusd --once` ends its round (exit 0), reports the edited job as
#     inconsistent (what differs) and writes the free-GPU report with the drained nodes at 0.
#     The criusd before this check exited 1 ("node a100-1: 8 GPUs given, capacity 0").
#  3. the v100 node reserved for another user: a crius job waiting on a full a100 is not moved
#     there (it would wait, ReqNodeNotAvail); once the reservation is gone, it is.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
command -v setpriv >/dev/null || { echo "setpriv not installed (util-linux)"; exit 77; }

conf=$TEST_TMP/crius.toml
crius_conf a100:2x8,v100:1x8 >"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
crius=(--crius-model=bert__1.3B --crius-global-batch=256)
# A folder the unprivileged user (nobody) can work in.
chmod o+x "$TEST_TMP"
mkdir -p user && chmod 777 user
printf '#!/bin/bash\nfor _ in $(seq 3000); do sleep 0.2; done\n' >user/job.sh
chmod 755 user/job.sh
as_nobody() { (cd user && setpriv --reuid=65534 --regid=65534 --clear-groups "$@"); }

### 1. The owner may not change a crius job's Cell; root may.
u=$(as_nobody sbatch --parsable -H -o /dev/null "${crius[@]}" job.sh) || fail "sbatch as nobody"
part=$(job_field "$u" Partition)
for change in partition=v100 gres=gpu:2 numnodes=1-1; do
  as_nobody scontrol update jobid="$u" "$change" >upd.out 2>&1 && fail "nobody's update $change of a crius job was accepted"
  grep -q 'Access/permission denied' upd.out || { cat upd.out; fail "update $change: not refused as access denied"; }
done
grep -q "job_submit/crius: refused an update by uid 65534 of a crius job: Partition is part of the job's crius Cell" \
  "$CRIUS_LAB_DIR/log/slurmctld.log" || fail "slurmctld's log does not say why the update was refused"
[ "$(job_field "$u" Partition)" = "$part" ] || fail "the refused update changed the partition"
as_nobody scontrol update jobid="$u" timelimit=30 || fail "nobody may not change the time limit of their own crius job"
[ "$(job_field "$u" TimeLimit)" = 00:30:00 ] || fail "time limit not changed"
plain=$(as_nobody sbatch --parsable -H -o /dev/null -p a100 --gres=gpu:a100:1 job.sh) || fail "plain sbatch as nobody"
as_nobody scontrol update jobid="$plain" partition=v100 gres=gpu:v100:1 || fail "a plain job's update was refused"
scancel "$plain"

### 2. A drained node under a running movable job, and a pending job an admin edited.
run=$(sbatch --parsable -o /dev/null "${crius[@]}" --crius-movable --crius-iters=100000 user/job.sh) || fail "sbatch"
wait_state "$run" RUNNING
nodes=$(job_field "$run" NodeList)
scontrol update nodename="$nodes" state=drain reason=crius-test || fail "drain $nodes"
scontrol update jobid="$u" partition=v100 2>/dev/null  # root: accepted (Slurm may warn it cannot run there)
[ "$(job_field "$u" Partition)" = v100 ] || fail "root could not move job $u to v100"
scontrol release "$u"
criusd --once 2>once.err; rc=$?
cat once.err
[ $rc = 0 ] || fail "criusd --once exited $rc with a drained node and an edited job"
grep -q "job $u not considered: its Slurm state differs from its record: asks in partition v100, its record says a100" once.err ||
  fail "the edited job is not reported as inconsistent"
criusd --status >status.out 2>&1 || { cat status.out; fail "criusd --status"; }
grep -E "^$u .*differs from its record" status.out || { cat status.out; fail "--status does not show what differs"; }
grep -E "^$run .*policy" status.out || { cat status.out; fail "the job on drained nodes was not offered to the policy"; }
report=${CRIUS_FREE_GPUS_FILE:?crius-lab sets CRIUS_FREE_GPUS_FILE}
cat "$report"
grep -qx 'partition a100 0 0' "$report" || fail "the drained a100 nodes are not reported full"
scancel "$run" "$u"
scontrol update nodename="$nodes" state=resume || fail "resume $nodes"

### 3. A reservation for another user: its node is not free to a crius job.
block=$(sbatch --parsable -p a100 -N2 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 600') || fail "plain sbatch"
wait_state "$block" RUNNING
# (daemon, not nobody: from 25.11 Slurm reads the name "nobody" as SLURM_AUTH_NOBODY and refuses
# it in a reservation, src/common/uid.c uid_from_string)
scontrol create reservation reservationname=other users=daemon nodes=v100-1 starttime=now duration=10 ||
  fail "scontrol create reservation"
rm -f "$report"  # job_submit would place by a report from before the reservation
w=$(sbatch --parsable -o /dev/null "${crius[@]}" user/job.sh) || fail "sbatch"
[ "$(job_field "$w" Partition)" = a100 ] || fail "test premise: job_submit should put job $w on a100"
criusd --once 2>resv.err || { cat resv.err; fail "criusd --once with a reservation"; }
cat resv.err
! grep -q "update_pending job $w" resv.err || fail "criusd moved job $w to a reserved node"
[ "$(job_field "$w" Partition)" = a100 ] || fail "job $w left a100"
grep -qx 'partition v100 0' "$report" || { cat "$report"; fail "the reserved v100 node is reported free"; }
scontrol delete reservation=other || fail "delete reservation"
criusd --once 2>free.err || { cat free.err; fail "criusd --once without the reservation"; }
cat free.err
grep -q "update_pending job $w .* -> v100" free.err || fail "criusd did not move job $w to the v100 node once it was free"
scancel "$block" "$w"
echo "criusd inconsistent-job and reservation checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:2x8,v100:1x8 "$conf" "$TEST_TMP/inner.sh"
