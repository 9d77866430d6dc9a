#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A submission on a loaded cluster gets a Cell that can start now: criusd reports the GPUs
# its round left free and the jobs it left waiting, and job_submit gives a new job the
# objective's Cell among them (the default, adaptive: the fastest while nobody waits, else
# the most efficient). Cluster a100:2x8; a plain job holds one node.
#  1. criusd --once writes the report (one node free, nobody waiting);
#  2. a crius job (bert__1.3B, global batch 256) gets the fastest Cell that fits, a100:1x8,
#     and starts;
#  3. the next one, before criusd's next round, does not count the same GPUs and counts the
#     first as waiting: none fits, it gets its most efficient Cell and waits;
#  4. --crius-max-gpus bounds the Cell and is kept in the record;
#  5. a report that is stale has no free GPUs (the fastest Cell of an empty cluster, bounded by
#     [job_submit] outage_max_gpus: 1x8), one writable by others is ignored (the fastest Cell of
#     an empty cluster, 2x8); a fresh one with nobody waiting gives the
#     fastest that fits (1x8), one with jobs waiting the most efficient to a movable job and,
#     to one that keeps its Cell for life, the most efficient of those at least a third as fast
#     as its fastest (crius-estimate's fastest Cell of the cluster).
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
report=${CRIUS_FREE_GPUS_FILE:?crius-lab sets CRIUS_FREE_GPUS_FILE}
ctld_log=$CRIUS_LAB_DIR/log/slurmctld.log
crius=(--crius-model=bert__1.3B --crius-global-batch=256 -c 1 -o /dev/null --wrap 'sleep 600')
block=$(sbatch --parsable -N1 --gres=gpu:a100:8 -o /dev/null --wrap 'sleep 600') || fail "plain sbatch"
for _ in $(seq 100); do [ "$(job_field "$block" JobState)" = RUNNING ] && break; sleep 0.2; done
[ "$(job_field "$block" JobState)" = RUNNING ] || fail "the plain job did not start"

criusd --once 2>once.err || { cat once.err; fail "criusd --once"; }
[ -f "$report" ] || fail "criusd wrote no report at $report"
cat "$report"
grep -Eq '^partition a100 (0 8|8 0)$' "$report" || fail "the report does not show one free node of 8 GPUs"
grep -q '^waiting 0$' "$report" || fail "the report does not show that nobody waits"
[ "$(stat -c %a "$report")" = 644 ] || fail "report mode $(stat -c %a "$report"), not 644"

a=$(sbatch --parsable "${crius[@]}") || fail "crius sbatch A"
gpus() { job_field "$1" AdminComment | jq '.cell.nodes * .cell.gpus_per_node'; }
[ "$(job_field "$a" NumNodes)" = 1-1 ] && [ "$(gpus "$a")" = 8 ] ||
  fail "job $a got $(job_field "$a" AdminComment | jq -c .cell), not the free node's 8 GPUs"
for _ in $(seq 100); do [ "$(job_field "$a" JobState)" = RUNNING ] && break; sleep 0.2; done
[ "$(job_field "$a" JobState)" = RUNNING ] || fail "job $a, given the free node, did not start: $(job_field "$a" Reason)"
grep -q "cell a100:1x8.*(fits the GPUs free now)" "$ctld_log" || fail "slurmctld's log does not say the Cell fits"
echo "A: job $a in $(job_field "$a" AdminComment | jq -c .cell) is $(job_field "$a" JobState)"

b=$(sbatch --parsable "${crius[@]}") || fail "crius sbatch B"
grep -q "(no Cell fits the GPUs free now: the best Cell, it waits)" "$ctld_log" ||
  fail "slurmctld's log does not say B waits: the GPUs given to $a were counted again"
efficient=$(gpus "$b")
[ "$efficient" -lt 8 ] || fail "job $b, with $a waiting, got $efficient GPUs, not its most efficient Cell"
echo "B: job $b asks for $(job_field "$b" NumNodes) nodes and is $(job_field "$b" JobState)"

c=$(sbatch --parsable --crius-max-gpus=4 "${crius[@]}") || fail "crius sbatch C"
rec=$(job_field "$c" AdminComment)
[ "$(jq '.cell.nodes * .cell.gpus_per_node' <<<"$rec")" -le 4 ] || fail "job $c got $(jq -c .cell <<<"$rec") beyond --crius-max-gpus=4"
[ "$(jq .request.max_gpus <<<"$rec")" = 4 ] || fail "job $c's record lacks request.max_gpus: $rec"
echo "C: job $c with --crius-max-gpus=4 got $(jq -c .cell <<<"$rec")"
err=$(sbatch --parsable --crius-max-gpus=0 "${crius[@]}" 2>&1) && fail "--crius-max-gpus=0 accepted"
grep -q -- "--crius-max-gpus: '0' is not a whole number" <<<"$err" || fail "unclear error: $err"

# A report as criusd writes it, one node free: stale, world-writable, then good.
put_report() {  # TIME MODE [WAITING]
  printf 'crius-free-gpus 3\ntime %s\ninterval_s 300\nwaiting %s\npartition a100 0 8\n' "$1" "${3:-0}" >"$report.new"
  chmod "$2" "$report.new"
  mv "$report.new" "$report"
}
gpus_given() { local id; id=$(sbatch --parsable "$@" "${crius[@]}") || fail "crius sbatch"; gpus "$id"; }
put_report 1 644
[ "$(gpus_given)" = 8 ] || fail "a stale report: the Cell is not bounded by outage_max_gpus (8)"
! grep "job_submit/crius: uid" "$ctld_log" | tail -n 1 | grep -q "fits the GPUs free now" || fail "a stale report's free GPUs were used"
put_report "$(date +%s)" 666
[ "$(gpus_given)" = 16 ] || fail "a world-writable report was used"
grep -q "job_submit/crius: $report: writable by its group or by others" "$ctld_log" || fail "the bad report was not logged"
put_report "$(date +%s)" 644
[ "$(gpus_given)" = 8 ] || fail "a fresh report with nobody waiting did not give the fastest Cell that fits"
# (Each from a fresh report: job_submit counts the GPUs it gave since the report as taken.)
put_report "$(date +%s)" 644 3
id=$(sbatch --parsable "${crius[@]}") || fail "crius sbatch"
kept=$(gpus "$id")
speed=$(job_field "$id" AdminComment | jq '.estimate.samples_per_s')
fastest=$(crius-estimate --cluster "$CRIUS_CONF" --model bert__1.3B --global-batch 256 --json --top 1 | jq '.cells[0].samples_per_s')
awk -v s="$speed" -v f="$fastest" 'BEGIN { exit !(s >= f / 3 - 1e-6) }' && [ "$kept" -gt "$efficient" ] && [ "$kept" -le 8 ] ||
  fail "with 3 jobs waiting a job that keeps its Cell got $kept GPUs at $speed samples/s: not more than the most efficient $efficient within the free 8 at a third of its fastest ($fastest) or more"
sleep 1  # a report of a later second
put_report "$(date +%s)" 644 3
[ "$(gpus_given --crius-movable)" = "$efficient" ] ||
  fail "a fresh report with 3 jobs waiting did not give a movable job the most efficient Cell"
echo "with 3 waiting: $efficient GPUs for a movable job, $kept ($speed samples/s, fastest Cell $fastest) for one that keeps its Cell"
echo "submit load checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a100:2x8 "$conf" "$TEST_TMP/inner.sh"
