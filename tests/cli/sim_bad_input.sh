#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-sim bad input: malformed trace rows name the line, unknown model or GPU
# type name close matches, bad options exit 2; a job no Cell can run is
# reported and the run goes on (exit 0).
set -u
cluster=$TOP/etc/crius/examples/paper-testbed.toml
[ -f "$cluster" ] || { echo "skip: $cluster not there"; exit 77; }
header=job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,gpu_type
fails=0

expect() { # status pattern -- command...
  local want=$1 pat=$2; shift 3
  "$@" >out.txt 2>err.txt
  local rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qE -- "$pat" err.txt; then
    echo "FAIL: $* -> exit $rc (want $want), stderr:"; cat err.txt
    echo "  (expected /$pat/)"
    fails=$((fails + 1))
  fi
}

printf '%s\nj1,0,10,moe__690M,100,256,2,a10\nj2,5,ten,moe__690M,100,256,2,a10\n' "$header" >bad-row.csv
expect 2 '^crius-sim: .*bad-row.csv:3: column .num_iteration. must be a number from 1 to 1e12, got .ten.$' -- \
  crius-sim --trace bad-row.csv --cluster "$cluster"

printf '%s\nj1,0,10,moe__690M,100,256\n' "$header" >short-row.csv
expect 2 'short-row.csv:2: 6 fields, the header has 8' -- crius-sim --trace short-row.csv --cluster "$cluster"

printf 'job_id,submission_time\nj1,0\n' >bad-header.csv
expect 2 "bad-header.csv:1: header lacks column 'num_iteration'" -- \
  crius-sim --trace bad-header.csv --cluster "$cluster"

printf '%s\nj1,0,10,moe__690m,100,256,2,a10\n' "$header" >bad-model.csv
expect 2 "job j1: .*moe__690m.*moe__690M" -- crius-sim --trace bad-model.csv --cluster "$cluster"

printf '%s\nj1,0,10,moe__690M,100,256,2,a10\n' "$header" >one.csv
expect 2 "^crius-sim: --crius-without: unknown crius mechanism 'teleport' \(known: search, " -- \
  crius-sim --trace one.csv --cluster "$cluster" --crius-without search,teleport
# CLI11 words the range "1 to 64" (Debian 12) or "[1 - 64]" (Debian 13).
expect 2 "--search-depth: Value 0 not in range (1 to 64|\\[1 - 64\\])" -- \
  crius-sim --trace one.csv --cluster "$cluster" --search-depth 0

printf '%s\nj1,0,10,moe__690M,100,256,2,k40m\n' "$header" >bad-gpu.csv
expect 2 "job j1: unknown GPU type 'k40m'" -- crius-sim --trace bad-gpu.csv --cluster "$cluster"

expect 2 "unknown policy 'criuss'; did you mean crius" -- \
  crius-sim --trace bad-model.csv --cluster "$cluster" --policy criuss
expect 2 '^crius-sim: .*--interval' -- crius-sim --trace x.csv --cluster "$cluster" --interval 0
expect 2 'cannot open' -- crius-sim --trace missing.csv --cluster "$cluster"
expect 2 'missing-cluster.toml' -- crius-sim --trace bad-row.csv --cluster missing-cluster.toml
printf 'model,global_batch\n' >bad-table.csv
expect 2 "^crius-sim: --throughput-table: .*bad-table.csv:1: header lacks column 'gpu_type'" -- \
  crius-sim --trace bad-row.csv --cluster "$cluster" --throughput-table bad-table.csv

# A cluster of one node of 2 A10 cannot hold a 39B-parameter model anywhere:
# reported (exit 0), the other job still runs.
cat >tiny.toml <<TOML
gpus = "$TOP/etc/crius/gpus.toml"
models = "$TOP/etc/crius/models.toml"
[[partition]]
name = "a10"
gpu = "a10"
nodes = 1
gpus_per_node = 2
intra_node_bw_gbs = 31.5
inter_node_bw_gbs = 12.5
inter_node_latency_us = 10.0
TOML
printf '%s\nbig,0,10,bert__39B,100,256,2,a10\nsmall,10,10,moe__690M,1000,256,2,a10\n' "$header" >unrunnable.csv
for p in crius fcfs; do
  expect 0 "^crius-sim: $p: job big: no Cell" -- crius-sim --trace unrunnable.csv --cluster tiny.toml --policy $p
  grep -q 'jobs finished      1 of 2 (1 unrunnable)' out.txt || { echo "FAIL: $p summary:"; cat out.txt; fails=$((fails + 1)); }
