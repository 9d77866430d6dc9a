#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The same slice of the testbed trace replayed live both ways on a lab cluster shaped like the
# paper's testbed (16 x 2 A40 + 16 x 2 A10, one slurmd per node, accounting in slurmdbd +
# MariaDB): Slurm alone, then crius (job_submit + criusd), and crius-sim's prediction of both
# under its live restart model (crius-sim(1) --restart-model live), with the start latency
# fitted from the Slurm-alone run. Environment: LIVE_JOBS (40), LIVE_SCALE (trace seconds per
# wall second, 30), LIVE_NODES (16 per type), LIVE_SETTINGS (shipped, the default: crius.toml's
# [criusd] defaults in trace time -- a round every 300 s, a 30 s grace, moves after 600 s, 2 per
# round, 1 per job and 4 per user per trace hour; or paper: crius-sim's old setting, no bound on
# moves, none on run time, 16 moves per job per trace hour, a 60 s grace), LIVE_OBJECTIVE
# ([job_submit] objective; default: crius.toml's default), LIVE_MAX_GPUS ([job_submit] max_gpus,
# and crius-sim --max-gpus; default none), LIVE_MAX_SCALE (crius-replay --max-scale: a job's
# Cells at most N x its trace GPUs, as crius-sim's crius policy bounds them; default 4),
# LIVE_MIX (crius-replay --mix: m all movable, the default; mfmp half movable, a quarter without
# --crius-movable, a quarter plain Slurm jobs), LIVE_TIMEOUT (wall seconds each run may take;
# 1500, 7200 for more than 40 jobs), LIVE_OUT (keep the results there). LIVE_JOBS=0: the whole
# trace (244 jobs).
# Paper (testbed): Crius cut the mean JCT by 48.9% against Slurm-like FCFS on its 64 GPUs.
set -u
jobs=${LIVE_JOBS:-40} scale=${LIVE_SCALE:-30} nodes=${LIVE_NODES:-16} settings=${LIVE_SETTINGS:-shipped}
objective=${LIVE_OBJECTIVE:-} max_gpus=${LIVE_MAX_GPUS:-0} max_scale=${LIVE_MAX_SCALE:-4} mix=${LIVE_MIX:-m}
timeout=${LIVE_TIMEOUT:-$(( jobs > 0 && jobs <= 40 ? 1500 : 7200 ))}
case $settings in
  shipped) grace=30 min_run=600 max_moves=2 per_job=1 per_user=4 ;;
  paper) grace=60 min_run=0 max_moves=1000 per_job=16 per_user=10000 ;;
  *) echo "LIVE_SETTINGS=$settings: want shipped or paper"; exit 1 ;;
esac
# Trace seconds to whole wall seconds, at least 1 (0 stays 0).
wall() { awk -v t="$1" -v k="$scale" 'BEGIN { w = int(t / k + 0.5); print (t > 0 && w < 1 ? 1 : w) }'; }
out=${LIVE_OUT:-$TEST_TMP/out}
trace=$TOP/tests/data/traces/runtime_trace.csv
for c in slurmctld slurmdbd mariadbd mpirun jq; do
  command -v $c >/dev/null || { echo "skip: $c not installed (scripts/install-deps)"; exit 0; }
done
[ -f "$B/plugins/job_submit_crius.so" ] && [ -x "$B/sbin/criusd" ] || { echo "skip: plugins or criusd not built"; exit 0; }
mkdir -p "$out"
conf=$out/crius.toml
{
  echo "gpus = \"$TOP/etc/crius/gpus.toml\""
  echo "models = \"$TOP/etc/crius/models.toml\""
  for t in a40 a10; do
    printf '[[partition]]\nname = "%s"\ngpu = "%s"\nnodes = %d\ngpus_per_node = 2\nintra_node_bw_gbs = 31.5\n' $t $t "$nodes"
    printf 'inter_node_bw_gbs = 12.5\ninter_node_latency_us = 10.0\ncalibration = "%s"\n' "$TOP/etc/crius/calibration/nccl-$t.csv"
  done
  # criusd's settings in trace time: the limits are counted in wall seconds.
  printf '[criusd]\ninterval_s = %d\ncheckpoint_grace_s = %d\nmin_runtime_s = %d\n' "$(wall 300)" "$(wall $grace)" "$(wall $min_run)"
  printf 'max_moves_per_round = %d\nmax_moves_per_job_per_hour = %d\nmax_moves_per_user_per_hour = %d\n' $max_moves $per_job $per_user
  printf 'rate_window_s = %d\nrestart_cost_s = %d\n' "$(wall 3600)" "$(wall 60)"
  printf '[job_submit]\n'
  [ -z "$objective" ] || printf 'objective = "%s"\n' "$objective"
  [ "$max_gpus" = 0 ] || printf 'max_gpus = %d\n' "$max_gpus"
} >"$conf"
cat >"$TEST_TMP/inner.sh" <<INNER
#!/usr/bin/env bash
set -u
cd "$out"
export OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
for mode in slurm crius; do
  start=\$(date +%s)
  crius-replay --trace "$trace" --cluster "$conf" --mode \$mode --jobs $jobs --time-scale $scale --max-scale $max_scale \\
    --mix $mix --out "$out/\$mode" --timeout $timeout 2>"$out/\$mode.err" | grep -E 'finished|JCT|makespan|reconfig' ||
    { tail -n 5 "$out/\$mode.err"; exit 1; }
  echo "\$mode: \$(( \$(date +%s) - start )) s wall"
