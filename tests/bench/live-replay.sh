#!/usr/bin/env bash
# The same slice of the testbed trace replayed live both ways on a lab cluster shaped like the
# paper's testbed (16 x 2 A40 + 16 x 2 A10, one slurmd per node, accounting in slurmdbd +
# MariaDB): Slurm alone, then crius (job_submit + criusd), and crius-sim's prediction for the
# same slice. Environment: LIVE_JOBS (40), LIVE_SCALE (trace seconds per wall second, 30),
# LIVE_NODES (16 per type), LIVE_OBJECTIVE (job_submit's objective: throughput, the default, or
# efficiency), LIVE_MAX_GPUS ([job_submit] max_gpus, and crius-sim --max-gpus; default none),
# LIVE_MAX_MOVES (criusd max_moves_per_round, and crius-sim --max-moves-per-round; default 1000),
# LIVE_MAX_SCALE (crius-replay --max-scale: a job's Cells at most N x its trace GPUs, as crius-sim's
# crius policy bounds them; default 4),
# LIVE_OUT (keep the results there).
# Paper (testbed): Crius cut the mean JCT by 48.9% against Slurm-like FCFS on its 64 GPUs.
set -u
jobs=${LIVE_JOBS:-40} scale=${LIVE_SCALE:-30} nodes=${LIVE_NODES:-16} objective=${LIVE_OBJECTIVE:-throughput}
max_gpus=${LIVE_MAX_GPUS:-0} max_moves=${LIVE_MAX_MOVES:-1000} max_scale=${LIVE_MAX_SCALE:-4}
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
  # crius-sim's setting in trace time: a round every 300 s, the same bound on moves per round,
  # a job moved at most 16 times per trace hour, no minimum run time.
  printf '[criusd]\ninterval_s = %d\ncheckpoint_grace_s = 2\nmin_runtime_s = 0\n' $(( (300 + scale / 2) / scale > 0 ? (300 + scale / 2) / scale : 1 ))
  printf 'max_moves_per_round = %d\nmax_moves_per_job_per_hour = 16\nmax_moves_per_user_per_hour = 10000\n' "$max_moves"
  printf '[job_submit]\nobjective = "%s"\n' "$objective"
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
    --out "$out/\$mode" --timeout 1500 2>"$out/\$mode.err" | grep -E 'finished|JCT|makespan|reconfig' ||
    { tail -n 5 "$out/\$mode.err"; exit 1; }
  echo "\$mode: \$(( \$(date +%s) - start )) s wall"
done
INNER
chmod +x "$TEST_TMP/inner.sh"
"$TOP/scripts/crius-lab" run --dir "$TEST_TMP/lab" --nodes "a40:${nodes}x2,a10:${nodes}x2" --accounting \
  --plugins "$B/plugins" --plugstack "$TOP/etc/plugstack.conf.d/crius.conf" --job-submit crius \
  --crius-conf "$conf" -- "$TEST_TMP/inner.sh" || { echo "live replay failed"; exit 1; }
crius-sim --trace "$out/crius/trace.csv" --cluster "$conf" --policy crius --interval 300 --oracle --max-gpus "$max_gpus" --max-moves-per-round "$max_moves" \
  --live slurm-live="$out/slurm/runs.csv" --live crius-live="$out/crius/runs.csv" --json "$out/all.json" \
  --plot "$out/plot" | sed -n '/^policy  /,$p'
jq -r --argjson n "$jobs" '.policies as $p |
  "live replay: \($n) jobs, crius mean JCT \($p["crius-live"].jct_mean_s | round) s, slurm alone \($p["slurm-live"].jct_mean_s | round) s (crius/slurm \(($p["crius-live"].jct_mean_s / $p["slurm-live"].jct_mean_s * 100 | round) / 100)), crius-sim \($p.crius.jct_mean_s | round) s (live/sim \(($p["crius-live"].jct_mean_s / $p.crius.jct_mean_s * 100 | round) / 100))"' "$out/all.json"
