#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-profile's GPU path: cuBLAS GEMMs at transformer shapes, the device's copy bandwidth and
# NCCL collectives, written as a catalogue entry the estimator loads (efficiencies fitted
# against the catalogue's datasheet figures where the device is a known type).
# Skips (77) without a GPU or without a CUDA build.
set -u
fail() { echo "FAIL: $*"; exit 1; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "${ngpu:-0}" -ge 1 ] || { echo "SKIP: no GPU (nvidia-smi -L lists none)"; exit 77; }
grep -q '^HAVE_CUDA *= *1' "$TOP/config.mk" || { echo "SKIP: built without CUDA"; exit 77; }
n=$((ngpu >= 2 ? 2 : 1))
crius-launch -n $n -- crius-profile --device gpu --gpu-hidden 1024,4096 --tokens 4096 --max-mib 64 \
  --catalog "$TOP/etc/crius/gpus.toml" --out gpu.toml >out.txt 2>err.txt || { cat out.txt err.txt; fail "crius-profile --device gpu"; }
cat gpu.toml
grep -q '^crius-profile: wrote gpu.toml' out.txt || fail "no file named"
python3 - gpu.toml <<'PY' || fail "entry"
import sys, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))["gpu"]
assert len(d) == 1, d
(e,) = d.values()
for k in ("gemm_efficiency", "fp32_efficiency", "memory_efficiency"):
    assert 0 < e[k] <= 1, (k, e)
assert e["tflops"]["fp16"] > 0 and e["memory_bw_gbs"] > 0, e
PY
id=$(sed -n 's/^\[gpu\.\(.*\)\]$/\1/p' gpu.toml)
cat >cluster.toml <<EOT
gpus = "gpu.toml"
models = "$TOP/etc/crius/models.toml"
[[partition]]
name = "p"
gpu = "$id"
nodes = 1
gpus_per_node = $n
intra_node_bw_gbs = 100
inter_node_bw_gbs = 10
inter_node_latency_us = 5
EOT
[ -f gpu.csv ] && echo 'calibration = "gpu.csv"' >>cluster.toml
crius-estimate --cluster cluster.toml --model gpt3-1.3b --global-batch 64 --explain >est.txt 2>&1 || { cat est.txt; fail "the estimator cannot use the entry"; }
grep -q "GPU constants of $id .*(calibrated)" est.txt || { cat est.txt; fail "not calibrated"; }
echo ok
