#!/usr/bin/env bash
# criusd scores each job with its own runtime profile: of two jobs of the same model and batch in
# the same Cell, one submitted with --crius-runtime=alpa and one with the default (megatron),
# criusd --status reports for each the estimator's iteration time of its own profile.
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
echo "criusd runtime checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a40:1x2 "$conf" "$TEST_TMP/inner.sh"
