#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-profile on 2 real MPI ranks: it writes a catalogue entry the estimator loads and a
# collective table a cluster file takes as a partition's calibration; --check reports the
# measured one-rank step against the estimate; crius-train predicts with the calibration (and
# says so); bad options and an unwritable output are refused with the reason.
set -u
. "$TOP/tests/mpi/lib_launch.bash"
need_mpi
unset SLURM_JOB_ID CRIUS_STAGES CRIUS_PLAN_JSON
shape="--hidden 64 --ffn 256 --heads 4 --seq 32 --layers 2"
crius-launch -n 2 -- crius-profile $shape --samples 4 --steps 2 --max-mib 1 --out cal.toml --check \
  >out.txt 2>err.txt || { cat out.txt err.txt; fail "crius-profile failed"; }
grep -q '^crius-profile: wrote cal.toml and cal.csv$' out.txt || { cat out.txt; fail "no files named"; }
grep -q 'crius-profile: \[1/3\] fp64' err.txt || { cat err.txt; fail "no progress lines"; }
grep -q 'collectives over 2 ranks' err.txt || { cat err.txt; fail "no progress line for the collectives"; }
# --check reports, for each step size fitted, the measured one-rank step and the estimate before
# and after calibration. How close they are is a timing ratio of ranks sharing cores: it is
# reported by tests/bench/train-prediction.sh, not checked here.
python3 - out.txt <<'PY' || fail "--check does not report the measured and estimated step"
import re, sys
lines = [l for l in open(sys.argv[1]) if "one-rank step" in l]
assert len(lines) == 2, lines
pat = (r"one-rank step of \d+ samples: measured ([0-9.]+) s; estimated ([0-9.]+) s before calibration "
       r"\(measured/estimated [0-9.]+\), ([0-9.]+) s after \([0-9.]+\)$")
for l in lines:
    m = re.search(pat, l)
    assert m and all(float(v) > 0 for v in m.groups()), l
PY
# The table: every op, ranks per node 2, group 2, sizes 8 B to 1 MiB.
head -n1 cal.csv | grep -qx 'op,nodes,gpus_per_node,group_size,nodes_per_group,bytes,time_s' || fail "table header"
for op in all-reduce all-gather reduce-scatter send; do
  [ "$(grep -c "^$op,1,2,2,1," cal.csv)" -ge 5 ] || { cat cal.csv; fail "no $op rows"; }
done
# The estimator loads both: the entry as a catalogue, the table as a partition's calibration.
cat >cluster.toml <<EOF
gpus = "cal.toml"
models = "$TOP/etc/crius/models.toml"
[[partition]]
name = "cpu"
gpu = "cpu"
nodes = 1
gpus_per_node = 2
intra_node_bw_gbs = 1
inter_node_bw_gbs = 1
inter_node_latency_us = 1
calibration = "cal.csv"
EOF
crius-estimate --cluster cluster.toml --model gpt3-125m --global-batch 8 --explain >est.txt 2>&1 ||
  { cat est.txt; fail "crius-estimate cannot use the calibration"; }
grep -q 'GPU constants of cpu .*GEMM efficiency 1 (calibrated)' est.txt || { cat est.txt; fail "not calibrated"; }
# crius-train predicts with it, and gives the uncalibrated estimate too.
crius-launch --dp 2 -- crius-train $shape --samples 4 --steps 2 -q --calibration cal.toml --report r.json >train.txt 2>&1 ||
  { cat train.txt; fail "crius-train --calibration failed"; }
grep -q 'calibrated by cal.toml (attention .*, measured collectives), .* s uncalibrated' train.txt ||
  { cat train.txt; fail "crius-train does not say it is calibrated"; }
grep -q 'warning' train.txt && { cat train.txt; fail "a calibration of the run's own rank count was warned about"; }
# A calibration of another rank count still predicts, with a warning naming both counts.
crius-launch -n 1 -- crius-train $shape --samples 4 --steps 1 -q --calibration cal.toml >one.txt 2>&1 ||
  { cat one.txt; fail "crius-train with a 2-rank calibration on 1 rank failed"; }
grep -q 'warning: --calibration cal.toml was measured on 1 node(s) x 2 rank(s), this run has 1 x 1' one.txt ||
  { cat one.txt; fail "no warning for a calibration of another rank count"; }
python3 - r.json <<'PY' || fail "report"
import json, sys
c = json.load(open(sys.argv[1]))["estimate"]["calibration"]
assert c["file"] == "cal.toml" and c["collectives"] is True, c
assert 0 < c["memory_efficiency"] <= 1 and c["attention_efficiency"] > 0, c
assert c["uncalibrated_iter_time_s"] > 0, c
PY
# Refusals.
crius-launch -n 1 -- crius-train $shape --samples 4 --steps 1 -q --calibration nothere.toml >bad.txt 2>&1 && fail "a missing calibration was accepted"
grep -q 'crius-train: --calibration: .*nothere.toml' bad.txt || { cat bad.txt; fail "no reason for the missing calibration"; }
crius-profile --dtype fp16 >bad.txt 2>&1; [ $? = 2 ] || fail "--dtype fp16 was not a usage error"
grep -q 'crius-profile: --dtype' bad.txt || { cat bad.txt; fail "no reason for --dtype fp16"; }
crius-profile --hidden 100 --heads 8 >bad.txt 2>&1; [ $? = 2 ] || fail "hidden not a multiple of heads was accepted"
crius-profile --device gpu --catalog nothere.toml >bad.txt 2>&1; [ $? = 2 ] || fail "a missing --catalog was accepted"
grep -q 'crius-profile: --catalog: .*nothere.toml' bad.txt || { cat bad.txt; fail "no reason for the missing --catalog"; }
crius-profile --out /nonexistent/dir/cal.toml >bad.txt 2>&1; [ $? = 1 ] || fail "an unwritable --out was accepted"
grep -q 'cannot write' bad.txt || { cat bad.txt; fail "no reason for the unwritable --out"; }
echo ok
