#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# What job_submit/crius adds per submission (targets: a typical request <= 5 ms at p99, a 70B
# model on a cluster with 4 GPU types; the worst request we could build <= 20 ms).
#  1. in-process: parse + decide for llama2-70b (global batch 1024) on a 4-type cluster
#     (a100, v100, h100, a40; 4 nodes x 8 GPUs each), wall and thread-CPU percentiles;
#  2. sbatch wall time on the local lab (4 types x 2 nodes x 8 GPUs): a crius job and a plain
#     job with the plugin loaded, and a plain job without it (held jobs, 20 each);
#  3. floods from 4 clients at once: distinct crius requests, distinct expensive ones (the
#     cache cannot answer them: [job_submit] work_per_second bounds them), plain ones; squeue's
#     latency meanwhile (target: p99 of the expensive flood within 2x the plain one's).
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
scancel $(squeue -h -o %i) 2>/dev/null || true
S
chmod +x submit.sh
# flood.sh LABEL KIND: 4 libslurm clients at once, 50 submissions each (KIND crius: llama2-70b,
# each a different global batch, so no answer comes from job_submit's cache; expensive: the
# worst request we could build, 1024 layers and a batch with 504 divisors, each a different
# MLP width; plain: no crius options) while squeue is timed; slurmctld's own figure for the
# submit RPC from sdiag, and how many submissions job_submit answered busy or refused.
cat >flood.sh <<'S'
#!/usr/bin/env bash
label=$1 kind=$2
O=_SLURM_SPANK_OPTION_crius_crius_
SPEC=family=transformer,dtype=fp16,optimizer=adam,layers=1024,hidden=8,heads=1,kv_heads=1,ffn_hidden=8,seq_len=1,vocab=2,swiglu=false
sdiag -r >/dev/null
pids=()
for c in 1 2 3 4; do
  (for i in $(seq 50); do
     n=$((c * 1000 + i))
     case $kind in
       crius) printf '%smodel=llama2-70b\n%sglobal_batch=%d\n' "$O" "$O" $((1024 + 8 * n)) ;;
       expensive) printf '%smodel=./m.toml\n%sglobal_batch=14414400\nCRIUS_MODEL_SPEC=%s\n' "$O" "$O" "${SPEC/ffn_hidden=8/ffn_hidden=$((8 * n))}" ;;
     esac | "$B/tests/slurm/crius-hostile-submit" >>"flood-$kind.out" 2>/dev/null
   done) &
  pids+=($!)
done
ts=()
while kill -0 "${pids[@]}" 2>/dev/null; do a=$(date +%s%N); squeue -h >/dev/null; b=$(date +%s%N); ts+=($(( (b - a) / 1000 ))); sleep 0.05; done
wait "${pids[@]}"
rpc=$(sdiag | awk '/REQUEST_SUBMIT_BATCH_JOB/ {for (i = 1; i <= NF; i++) if ($i ~ /^ave_time:/) {sub("ave_time:", "", $i); print $i}}')
busy=$(grep -c 'slurmctld is busy' "flood-$kind.out"); refused=$(grep -c 'error=Resource temporarily unavailable' "flood-$kind.out")
printf '%s\n' "${ts[@]}" | sort -n | awk -v l="$label" -v rpc="$rpc" -v busy="$busy" -v refused="$refused" '{v[NR]=$1} END {printf "flood of 4x50 %-22s squeue p50 %.1f ms p99 %.1f ms (n=%d); sdiag submit RPC ave %.2f ms; %d answered busy, %d refused (EAGAIN)\n", l, v[int(NR*0.5+0.5)]/1000, v[int(NR*0.99+0.5)]/1000, NR, rpc/1000, busy, refused}'
scancel $(squeue -h -o %i) 2>/dev/null || true
S
chmod +x flood.sh
cat >with.sh <<'S'
#!/usr/bin/env bash
cd "$TEST_TMP" && ./submit.sh "crius job (llama2-70b), plugin:" 20 --crius-model=llama2-70b --crius-global-batch=1024 &&
  ./submit.sh "plain job, plugin loaded:" 20 -p a100 --gres=gpu:a100:8 &&
  { ./flood.sh "crius submissions:" crius; ./flood.sh "expensive crius ones:" expensive;
    ./flood.sh "plain submissions:" plain; }
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
