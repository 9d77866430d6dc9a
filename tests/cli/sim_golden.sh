#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-sim on the artifact's 22-job trace with the paper's testbed: every
# policy's summary against the golden file, the --json key set, --jobs-csv rows,
# and the same output twice (determinism).
# The speeds are frozen in a throughput table (saved from the estimator with
# --save-throughput, read back with --table-only), so that calibrating the
# estimator does not change this golden; the estimator path itself is run by
# sim_outputs.sh. After a deliberate change of a policy (or to take the
# estimator's current speeds), regenerate both with CRIUS_UPDATE_GOLDEN=1. crius runs the
# paper's rule, --objective throughput, as tests/bench/sim-testbed.sh does.
set -eu
trace=$TOP/tests/data/traces/dummy_runtime_trace.csv
cluster=$TOP/etc/crius/examples/paper-testbed.toml
golden=$TOP/tests/golden/sim/dummy-testbed-all.txt
table=$TOP/tests/golden/sim/dummy-testbed-throughput.csv
[ -f "$cluster" ] || { echo "skip: $cluster not there"; exit 77; }

if [ "${CRIUS_UPDATE_GOLDEN:-}" = 1 ]; then
  crius-sim --trace "$trace" --cluster "$cluster" --policy all --objective throughput --seed 1 --oracle --save-throughput "$table" >/dev/null
  echo "updated $table"
fi
frozen=(--throughput-table "$table" --table-only)
crius-sim --trace "$trace" --cluster "$cluster" --policy all --objective throughput --seed 1 --oracle "${frozen[@]}" \
  --json out.json --jobs-csv jobs.csv >out.txt 2>err.txt
if [ "${CRIUS_UPDATE_GOLDEN:-}" = 1 ]; then cp out.txt "$golden"; echo "updated $golden"; fi
diff -u "$golden" out.txt

# Every policy finished every job, nothing went to stderr.
[ "$(grep -c 'jobs finished      22 of 22$' out.txt)" -eq 7 ]
[ ! -s err.txt ]

# --json: exactly the documented keys, one object per policy.
python3 - <<'PY'
import json
d = json.load(open("out.json"))
assert list(d) == ["policies"], d.keys()
assert sorted(d["policies"]) == sorted(["crius", "fcfs", "fcfs-strict", "gandiva", "gavel", "elasticflow-ls", "sia"])
keys = {"finished", "jct_mean_s", "jct_median_s", "jct_p99_s", "queue_mean_s", "makespan_s",
        "throughput_mean", "reconfigurations", "deadlines", "deadlines_met"}
for name, p in d["policies"].items():
    assert set(p) == keys, (name, set(p) ^ keys)
    assert p["finished"] == 22, (name, p)
    assert p["jct_median_s"] <= p["jct_p99_s"], (name, p)
PY

# --jobs-csv: a header and one row per job and policy.
[ "$(wc -l <jobs.csv)" -eq $((1 + 22 * 7)) ]
head -n1 jobs.csv | grep -q '^policy,job_id,model,batch_size,req_gpu,req_gpus,submit_s,start_s,finish_s,jct_s,state,'

# Determinism: the same run again gives the same bytes; not a terminal, so no progress bar.
crius-sim --trace "$trace" --cluster "$cluster" --policy all --objective throughput --seed 1 --oracle "${frozen[@]}" >again.txt 2>err2.txt
cmp out.txt again.txt
! grep -q $'\r' err2.txt
echo ok