done

# Values that would run without end or overflow: a clear error instead (issue 13).
printf '%s\nj1,1e20,10,moe__690M,100,256,2,a10\n' "$header" >far.csv
expect 2 "far.csv:2: column .submission_time. must be a number of seconds from 0 to 1e11, got .1e20." -- \
  crius-sim --trace far.csv --cluster "$cluster"
printf '%s\nj1,0,1e300,moe__690M,100,256,2,a10\n' "$header" >long.csv
expect 2 "long.csv:2: column .num_iteration. must be a number from 1 to 1e12, got .1e300." -- \
  crius-sim --trace long.csv --cluster "$cluster"
printf '%s\nj1,0,10,moe__690M,100,256,2,a10\n' "$header" >one.csv
expect 2 "--interval must be 1 to 86400 seconds, got 1e-300" -- crius-sim --trace one.csv --cluster "$cluster" --interval 1e-300
printf '%s\nj1,0,1e12,moe__690M,-1,256,2,a10\n' "$header" >endless.csv
# The live restart model's options: named, bounded, and only with it.
expect 2 "^crius-sim: --tick 45 must divide --interval 300$" -- \
  crius-sim --trace one.csv --cluster "$cluster" --restart-model live --tick 45
expect 2 "^crius-sim: --start-latency must be 0 to 86400 seconds, got -1$" -- \
  crius-sim --trace one.csv --cluster "$cluster" --restart-model live --start-latency -1
expect 2 "need --restart-model live" -- crius-sim --trace one.csv --cluster "$cluster" --checkpoint-grace 30
expect 2 "^crius-sim: --objective: unknown objective 'fast' \\(known: adaptive, throughput, efficiency\\)$" -- \
  crius-sim --trace one.csv --cluster "$cluster" --objective fast
expect 1 "the simulation did not end within 2000000 rounds" -- \
  timeout 60 crius-sim --trace endless.csv --cluster "$cluster" --policy fcfs --interval 86400

# --live: a replay's runs that do not read name the file and line.
printf 'job,submit_s,start_s,end_s,state,gpu,gpus\nj1,0,5,9,COMPLETED,a10,2\n' >good.runs
crius-sim --trace one.csv --cluster "$cluster" --policy none --live live=good.runs >out.txt 2>&1 &&
  grep -q 'jobs finished      1 of 1' out.txt || { echo "FAIL: a good --live file:"; cat out.txt; fails=$((fails + 1)); }
printf 'job,submit_s,start_s,end_s,state,gpu,gpus\nnobody,0,5,9,COMPLETED,a10,2\n' >stranger.runs
expect 2 "stranger.runs:2: job 'nobody' is not in the trace" -- crius-sim --trace one.csv --cluster "$cluster" --policy none --live x=stranger.runs
printf 'job,submit_s,start_s,end_s,state,gpu,gpus\nj1,0,9,5,COMPLETED,a10,2\n' >backwards.runs
expect 2 "backwards.runs:2: start_s and end_s must be numbers with start_s <= end_s" -- crius-sim --trace one.csv --cluster "$cluster" --policy none --live x=backwards.runs
printf 'job,start_s\n' >short.runs
expect 2 "short.runs:1: header lacks column 'submit_s'" -- crius-sim --trace one.csv --cluster "$cluster" --policy none --live x=short.runs
expect 2 "--live 'nofile': want NAME=FILE" -- crius-sim --trace one.csv --cluster "$cluster" --policy none --live nofile

expect 2 "^crius-sim: --policy-restart-cost must be 0 to 1e7 seconds, got -5$" -- \
  crius-sim --trace one.csv --cluster "$cluster" --policy-restart-cost -5
printf '%s,kind\nj1,0,10,moe__690M,100,256,2,a10,pinned\n' "$header" >bad-kind.csv
expect 2 "bad-kind.csv:2: column 'kind' must be movable, fixed or plain, got 'pinned'" -- \
  crius-sim --trace bad-kind.csv --cluster "$cluster"
expect 2 "^crius-replay: --mix 'mx': want up to 100 letters m \\(movable\\), f \\(fixed\\) and p \\(plain\\)$" -- \
  crius-replay --trace one.csv --cluster "$cluster" --mode crius --out replay --mix mx
[ ! -e replay ] || { echo "FAIL: crius-replay --mix mx created its folder"; fails=$((fails + 1)); }

[ "$fails" -eq 0 ] && echo ok
