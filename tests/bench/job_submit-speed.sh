#!/usr/bin/env bash
# What job_submit/crius adds per submission (targets: a typical request <= 5 ms at p99, a 70B
# model on a cluster with 4 GPU types; the worst request we could build <= 20 ms).
#  1. in-process: parse + decide for llama2-70b (global batch 1024) on a 4-type cluster
#     (a100, v100, h100, a40; 4 nodes x 8 GPUs each), wall and thread-CPU percentiles;
#  2. sbatch wall time on the local lab (4 types x 2 nodes x 8 GPUs): a crius job and a plain
#     job with the plugin loaded, and a plain job without it (held jobs, 20 each).
set -u
BENCH=$B/tests/bench/job_submit-bench
[ -x "$BENCH" ] || { echo "job_submit-bench not built (make B=$B bench)"; exit 1; }
cluster() { # NODES
  printf 'gpus = "%s"\nmodels = "%s"\n' "$TOP/etc/crius/gpus.toml" "$TOP/etc/crius/models.toml"
  for t in a100:300:200 v100:150:50 h100:450:400 a40:32:25; do
    IFS=: read -r g intra inter <<<"$t"
    printf '[[partition]]\nname = "%s"\ngpu = "%s"\nnodes = %d\ngpus_per_node = 8\nintra_node_bw_gbs = %s\ninter_node_bw_gbs = %s\ninter_node_latency_us = 5.0\n' \
      "$g" "$g" "$1" "$intra" "$inter"
  done
}
cluster 4 >c4.toml
cluster 2 >c2.toml
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$BENCH" c4.toml llama2-70b 1024 300 || exit 1
# The worst submission we could build (issue 13): a model file of 1,024 layers of width 8 and a
# global batch with 504 divisors; the work budget ([job_submit] work_budget) bounds it.
WORST=spec:family=transformer,dtype=fp16,optimizer=adam,layers=1024,hidden=8,heads=1,kv_heads=1,ffn_hidden=8,seq_len=1,vocab=2,swiglu=false
"$BENCH" c4.toml "$WORST" 14414400 50 || exit 1

cat >submit.sh <<'S'
#!/usr/bin/env bash
# submit.sh LABEL N SBATCH-ARGS...: N held submissions, p50/p99 of sbatch wall time
label=$1 n=$2; shift 2
ts=()
for ((i = 0; i < n; i++)); do
  a=$(date +%s%N); sbatch -H -o /dev/null --wrap true "$@" >/dev/null || exit 1; b=$(date +%s%N)
  ts+=($(( (b - a) / 1000 )))
done
printf '%s\n' "${ts[@]}" | sort -n | awk -v l="$label" '{v[NR]=$1} END {printf "sbatch wall time, %-34s p50 %.1f ms  p99 %.1f ms  (n=%d)\n", l, v[int(NR*0.5+0.5)]/1000, v[int(NR*0.99+0.5)]/1000, NR}'
scancel $(squeue -h -o %i) 2>/dev/null
S
chmod +x submit.sh
# flood.sh LABEL KIND: 100 submissions by a libslurm client (KIND crius: each a different global
# batch, so no answer comes from job_submit's cache; plain: no crius options) while squeue is
# timed; slurmctld's own figure for the submit RPC from sdiag.
cat >flood.sh <<'S'
#!/usr/bin/env bash
label=$1 kind=$2
sdiag -r >/dev/null
(for i in $(seq 100); do
   if [ "$kind" = crius ]; then
     printf '_SLURM_SPANK_OPTION_crius_crius_model=llama2-70b\n_SLURM_SPANK_OPTION_crius_crius_global_batch=%d\n' $((1024 + 8 * i))
   fi | "$B/tests/slurm/crius-hostile-submit" >/dev/null 2>&1
 done) &
flood=$!
ts=()
while kill -0 $flood 2>/dev/null; do a=$(date +%s%N); squeue -h >/dev/null; b=$(date +%s%N); ts+=($(( (b - a) / 1000 ))); sleep 0.05; done
wait $flood
rpc=$(sdiag | awk '/REQUEST_SUBMIT_BATCH_JOB/ {for (i = 1; i <= NF; i++) if ($i ~ /^ave_time:/) {sub("ave_time:", "", $i); print $i}}')
printf '%s\n' "${ts[@]}" | sort -n | awk -v l="$label" -v rpc="$rpc" '{v[NR]=$1} END {printf "flood of 100 %-22s squeue p50 %.1f ms p99 %.1f ms (n=%d); sdiag submit RPC ave %.2f ms\n", l, v[int(NR*0.5+0.5)]/1000, v[int(NR*0.99+0.5)]/1000, NR, rpc/1000}'
scancel $(squeue -h -o %i) 2>/dev/null
S
chmod +x flood.sh
cat >with.sh <<'S'
#!/usr/bin/env bash
cd "$TEST_TMP" && ./submit.sh "crius job (llama2-70b), plugin:" 20 --crius-model=llama2-70b --crius-global-batch=1024 &&
  ./submit.sh "plain job, plugin loaded:" 20 -p a100 --gres=gpu:a100:8 &&
  ./flood.sh "crius submissions:" crius && ./flood.sh "plain submissions:" plain
S
cat >without.sh <<'S'
#!/usr/bin/env bash
cd "$TEST_TMP" && ./submit.sh "plain job, no crius plugins:" 20 -p a100 --gres=gpu:a100:8
S
chmod +x with.sh without.sh
export TEST_TMP=$PWD
"$TOP/scripts/crius-lab" run --dir "$PWD/lab" --nodes a100:2x8,v100:2x8,h100:2x8,a40:2x8 --plugins "$B/plugins" \
  --plugstack "$TOP/etc/plugstack.conf.d/crius.conf" --job-submit crius --crius-conf "$PWD/c2.toml" -- ./with.sh 2>&1 | grep -v '^crius-lab: up'
"$TOP/scripts/crius-lab" run --dir "$PWD/lab" --nodes a100:2x8,v100:2x8,h100:2x8,a40:2x8 -- ./without.sh 2>&1 | grep -v '^crius-lab: up'
