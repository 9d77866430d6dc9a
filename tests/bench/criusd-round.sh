#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# One criusd round over 1,000 crius jobs on the paper's 1,280-GPU cluster, and over 10,000 on
# 65,536 GPUs (tests/data/criusd/site-65536.toml: four types, 2,048 nodes x 8 each), decided on a
# recorded cluster state (criusd --state). Targets: 1,000 jobs <= 1 s; 10,000 jobs: a later
# round <= 1 s, the first <= 10 s, every job offered to the policy.
# The states come from the philly trace (tests/bench/criusd-state.py): its jobs (repeated past
# its 1,938), packed onto their requested GPU type until the cluster is ~90% full (running), the
# rest pending.
set -euo pipefail
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
snap=${TEST_TMP:-/tmp}/criusd-state.json
python3 "$TOP/tests/bench/criusd-state.py" "$TOP/tests/data/traces/simulate_trace_philly.csv" "$snap" 1000 \
  a100:80x4,v100:20x16,a40:160x2,a10:160x2
# A fresh criusd's first round computes every estimate (cold); a running criusd keeps them
# between rounds (warm). Five processes, each deciding three rounds.
cold=() warm=()
for i in 1 2 3 4 5; do
  out=$(criusd --config "$TOP/etc/crius/examples/paper-sim.toml" --state "$snap" --repeat 3 --json 2>"$snap.err")
  cold+=("$(python3 -c 'import json,sys; print(json.load(sys.stdin)["decide_ms"])' <<<"$out")")
  warm+=("$(sed -n 's/^criusd: round 3 decided in \([0-9.]*\) ms$/\1/p' "$snap.err")")
  actions=$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["actions"]))' <<<"$out")
  considered=$(python3 -c 'import json,sys; print(sum(j["considered"] == "policy" for j in json.load(sys.stdin)["jobs"]))' <<<"$out")
  [ "$considered" -gt 900 ] || { echo "only $considered of 1000 jobs reached the policy: the state is not what a live criusd sees" >&2; exit 1; }
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]}'; }
echo "criusd round, 1,000 jobs on 1,280 GPUs ($considered offered to the policy, $actions actions): first round of a fresh criusd median $(median "${cold[@]}") ms," \
     "later rounds median $(median "${warm[@]}") ms over ${#cold[@]} runs; target <= 1000 ms"

big=${TEST_TMP:-/tmp}/criusd-state-10k.json
python3 "$TOP/tests/bench/criusd-state.py" "$TOP/tests/data/traces/simulate_trace_philly.csv" "$big" 10000 \
  a100:2048x8,v100:2048x8,a40:2048x8,a10:2048x8
cold=() warm=()
for i in 1 2 3; do
  out=$(/usr/bin/time -f '%M' -o "$big.mem" criusd --config "$TOP/tests/data/criusd/site-65536.toml" --state "$big" --repeat 3 --json 2>"$big.err")
  cold+=("$(python3 -c 'import json,sys; print(json.load(sys.stdin)["decide_ms"])' <<<"$out")")
  warm+=("$(sed -n 's/^criusd: round 3 decided in \([0-9.]*\) ms$/\1/p' "$big.err")")
  considered=$(python3 -c 'import json,sys; print(sum(j["considered"] == "policy" for j in json.load(sys.stdin)["jobs"]))' <<<"$out")
  actions=$(python3 -c 'import json,sys; print(len(json.load(sys.stdin)["actions"]))' <<<"$out")
done
echo "criusd round, 10,000 jobs on 65,536 GPUs ($considered offered to the policy, $actions actions): first round of a fresh criusd median $(median "${cold[@]}") ms," \
     "later rounds median $(median "${warm[@]}") ms over ${#cold[@]} runs, max RSS $(( $(cat "$big.mem") / 1024 )) MB; targets <= 10000 ms and <= 1000 ms"
