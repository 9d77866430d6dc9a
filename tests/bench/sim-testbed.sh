#!/usr/bin/env bash
# Every policy on the artifact's testbed trace (244 jobs) with the paper's
# testbed cluster (16 x 2 A40 + 16 x 2 A10), iterations as in the trace, then
# again with the artifact's measured iteration times where it has them.
# Paper (testbed): Crius 1.49x FCFS, 1.38x Gavel, 1.20x ElasticFlow-LS throughput.
set -eu
data=${CRIUS_ARENA_DATA:-$TOP/../shared/data/arena}
trace=$TOP/tests/data/traces/runtime_trace.csv
cluster=$TOP/etc/crius/examples/paper-testbed.toml
[ -f "$trace" ] && [ -f "$cluster" ] || { echo "skip: $trace or $cluster missing"; exit 0; }
echo "--- estimator"
crius-sim --trace "$trace" --cluster "$cluster" --policy all --timing --json testbed.json 2>&1 |
  grep -v '^crius-sim: fcfs: job' || true
[ -f "$data/measured-calibration.csv" ] || { echo "skip the measured table: $data/measured-calibration.csv missing"; exit 0; }
echo "--- measured table $data/measured-calibration.csv (missing shapes: estimator)"
crius-sim --trace "$trace" --cluster "$cluster" --policy all \
  --throughput-table "$data/measured-calibration.csv" 2>&1 | sed -n '/^policy  /,$p'
