#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# One description of the cluster, on a real one (a100:1x8 + v100:1x8, their GRES typed):
# `criusd --check-description` finds crius.toml and Slurm agreeing (exit 0); with a crius.toml
# that says v100 nodes have 4 GPUs and two of them, and names an h100 partition Slurm lacks, it
# says exactly that (exit 1), and a round of criusd places nothing on v100 (a crius job waits
# for a100 rather than go there) until crius.toml is fixed (the control: it goes to v100).
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
conf=$TEST_TMP/crius.toml
crius_conf a100:1x8,v100:1x8 >"$conf"
wrong=$TEST_TMP/wrong.toml
awk '/^name = "v100"/ { v = 1 } v && /^nodes = / { print "nodes = 2"; next }
     v && /^gpus_per_node = / { print "gpus_per_node = 4"; v = 0; next } { print }' "$conf" >"$wrong"
printf '[[partition]]\nname = "h100"\ngpu = "h100"\nnodes = 1\ngpus_per_node = 8\nintra_node_bw_gbs = 450.0\ninter_node_bw_gbs = 50.0\ninter_node_latency_us = 5.0\n' >>"$wrong"
grep -q 'gpus_per_node = 4' "$wrong" || fail "test premise: the wrong crius.toml"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
criusd --check-description >agree.out 2>agree.err || { cat agree.out agree.err; fail "criusd --check-description: exit $? on agreeing files"; }
cat agree.out
grep -qx 'partition a100: agrees (1 nodes x 8 a100)' agree.out || fail "a100 not said to agree"
grep -qx 'partition v100: agrees (1 nodes x 8 v100)' agree.out || fail "v100 not said to agree"
rc=0; criusd --config wrong.toml --check-description >wrong.out 2>wrong.err || rc=$?
cat wrong.out wrong.err
[ "$rc" = 1 ] || fail "criusd --check-description: exit $rc, want 1 where the files differ"
grep -qx 'partition a100: agrees (1 nodes x 8 a100)' wrong.out || fail "a100 not said to agree"
grep -qx 'partition v100: crius.toml says 2 nodes x 4 v100, but node v100-1 has 8 GPUs; criusd places nothing there' wrong.out ||
  fail "the v100 difference is not said exactly"
grep -qx 'partition h100: crius.toml says 1 nodes x 8 h100, but Slurm has no such partition; criusd places nothing there' wrong.out ||
  fail "the missing h100 partition is not said"
# A round with the wrong description: a crius job waits for the busy a100 rather than go to v100.
blocker=$(sbatch --parsable -p a100 -N1 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 300') || fail "plain sbatch"
wait_state "$blocker" RUNNING
id=$(sbatch --parsable -o /dev/null --crius-model=bert__1.3B --crius-global-batch=256 --wrap 'sleep 300') || fail "crius sbatch"
sleep 1
[ "$(job_field "$id" Partition)" = a100 ] || fail "test premise: job_submit should choose the busy a100"
criusd --config wrong.toml --once --dry-run --json >round.json 2>/dev/null || fail "criusd --once --dry-run"
! jq -e --argjson id "$id" '.actions[] | select(.job == $id and .to.gpu == "v100")' round.json >/dev/null ||
  fail "criusd places job $id on v100, which crius.toml describes wrongly"
jq -e '.notes[] | select(. == "partition v100: crius.toml says 2 nodes x 4 v100, but node v100-1 has 8 GPUs; nothing is placed there until they agree")' \
  round.json >/dev/null || fail "the round does not say why: $(jq -c .notes round.json)"
criusd --once --dry-run --json >control.json 2>/dev/null || fail "criusd --once --dry-run"
jq -e --argjson id "$id" '.actions[] | select(.job == $id and .to.gpu == "v100")' control.json >/dev/null ||
  fail "the control: with the right crius.toml criusd does not place job $id on v100: $(jq -c .actions control.json)"
scancel "$id" "$blocker"
echo "criusd_description passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:1x8,v100:1x8 "$conf" "$TEST_TMP/inner.sh"