done
INNER
chmod +x "$TEST_TMP/inner.sh"
"$TOP/scripts/crius-lab" run --dir "$TEST_TMP/lab" --nodes "a40:${nodes}x2,a10:${nodes}x2" --accounting \
  --plugins "$B/plugins" --plugstack "$TOP/etc/plugstack.conf.d/crius.conf" --job-submit crius \
  --crius-conf "$conf" -- "$TEST_TMP/inner.sh" || { echo "live replay failed"; exit 1; }
# The start latency of a job in trace seconds, fitted from the Slurm-alone run.
latency=$("$TOP/tests/bench/replay-latency" "$out")
tick=$scale  # Slurm's passes: about one a wall second
echo "crius-sim's live restart model: start latency ${latency} s (fitted), tick ${tick} s, grace $(( $(wall $grace) * scale )) s, restart $(( $(wall 60) * scale + latency )) s (criusd weighs $(( $(wall 60) * scale )) s)"
sim=(--trace "$out/crius/trace.csv" --cluster "$conf" --interval $(( $(wall 300) * scale )) --oracle --max-gpus "$max_gpus"
  --max-moves-per-round "$max_moves" --min-runtime $(( $(wall $min_run) * scale )) --max-moves-per-job-per-hour "$per_job"
  --rate-window $(( $(wall 3600) * scale )) --restart-model live --tick "$tick" --start-latency "$latency"
  --checkpoint-grace $(( $(wall $grace) * scale )) --restart-cost $(( $(wall 60) * scale + latency ))
  --policy-restart-cost $(( $(wall 60) * scale )))
crius-sim "${sim[@]}" --policy fcfs --json "$out/slurm-sim.json" >/dev/null || { echo "crius-sim (fcfs) failed"; exit 1; }
crius-sim "${sim[@]}" --policy crius ${objective:+--objective "$objective"} \
  --live slurm-live="$out/slurm/runs.csv" --live crius-live="$out/crius/runs.csv" --json "$out/all.json" \
  --plot "$out/plot" | sed -n '/^policy  /,$p'
n=$(($(grep -vc '^#' "$out/crius/trace.csv") - 1))
jq -r --argjson n "$n" --arg settings "$settings" --arg mix "$mix" --slurpfile fcfs "$out/slurm-sim.json" '.policies as $p |
  def r: . * 100 | round / 100;
  "live replay (\($settings) settings\(if $mix == "m" then "" else ", mix \($mix)" end)): \($n) jobs, crius mean JCT \($p["crius-live"].jct_mean_s | round) s, slurm alone \($p["slurm-live"].jct_mean_s | round) s (crius/slurm \($p["crius-live"].jct_mean_s / $p["slurm-live"].jct_mean_s | r)), crius-sim \($p.crius.jct_mean_s | round) s (live/sim \($p["crius-live"].jct_mean_s / $p.crius.jct_mean_s | r)), slurm-sim \($fcfs[0].policies.fcfs.jct_mean_s | round) s (live/sim \($p["slurm-live"].jct_mean_s / $fcfs[0].policies.fcfs.jct_mean_s | r))",
  (($p["crius-live"].jct_mean_by_kind_s // {}) | to_entries[] | .key as $k |
    "  \($k) jobs: crius mean JCT \(.value | round) s, slurm alone \($p["slurm-live"].jct_mean_by_kind_s[$k] | round) s (crius/slurm \(.value / $p["slurm-live"].jct_mean_by_kind_s[$k] | r)), crius-sim \($p.crius.jct_mean_by_kind_s[$k] | round) s (live/sim \(.value / $p.crius.jct_mean_by_kind_s[$k] | r))")' "$out/all.json"
# Per job: its JCT with crius against Slurm alone (the last run's end less its submission).
awk -F, 'FNR == 1 { f++; next }
  f == 1 { kind[$1] = ($13 == "movable" ? "" : "," $13); next }
  { if ($4 > end[f, $1]) end[f, $1] = $4; sub_s[f, $1] = $2; names[$1] = 1 }
  END {
    worst = 0; over = ""; n = 0; faster = 0
    for (j in names) {
      a = end[2, j] - sub_s[2, j]; b = end[3, j] - sub_s[3, j]
      if (a <= 0) continue
      r = b / a; n++; faster += (r < 1)
      if (r > worst) { worst = r; wj = j }
      if (r > 2) over = over " " substr(j, 1, 8) sprintf("(%.2f%s)", r, kind[j])
    }
    printf "per job, crius/slurm JCT: %d of %d jobs faster with crius, worst %.2f (job %s); over 2x:%s\n",
      faster, n, worst, substr(wj, 1, 8), (over == "" ? " none" : over)
  }' "$out/crius/jobs.csv" "$out/slurm/runs.csv" "$out/crius/runs.csv"
# How far the rules could go on these job lists (crius-sim): crius without the shipped bounds on
# moves, and sia, which also reorders the queue.
if [ "$settings" = shipped ]; then "$TOP/tests/bench/replay-bound" "$out"; fi
