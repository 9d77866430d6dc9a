#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-sim at a large site's scale (issue 30): 50,000 jobs (philly's, lap after lap, arrivals
# compressed to the same load per GPU: tests/bench/sim-trace.py) on 65,536 GPUs
# (tests/data/criusd/site-65536.toml) under crius. Target: <= 10 minutes, <= 4 GiB.
# SIM_SCALE_JOBS sets the job count (default 50000); the run stops at 30 minutes.
set -eu
: "${TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${B:=$TOP/build}"
n=${SIM_SCALE_JOBS:-50000}
python3 "$TOP/tests/bench/sim-trace.py" "$TOP/tests/data/traces/simulate_trace_philly.csv" trace.csv "$n" 65536
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
rc=0
/usr/bin/time -f '%e %M' -o time.txt timeout 1800 "$B/bin/crius-sim" --trace trace.csv \
  --cluster "$TOP/tests/data/criusd/site-65536.toml" --policy crius >sim.out 2>sim.err || rc=$?
read -r wall mem <time.txt || true
if [ "$rc" = 124 ]; then
  echo "crius-sim, $n jobs on 65,536 GPUs under crius: not done in 1800 s (max RSS $((mem / 1024)) MB); target <= 600 s, <= 4096 MB"
  exit 0
fi
[ "$rc" = 0 ] || { echo "crius-sim failed ($rc):"; tail -5 sim.err; exit 1; }
grep -E 'JCT mean|makespan|reconfigurations' sim.out || true
echo "crius-sim, $n jobs on 65,536 GPUs under crius: ${wall} s wall, max RSS $((mem / 1024)) MB; target <= 600 s, <= 4096 MB"
