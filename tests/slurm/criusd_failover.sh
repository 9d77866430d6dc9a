#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Two criusd against one cluster with a backup slurmctld (crius-lab --backup-ctld: the primary
# on this machine's host name, the backup on NAME-b, StateSaveLocation shared), one beside each
# controller, as a site with a backup controller runs them:
#  1. the primary is in control: the criusd beside it moves a waiting crius job to the idle
#     partition; the one beside the backup stands by (logs why, metric crius_criusd_acting 0)
#     and changes nothing;
#  2. the primary's slurmctld is killed; the backup takes over: the first criusd stands by
#     (its slurmctld does not answer), the second acts, and it, alone, moves the next waiting
#     job (through the backup, whose job_submit reads the second criusd's free-GPU report).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
[ "${CRIUS_LAB_ONE_HOST:-0}" = 1 ] && { echo "CRIUS_LAB_ONE_HOST=1: no backup controller host"; exit 77; }

crius_conf a100:1x8,v100:1x8 "metrics_file = \"$TEST_TMP/a.prom\"" >"$TEST_TMP/crius.toml"
# the second criusd: its own lock and metrics (on a site: another host's /run)
sed -e "s|criusd.lock|criusd-b.lock|; s|a.prom|b.prom|" "$TEST_TMP/crius.toml" >"$TEST_TMP/crius-b.toml"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
[ "${CRIUS_LAB_BACKUP:-0}" = 1 ] || { echo "${CRIUS_LAB_BACKUP_WHY:-no backup controller}"; exit 77; }
export PATH="$B/sbin:$PATH"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done' EXIT
metric() { awk -v n="$1" '$1 == n {v = $2} END {print v + 0}' "$2"; }
# the moves of pending jobs a criusd log shows
moves() { grep -o 'update_pending job [0-9]*' "$1" | sort -u | tr '\n' ' '; }

# 1. a100 full: the first crius job waits there (no criusd yet, no free-GPU report); the
# criusd beside the primary moves it to v100
blocker=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 300') || fail "plain sbatch"
wait_state "$blocker" RUNNING
submit() { sbatch --parsable -o /dev/null --crius-model=bert__1.3B --crius-global-batch=256 --wrap 'sleep 300'; }
one=$(submit) || fail "crius sbatch"
sleep 1
[ "$(job_field "$one" JobState)" = PENDING ] && [ "$(job_field "$one" Partition)" = a100 ] ||
  fail "test premise: job $one should wait on a100 ($(job_field "$one" JobState) on $(job_field "$one" Partition))"

criusd 2>a.err & pids+=($!)
"$TOP/scripts/crius-lab" exec --dir "$CRIUS_LAB_DIR" --backup -- criusd --config "$TEST_TMP/crius-b.toml" 2>b.err &
pids+=($!)
for _ in $(seq 100); do grep -q "standing by" b.err && grep -q "acting" a.err && break; sleep 0.1; done
grep -q "acting: slurmctld on $(hostname -s) is in control" a.err || { cat a.err; fail "criusd beside the primary does not act"; }
grep -q "standing by: slurmctld on $(hostname -s) is in control, not the one on $(hostname -s)-b" b.err ||
  { cat b.err; fail "criusd beside the backup does not stand by"; }
wait_state "$one" RUNNING
[ "$(job_field "$one" Partition)" = v100 ] || fail "job $one not moved to v100"
[ "$(moves a.err)" = "update_pending job $one " ] || { cat a.err; fail "criusd beside the primary: moves '$(moves a.err)'"; }
[ -z "$(moves b.err)" ] || { cat b.err; fail "criusd beside the backup moved a job while standing by"; }
for _ in $(seq 30); do [ -s b.prom ] && break; sleep 0.1; done
[ "$(metric crius_criusd_acting a.prom)" = 1 ] && [ "$(metric crius_criusd_acting b.prom)" = 0 ] ||
  fail "crius_criusd_acting: $(metric crius_criusd_acting a.prom) beside the primary, $(metric crius_criusd_acting b.prom) beside the backup"
[ "$(metric crius_criusd_rounds_total b.prom)" = 0 ] || fail "the standing-by criusd decided rounds"

# 2. the primary's slurmctld dies; the backup takes over after SlurmctldTimeout (6 s)
t0=$(date +%s.%N)
kill "$(cat "$CRIUS_LAB_DIR/run/slurmctld.pid")"
for _ in $(seq 300); do
  grep -q "acting: slurmctld on $(hostname -s)-b is in control" b.err && grep -q "standing by: this host's" a.err && break
  sleep 0.1
done
echo "failover: the backup's criusd acts $(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5) s after the primary slurmctld was killed (SlurmctldTimeout 6 s)"
cat a.err b.err
grep -q "acting: slurmctld on $(hostname -s)-b is in control" b.err || fail "criusd beside the backup did not take over"
grep -q "standing by: this host's slurmctld ($(hostname -s)) does not answer" a.err || fail "criusd beside the primary still acts"
two=$(submit) || fail "crius sbatch through the backup controller"
sleep 1
[ "$(job_field "$two" JobState)" = PENDING ] && [ "$(job_field "$two" Partition)" = a100 ] ||
  fail "test premise: job $two should wait on a100 ($(job_field "$two" JobState) on $(job_field "$two" Partition))"
scancel "$one"
wait_state "$two" RUNNING
[ "$(job_field "$two" Partition)" = v100 ] || fail "job $two not moved to v100 after the failover"
[ "$(moves b.err)" = "update_pending job $two " ] || { cat b.err; fail "criusd beside the backup: moves '$(moves b.err)'"; }
[ "$(moves a.err)" = "update_pending job $one " ] || { cat a.err; fail "criusd beside the dead primary moved a job"; }
[ "$(metric crius_criusd_acting a.prom)" = 0 ] && [ "$(metric crius_criusd_acting b.prom)" = 1 ] ||
  fail "crius_criusd_acting after the failover"
scancel "$blocker" "$two"
echo "criusd failover checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x8,v100:1x8 "$TEST_TMP/crius.toml" "$TEST_TMP/inner.sh" --backup-ctld
