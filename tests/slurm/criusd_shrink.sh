#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A pending crius job that criusd moves to fewer nodes starts there: Slurm raises a job's CPU
# count by itself but never lowers it, so the Cell's update sets it (a job shrunk from
# a100:2x8 to a100:1x8 kept 16 CPUs on an 8-CPU node and was never runnable: BadConstraints).
# Cluster a100:2x8; a plain job holds one node; job_submit gives the crius job both nodes.
# The job is pinned to the node the policy placed it on (ReqNodeList, and "nodes" in its record).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
conf=$TEST_TMP/crius.toml
crius_conf --shipped-criusd a100:2x8 >"$conf"
cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
block=$(sbatch --parsable -N1 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 600') || fail "plain sbatch"
for _ in $(seq 100); do [ "$(job_field "$block" JobState)" = RUNNING ] && break; sleep 0.2; done
id=$(sbatch --parsable -o /dev/null --crius-model=bert__1.3B --crius-global-batch=256 -c 1 --wrap 'sleep 600') || fail "crius sbatch"
[ "$(job_field "$id" NumNodes)" = 2-2 ] || fail "test premise: job_submit gave job $id $(job_field "$id" NumNodes) nodes, not 2"
echo "before: $(job_field "$id" NumNodes) nodes, $(job_field "$id" NumCPUs) CPUs"
criusd --once 2>once.err || { cat once.err; fail "criusd --once"; }
cat once.err
grep -q "update_pending job $id a100:2x8" once.err || fail "criusd did not move job $id"
for _ in $(seq 100); do [ "$(job_field "$id" JobState)" = RUNNING ] && break; sleep 0.2; done
echo "after: $(job_field "$id" NumNodes) nodes, $(job_field "$id" NumCPUs) CPUs, $(job_field "$id" JobState) ($(job_field "$id" Reason))"
[ "$(job_field "$id" JobState)" = RUNNING ] || fail "job $id shrunk to one node did not start: $(scontrol show job "$id" | grep -E 'Reason|NumCPUs')"
[ "$(job_field "$id" NumCPUs)" = 8 ] || fail "job $id runs with $(job_field "$id" NumCPUs) CPUs, not 8"
# Pinned where the policy placed it: the node the plain job leaves free.
pin=$(job_field "$id" AdminComment | jq -r '.nodes | join(",")')
[ "$pin" = "$(job_field "$id" NodeList)" ] || fail "job $id was pinned to '$pin' but runs on $(job_field "$id" NodeList)"
[ "$(job_field "$id" ReqNodeList)" = "$pin" ] || fail "job $id's ReqNodeList is '$(job_field "$id" ReqNodeList)', not its pin '$pin'"
[ "$pin" != "$(job_field "$block" NodeList)" ] || fail "job $id pinned to the node of the plain job"
grep -q "update_pending job $id .* on nodes \[$pin\]" once.err || fail "criusd's log does not name the nodes"
# Files criusd writes as root: its lock never through a symbolic link (the target is left as it
# was), and --save-state (other users' jobs and comments) readable by root only.
echo keep >target.txt
ln -s "$TEST_TMP/target.txt" link.lock
criusd --once --lock "$TEST_TMP/link.lock" 2>link.err && fail "criusd took a lock through a symbolic link"
grep -q "cannot open the lock file $TEST_TMP/link.lock: it is a symbolic link" link.err || { cat link.err; fail "no reason for the refused lock"; }
[ "$(cat target.txt)" = keep ] || fail "the symbolic link's target was written"
(umask 022; criusd --once --dry-run --save-state "$TEST_TMP/state.json" 2>save.err) || { cat save.err; fail "criusd --save-state"; }
[ "$(stat -c %a state.json)" = 600 ] || fail "--save-state wrote mode $(stat -c %a state.json), not 600"
jq -e '.jobs | length > 0' state.json >/dev/null || fail "--save-state wrote no jobs"
echo "criusd shrink checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:2x8 "$conf" "$TEST_TMP/inner.sh"
