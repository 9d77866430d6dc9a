#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Speed of the scheduler core: the whole philly trace (1,938 jobs, 1,280 GPUs)
# under crius on one core (target <= 60 s), and the 99th-percentile wall time
# of one scheduling round. Reports wall and user CPU time: on a loaded machine
# the CPU time is the fairer figure (crius-sim is single-threaded).
set -eu
# Scratch files go to the runner's folder (tests/bench/run), or to a fresh one when run alone.
if [ -z "${TEST_TMP:-}" ]; then TEST_TMP=$(mktemp -d); trap 'rm -rf "$TEST_TMP"' EXIT; fi
cd "$TEST_TMP"
trace=$TOP/tests/data/traces/simulate_trace_philly.csv
cluster=$TOP/etc/crius/examples/paper-sim.toml
[ -f "$trace" ] && [ -f "$cluster" ] || { echo "skip: $trace or $cluster missing"; exit 0; }
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
for check in "" --no-check; do
  /usr/bin/time -f '%e %U' -o time.txt "${pin[@]}" crius-sim --trace "$trace" --cluster "$cluster" \
    --policy crius --iter-scale 0.2 --timing $check >out.txt
  read -r wall user <time.txt
  echo "philly, crius${check:+ $check}: ${wall} s wall, ${user} s user CPU (target <= 60 s);" \
    "$(grep 'round time' out.txt | sed 's/^ *//'); load average $(cut -d' ' -f1 /proc/loadavg)"
done
