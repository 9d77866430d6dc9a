#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-replay end to end on a real cluster with accounting (slurmdbd + MariaDB): the first 5
# jobs of the testbed trace, both ways, on a40:4x2 + a10:4x2, one trace hour per 30 wall
# seconds. Slurm alone: each job asks for its trace GPU type and count. crius: job_submit
# picks the Cells, criusd runs. No timing is asserted; what each run did is checked in sacct.
# The Slurm-alone run's sacct export is then imported (crius-import-sacct) and simulated.
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
plugin_preflight
command -v mpirun >/dev/null || { echo "mpirun not installed"; exit 77; }
for c in mariadbd slurmdbd sacct; do command -v $c >/dev/null || { echo "$c not installed (scripts/install-deps)"; exit 77; }; done

conf=$TEST_TMP/crius.toml
{
  echo "gpus = \"$TOP/etc/crius/gpus.toml\""
  echo "models = \"$TOP/etc/crius/models.toml\""
  for t in a40 a10; do
    printf '[[partition]]\nname = "%s"\ngpu = "%s"\nnodes = 4\ngpus_per_node = 2\nintra_node_bw_gbs = 31.5\n' $t $t
    printf 'inter_node_bw_gbs = 12.5\ninter_node_latency_us = 10.0\ncalibration = "%s"\n' "$TOP/etc/crius/calibration/nccl-$t.csv"
  done
  printf '[criusd]\ninterval_s = 3\ncheckpoint_grace_s = 2\nmin_runtime_s = 5\nmax_moves_per_job_per_hour = 16\n'
  printf 'max_moves_per_user_per_hour = 1000\n'
} >"$conf"

cat >"$TEST_TMP/inner.sh" <<'INNER'
#!/usr/bin/env bash
set -u
. "$TOP/tests/slurm/plugin_lib.bash"
cd "$TEST_TMP"
export OMPI_MCA_btl=self,tcp OMPI_MCA_mpi_yield_when_idle=1
# nodes that share one host talk over loopback; nodes that are hosts over their own network
[ "${CRIUS_LAB_HOSTS:-0}" = 1 ] || export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
trace=$TOP/tests/data/traces/runtime_trace.csv
# Not this lab's SLURM_CONF (as on a site's cluster): crius mode starts no criusd there.
CRIUS_LAB_DIR=/nonexistent crius-replay --trace "$trace" --cluster "$CRIUS_CONF" --mode crius --jobs 1 \
  --out "$TEST_TMP/refused" >refused.out 2>&1 && fail "crius-replay started criusd on a cluster that is not a crius-lab one"
