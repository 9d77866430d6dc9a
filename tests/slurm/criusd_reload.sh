#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# criusd reloads crius.toml while it runs (criusd(8), SIGNALS): an edit that does not load is
# logged with its line and the configuration in use stays (criusd keeps running and deciding);
# an edit that loads takes effect at the next round (here: skip_users names the job's user, so
# the job is no longer offered to the policy); SIGHUP reloads without an edit.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
conf=$TEST_TMP/crius.toml
crius_conf a100:1x8 "metrics_file = \"$TEST_TMP/criusd.prom\"" >"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
id=$(sbatch --parsable -o /dev/null --crius-model=bert__1.3B --crius-global-batch=256 --wrap 'sleep 600') || fail "crius sbatch"
wait_state "$id" RUNNING
# as under systemd: each line with its level as journald's "<N>" prefix
JOURNAL_STREAM=8:12345 criusd 2>loop.err & pid=$!
trap 'kill $pid 2>/dev/null' EXIT
rounds() { awk '$1 == "crius_criusd_rounds_total" {print $2}' criusd.prom 2>/dev/null || echo 0; }
wait_rounds() { # N: until criusd has decided N rounds in all
  for _ in $(seq 100); do [ "$(rounds)" -ge "$1" ] 2>/dev/null && return 0; sleep 0.1; done
  cat loop.err; fail "criusd did not reach $1 rounds"
}
wait_rounds 1
good=$(cat "$CRIUS_CONF")
# A broken edit: logged with the file and line; the rounds go on.
printf '%s\n[criusd\n' "$good" >"$CRIUS_CONF"
for _ in $(seq 50); do grep -q "reload failed" loop.err && break; sleep 0.1; done
grep "reload failed" loop.err || { cat loop.err; fail "no message for a crius.toml that does not load"; }
grep -q "^<3>criusd: reload failed, keeping the configuration in use: $CRIUS_CONF:[0-9]" loop.err ||
  fail "the message is not an error naming the file and line"
n=$(rounds); wait_rounds $((n + 2))
kill -0 $pid || fail "criusd stopped on a broken crius.toml"
# A good edit: skip_users names root, whose job is then left alone.
printf '%s\nskip_users = ["root"]\n' "$good" >"$CRIUS_CONF"
for _ in $(seq 50); do grep -q "job $id not considered: its user" loop.err && break; sleep 0.1; done
grep -q "^<5>criusd: reloaded $CRIUS_CONF" loop.err || { cat loop.err; fail "the good edit was not reloaded"; }
grep -q "^<6>criusd: job $id not considered: its user, account, partition or QOS is on a skip list" loop.err ||
  { cat loop.err; fail "the reloaded skip_users did not take effect"; }
# SIGHUP: reloaded without an edit.
kill -HUP $pid
for _ in $(seq 50); do [ "$(grep -c "criusd: reloaded" loop.err)" -ge 2 ] && break; sleep 0.1; done
[ "$(grep -c "criusd: reloaded" loop.err)" -ge 2 ] || { cat loop.err; fail "SIGHUP did not reload"; }
kill -0 $pid || fail "criusd stopped on SIGHUP"
kill $pid; wait $pid; rc=$?
[ $rc = 0 ] || fail "criusd exited $rc on SIGTERM"
cat loop.err
echo "criusd reload checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x8 "$conf" "$TEST_TMP/inner.sh"
