#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# What criusd knows of each job, on a real cluster:
#  1. its own runtime profile: of two jobs of the same model and batch in the same Cell, one
#     submitted with --crius-runtime=alpa and one with the default (megatron), criusd --status
#     reports for each the estimator's iteration time of its own profile;
#  2. its progress: a crius-launch -- crius-train --emulate job reports its iterations into its
#     Comment, and criusd's estimate of its remaining time falls as it runs; a job whose user
#     set a Comment keeps it;
#  3. progress from a framework's own log: a Python program that prints Megatron-LM's
#     "iteration N/ M" lines on its stdout, launched with crius-launch --progress-regex megatron,
#     is seen by criusd --status, with no crius line in the job's output.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
[ -x "$B/sbin/criusd" ] || fail "$B/sbin/criusd not built"
conf=$TEST_TMP/crius.toml
cat >"$conf" <<EOF2
gpus = "$TOP/etc/crius/gpus.toml"
models = "$TOP/etc/crius/models.toml"
[[partition]]
name = "a40"
gpu = "a40"
nodes = 1
gpus_per_node = 2
intra_node_bw_gbs = 31.5
inter_node_bw_gbs = 12.5
inter_node_latency_us = 10.0
[criusd]
lock_file = "$TEST_TMP/criusd.lock"
EOF2
cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
job=(--crius-model=bert__1.3B --crius-global-batch=256 -o /dev/null --wrap 'sleep 600')
alpa=$(sbatch --parsable --crius-runtime=alpa "${job[@]}") || fail "sbatch alpa"
mega=$(sbatch --parsable "${job[@]}") || fail "sbatch megatron"
criusd --status >status.out 2>status.err || { cat status.err; fail "criusd --status"; }
cat status.out
for pair in "$alpa alpa" "$mega megatron"; do
  set -- $pair
  cell=$(job_field "$1" AdminComment | jq -c .cell)
  [ "$(jq -r .request.runtime <<<"$(job_field "$1" AdminComment)")" = "$2" ] || fail "job $1: the record's runtime is not $2"
  want=$(crius-estimate --cluster "$CRIUS_CONF" --model bert__1.3B --global-batch 256 --runtime "$2" \
    --gpu "$(jq -r .gpu <<<"$cell")" --nodes "$(jq -r .nodes <<<"$cell")" \
    --gpus-per-node "$(jq -r .gpus_per_node <<<"$cell")" --json --top 1 | jq '.cells[0].iter_time_s')
  got=$(awk -v j="$1" '$1 == j && $6 == "in" { print $8 }' status.out)
  awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d < 0.001 && d > -0.001) }' ||
    fail "job $1 ($2): criusd estimates $got s per iteration, the $2 profile $want s"
  eval "est_$2=$got"
done
[ "$est_alpa" != "$est_megatron" ] || fail "test premise: both profiles give $est_alpa s"
scancel "$alpa" "$mega"; sleep 1

### 2. progress
export CRIUS_PROGRESS_INTERVAL=1
run='exec crius-launch --launcher srun -- crius-train --emulate -q --time-scale 25'
id=$(sbatch --parsable -o progress.out --crius-model=bert__1.3B --crius-global-batch=256 --crius-iters=500 --wrap "$run") ||
  fail "sbatch progress job"
for _ in $(seq 150); do job_field "$id" Comment | grep -q '^crius-progress=[1-9][0-9]*/500@[0-9]*$' && break; sleep 0.2; done
job_field "$id" Comment | grep -q '^crius-progress=[1-9][0-9]*/500@[0-9]*$' ||
  { cat progress.out; fail "the job reported no progress: Comment=$(job_field "$id" Comment)"; }
! grep -q crius-progress progress.out || fail "progress lines leaked into the job's output"
remain() { criusd --status 2>/dev/null | awk -v j="$id" '$1 == j && $6 == "in" { print $9, $10 }'; }
read -r done1 left1 <<<"$(remain)"
est=$(jq .estimate.iter_time_s <<<"$(job_field "$id" AdminComment)")
[ "$done1" != - ] && [ "$done1" -ge 1 ] || fail "criusd did not read the progress: $(criusd --status)"
awk -v l="$left1" -v d="$done1" -v e="$est" 'BEGIN { w = (500 - d) * e; exit !(l > w - 1 && l < w + 1) }' ||
  fail "criusd's remaining time $left1 s is not (500 - $done1) x $est s"
sleep 3
read -r done2 left2 <<<"$(remain)"
[ "$done2" -gt "$done1" ] && awk -v a="$left2" -v b="$left1" 'BEGIN { exit !(a < b) }' ||
  fail "the remaining time did not fall as the job ran: $done1/$left1 s, then $done2/$left2 s"
echo "progress: $done1 done, $left1 s left; then $done2 done, $left2 s left"
scancel "$id"; sleep 1
mine=$(sbatch --parsable -o mine.out --comment=mine --crius-model=bert__1.3B --crius-global-batch=256 --crius-iters=50 \
  --wrap "$run") || fail "sbatch --comment job"
for _ in $(seq 100); do grep -q "has a Comment of its own" mine.out 2>/dev/null && break; sleep 0.2; done
[ "$(job_field "$mine" Comment)" = mine ] || fail "the user's Comment was overwritten: $(job_field "$mine" Comment)"
grep -q "has a Comment of its own" mine.out || { cat mine.out; fail "no warning that the progress is not reported"; }
scancel "$mine"; sleep 1

### 3. Megatron-LM's own log lines
cat >mlog.py <<'PY'
import os, time
for i in range(1, 300):
    if os.environ["RANK"] == "1":  # Megatron-LM logs on the last rank
        print(f" [2026-12-06 12:00:00] iteration {i:8d}/     400 | consumed samples: {8 * i:10d} |", flush=True)
    time.sleep(0.1)
PY
id=$(sbatch --parsable -o mlog.out --crius-model=bert__1.3B --crius-global-batch=256 \
  --wrap "exec crius-launch --launcher srun --progress-regex megatron -- /usr/bin/python3 $TEST_TMP/mlog.py") ||
  fail "sbatch megatron-log job"
for _ in $(seq 150); do job_field "$id" Comment | grep -q '^crius-progress=[1-9][0-9]*/400@[0-9]*$' && break; sleep 0.2; done
job_field "$id" Comment | grep -q '^crius-progress=[1-9][0-9]*/400@[0-9]*$' ||
  { cat mlog.out; fail "Megatron's iteration lines gave no progress: Comment=$(job_field "$id" Comment)"; }
criusd --status >mstatus.out 2>/dev/null
done_m=$(awk -v j="$id" '$1 == j && $6 == "in" { print $9 }' mstatus.out)
[ -n "$done_m" ] && [ "$done_m" != - ] && [ "$done_m" -ge 1 ] || { cat mstatus.out; fail "criusd --status does not show the job's progress"; }
grep -q "iteration" mlog.out || fail "the program's own lines did not reach its output"
! grep -q crius-progress mlog.out || fail "progress lines leaked into the job's output"
echo "megatron log: criusd sees $done_m of 400 iterations done"
scancel "$id"; sleep 1
echo "criusd job input checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a40:1x2 "$conf" "$TEST_TMP/inner.sh"
