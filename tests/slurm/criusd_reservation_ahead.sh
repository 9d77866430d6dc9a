#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Maintenance ahead keeps a job out of a Cell as Slurm's own scheduler would. On a real
# two-type cluster (a100:1x8 + v100:1x8): a movable crius job with a 3-day time limit runs on
# v100 (criusd moved it there while a100 was busy); a100 frees, but a maintenance reservation
# on a100-1 begins in 2 hours. Slurm starts no plain 3-day job there (the ground truth), and
# criusd does not move the crius job there either, saying why; once the reservation is
# deleted, criusd moves it (the control). job_submit, from criusd's report, gives a new 3-day
# job a Cell clear of the maintenance, which starts, and an hour's job a100 (the control).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"

conf=$TEST_TMP/crius.toml
crius_conf a100:1x8,v100:1x8 "max_moves_per_round = 1" >"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
blocker=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 300') || fail "plain sbatch"
wait_state "$blocker" RUNNING
id=$(sbatch --parsable -o /dev/null --time=3-0 --crius-model=bert__1.3B --crius-global-batch=256 --crius-movable \
  --wrap 'sleep 600') || fail "crius sbatch"
sleep 1
[ "$(job_field "$id" Partition)" = a100 ] || fail "test premise: job_submit should choose a100"
criusd --once 2>once.err || { cat once.err; fail "criusd --once failed"; }
wait_state "$id" RUNNING
[ "$(job_field "$id" Partition)" = v100 ] || fail "job $id not moved to v100: $(cat once.err)"

scontrol create reservation ReservationName=maint StartTime=now+2hours Duration=60 Nodes=a100-1 Users=root \
  Flags=MAINT,IGNORE_JOBS >/dev/null || fail "scontrol create reservation"
scancel "$blocker"
wait_state "$blocker" CANCELLED 20 2>/dev/null || true
# Slurm's own word: a plain 3-day job does not start on a100-1, free but for the maintenance.
plain=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:8 -t 3-0 -o /dev/null --wrap 'sleep 1') || fail "plain 3-day sbatch"
sleep 3
[ "$(job_field "$plain" JobState)" = PENDING ] || fail "test premise: Slurm started a 3-day job across the maintenance"
echo "Slurm keeps a plain 3-day job pending: $(job_field "$plain" Reason)"
scancel "$plain"
wait_state "$plain" CANCELLED 20 2>/dev/null || true

criusd --once --dry-run --json >kept.json 2>kept.err || { cat kept.err; fail "criusd --dry-run failed"; }
jq . kept.json
! jq -e --argjson id "$id" '.actions[] | select(.job == $id)' kept.json >/dev/null ||
  fail "criusd moves job $id onto a100 across the maintenance"
jq -e --argjson id "$id" '.notes[] | select(startswith("job \($id): not moved") and
  test("reservation maint on node a100-1 begins in 1[01][0-9] min, before its time limit of 4320 min"))' kept.json >/dev/null ||
  fail "criusd does not say why job $id stays"

scontrol delete reservation maint || fail "scontrol delete reservation"
criusd --once --dry-run --json >moved.json 2>moved.err || { cat moved.err; fail "criusd --dry-run failed"; }
jq -e --argjson id "$id" '.actions[] | select(.job == $id and .action == "checkpoint" and .to.gpu == "a100")' moved.json >/dev/null ||
  fail "without the reservation criusd does not move job $id to a100: $(cat moved.json)"
scancel "$id"
wait_state "$id" CANCELLED 20 2>/dev/null || true

# job_submit too: with the maintenance on a100-1 in criusd's report, a new 3-day job gets a Cell
# that starts now elsewhere (v100), and starts; an hour's job, which ends before it, gets a100
# (the control).
scontrol create reservation ReservationName=maint StartTime=now+2hours Duration=60 Nodes=a100-1 Users=root \
  Flags=MAINT,IGNORE_JOBS >/dev/null || fail "scontrol create reservation"
criusd --once 2>report.err || { cat report.err; fail "criusd --once failed"; }
grep -q '^reserved a100 [0-9]*$' "${CRIUS_FREE_GPUS_FILE:?}" || { cat "$CRIUS_FREE_GPUS_FILE"; fail "no reservation in criusd's report"; }
long=$(sbatch --parsable -H -o /dev/null --time=3-0 --crius-model=bert__1.3B --crius-global-batch=256 --wrap 'sleep 600') ||
  fail "crius sbatch of a 3-day job"
short=$(sbatch --parsable -H -o /dev/null --time=60 --crius-model=bert__1.3B --crius-global-batch=256 --wrap 'sleep 600') ||
  fail "crius sbatch of an hour's job"
[ "$(job_field "$long" Partition)" = v100 ] || fail "job_submit gave the 3-day job $long $(job_field "$long" Partition), across the maintenance"
[ "$(job_field "$short" Partition)" = a100 ] || fail "the control: an hour's job should get a100, got $(job_field "$short" Partition)"
grep -q "cell v100:.* (fits the GPUs free now)" "$CRIUS_LAB_DIR/log/slurmctld.log" ||
  fail "job_submit's log line does not say the 3-day job's Cell starts now"
scancel "$short"
scontrol release "$long"
wait_state "$long" RUNNING
echo "job_submit: a 3-day job on v100, an hour's job on a100"
scancel "$long"
echo "criusd_reservation_ahead passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x8,v100:1x8 "$conf" "$TEST_TMP/inner.sh"