grep -q "is not a crius-lab cluster: .*give --no-criusd" refused.out || { cat refused.out; fail "no reason for the refusal"; }
[ ! -e "$TEST_TMP/refused" ] || fail "the refused replay created its folder"
for mode in slurm crius; do
  # crius: a mixed population, movable, fixed (no --crius-movable), plain Slurm job, ...
  crius-replay --trace "$trace" --cluster "$CRIUS_CONF" --mode $mode --jobs 5 --time-scale 120 --mix mfp \
    --out "$TEST_TMP/$mode" --timeout 400 >"$mode.out" 2>"$mode.err" ||
    { cat "$mode.err" "$mode.out" "$TEST_TMP/$mode/logs/criusd.log" 2>/dev/null; fail "crius-replay --mode $mode"; }
  cat "$mode.out"
  [ "$(jq ".policies[\"$mode-live\"].finished" "$mode/metrics.json")" = 5 ] || fail "$mode: not 5 jobs finished"
  [ "$(($(wc -l <"$mode/submitted.csv") - 1))" = 5 ] || fail "$mode: not 5 jobs submitted"
  [ -s "$mode/plot/jct-cdf.png" ] || fail "$mode: no plot"
done
# Slurm alone: every job got exactly its trace GPU type and count.
tail -n +2 slurm/jobs.csv | while IFS=, read -r name _ _ _ _ _ gpu gpus _; do
  grep -q "^$name,.*,COMPLETED,$gpu,$gpus\$" slurm/runs.csv || fail "slurm alone: job $name did not run on $gpus $gpu: $(grep "^$name," slurm/runs.csv)"
done
# The kinds of --mix, in trace.csv (which crius-sim reads) and jobs.csv.
[ "$(awk -F, 'NR > 1 { printf "%s ", $NF }' crius/trace.csv)" = "movable fixed plain movable fixed " ] ||
  { cat crius/trace.csv; fail "crius: trace.csv lacks the kinds of --mix mfp"; }
# crius: every crius job has a crius record (--crius-movable as its kind says), ran the emulated
# trainer to its last iteration at the estimate of its Cell, and its iteration count is the
# trace's; the plain job has none and ran on its trace GPU type and count.
tail -n +2 crius/submitted.csv | while IFS=, read -r name id _; do
  rec=$(job_field "$id" AdminComment)
  kind=$(awk -F, -v n="$name" '$1 == n { print $13 }' crius/jobs.csv)
  if [ "$kind" = plain ]; then
    [ -z "$rec" ] || fail "crius: plain job $id has a crius record: $rec"
    gpu=$(awk -F, -v n="$name" '$1 == n { print $7 "," $8 }' crius/jobs.csv)
    grep -q "^$name,.*,COMPLETED,$gpu\$" crius/runs.csv || fail "crius: plain job $name did not run on its $gpu GPUs"
    continue
  fi
  [ "$(jq -r '.request.movable // false' <<<"$rec")" = "$([ "$kind" = movable ] && echo true || echo false)" ] ||
    fail "crius: job $id ($kind) has the wrong --crius-movable: $rec"
  [ "$(jq -r .request.model <<<"$rec")" = "$(awk -F, -v n="$name" '$1 == n { print $3 }' crius/jobs.csv)" ] ||
    fail "crius: job $id has no record of its model: $rec"
  iters=$(jq -r .request.iters <<<"$rec")
  grep -q "emulated $iters iterations of" "crius/logs/$id.out" || { cat "crius/logs/$id.out"; fail "crius: job $id did not run its $iters iterations"; }
done
grep -q "criusd" crius/logs/criusd.log 2>/dev/null || [ -f crius/logs/criusd.log ] || fail "criusd did not run"
# Both summarised together, as the benchmark does.
crius-sim --trace crius/trace.csv --cluster "$CRIUS_CONF" --policy crius --interval 300 --oracle \
  --live slurm-live=slurm/runs.csv --live crius-live=crius/runs.csv --json both.json | tail -n 8
[ "$(jq '.policies | length' both.json)" = 3 ] || fail "the comparison lacks a run"
# A site's own history: the Slurm-alone run, exported by sacct, imported as a trace (each job
# mapped by its name to its model), and simulated.
ids=$(tail -n +2 slurm/submitted.csv | cut -d, -f2 | paste -sd,)
sacct -a -X -P -o JobIDRaw,JobName,Account,User,Partition,Submit,Elapsed,Timelimit,AllocTRES,State,Comment \
  -j "$ids" >history.txt || fail "sacct export"
tail -n +2 slurm/jobs.csv | while IFS=, read -r name _ model batch _; do
  printf '[[rule]]\njob_name = "%s"\nmodel = "%s"\nglobal_batch = %s\n' "$name" "$model" "$batch"
done >map.toml
crius-import-sacct --sacct history.txt --map map.toml --cluster "$CRIUS_CONF" --out imported.csv 2>import.err ||
  { cat import.err history.txt; fail "crius-import-sacct"; }
cat import.err
grep -q "^crius-import-sacct: 5 jobs imported" import.err || fail "not 5 jobs imported"
tail -n +2 slurm/submitted.csv | while IFS=, read -r name id _; do
  want=$(awk -F, -v n="$name" '$1 == n { print $3 "," $4 "," $8 "," $7 }' slurm/jobs.csv)
  got=$(awk -F, -v i="$id" '$1 == i { print $4 "," $6 "," $7 "," $8 }' imported.csv)
  [ "$got" = "$want" ] || fail "job $id imported as '$got', ran as '$want' (model,batch,gpus,type)"
done
crius-sim --trace imported.csv --cluster "$CRIUS_CONF" --policy crius --json imported.json >/dev/null ||
  fail "crius-sim on the imported trace"
[ "$(jq '.policies.crius.finished' imported.json)" = 5 ] || fail "crius-sim did not finish the 5 imported jobs"
echo "live replay checks passed"
INNER
chmod +x "$TEST_TMP/inner.sh"
plugin_lab_run a40:4x2,a10:4x2 "$conf" "$TEST_TMP/inner.sh" --accounting
