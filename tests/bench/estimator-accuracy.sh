#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# Accuracy of crius's best-plan estimate (runtime profile alpa) against the
# iteration times measured by the Crius/Arena authors on A100/V100/A40/A10
# (tests/data/estimator/measured-calibration.csv). One constant per GPU type
# (gemm_efficiency) is fitted; the error is reported leave-one-out (each point
# predicted with the constant fitted on the other points of its GPU type),
# plus whether every OOM point is predicted infeasible; then the artifact's other measured
# runs (tests/data/estimator/measured-heldout.csv), held out, with the constants fitted on all
# of those. Then the published Megatron-LM runs of
# tests/data/estimator/megatron-published.csv (runtime profile megatron, the papers' plans
# pinned, the shipped constants: nothing is fitted to them), and the published H100 runs of
# tests/data/estimator/h100-published.csv (runtime profile megatron-core): the
# profile's runtime_overhead is fitted on the split marked fit; the rest is held out. Last, the
# memory per GPU of pure data parallelism against the artifact's measured peak
# (tests/data/estimator/dp-memory.csv), optimizer states replicated and sharded, a MoE model's
# experts on every rank (as the artifact ran it) and, for comparison, sharded. The published
# fully sharded and context-parallel runs are held out too.
# Its output is docs/estimator-figures.txt, which docs/results.md quotes; tests/cli/results_figures.sh
# fails when the two drift apart (regenerate with `tests/bench/estimator-accuracy.sh >docs/estimator-figures.txt`).
set -eu
: "${TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${B:=$TOP/build}"
case $B in /*) ;; *) B=$PWD/$B ;; esac
bench=$B/tests/bench/estimator-bench
cd "$TOP"
[ -x "$bench" ] || { echo "estimator-bench not built (make B=... bench)"; exit 1; }
"$bench" accuracy "tests/data/estimator/arena-hw.toml" "tests/data/estimator/measured-calibration.csv" \
  "tests/data/estimator/measured-heldout.csv"
echo
echo "published Megatron-LM runs (estimate / published - 1):"
"$bench" published "tests/data/estimator/megatron-a100.toml" "tests/data/estimator/megatron-published.csv"
echo
echo "published H100 runs, megatron-core (estimate / published - 1):"
"$bench" published "tests/data/estimator/h100-dgx.toml" "tests/data/estimator/h100-published.csv"
echo
# Published fully sharded runs (FSDP, ZeRO-3; tests/data/estimator/fsdp-published-*.csv), held out:
# with the megatron-core profile each GPU type's default, and on A100 also with the megatron
# profile its constants were fitted under.
echo "published fully sharded (FSDP, ZeRO-3) runs, held out, megatron-core (estimate / published - 1):"
echo "H100:"
"$bench" published "tests/data/estimator/h100-dgx.toml" "tests/data/estimator/fsdp-published-h100.csv"
echo "A100 80GB:"
"$bench" published "tests/data/estimator/megatron-a100.toml" "tests/data/estimator/fsdp-published-a100.csv"
echo "A100 80GB, profile megatron with the runs' fused attention and overlapped DP communication:"
a100_megatron=$(mktemp)
sed 's/,megatron-core,held-out,,/,megatron,held-out,fused_attention=on;overlap_grad_reduce=on;overlap_param_gather=on,/' \
  "tests/data/estimator/fsdp-published-a100.csv" >"$a100_megatron"
"$bench" published "tests/data/estimator/megatron-a100.toml" "$a100_megatron" | grep -E '^split '
rm -f "$a100_megatron"
echo
# Published runs with context parallelism (tests/data/estimator/cp-published-h100.csv: NVIDIA's
# Llama 3.1 recipes, CP 2), held out: megatron-core, as the Megatron-Core jobs they were.
echo "published context-parallel (CP 2) runs, held out, megatron-core (estimate / published - 1):"
"$bench" published "tests/data/estimator/h100-dgx.toml" "tests/data/estimator/cp-published-h100.csv"
echo
# The same runs as the Megatron-LM jobs they were (crius(7), FRAMEWORKS): Megatron-LM of 2021-22
# and Megatron-Core 0.8 split the layers evenly; the NeMo releases of the H100 runs are Megatron-Core
# 0.8 to 0.13, so both ends of that range.
for fw in megatron:0.8 megatron:0.13; do
  echo "published Megatron-LM runs as $fw jobs (estimate / published - 1):"
  "$bench" published "tests/data/estimator/megatron-a100.toml" "tests/data/estimator/megatron-published.csv" "$fw" |
    grep -E '^(korthikanti22|narayanan21|split) '
  echo "published H100 runs as $fw jobs:"
  "$bench" published "tests/data/estimator/h100-dgx.toml" "tests/data/estimator/h100-published.csv" "$fw" |
    grep -E '^split |infeasible'
done
echo
echo "memory per GPU of pure data parallelism, alpa, against the artifact's measured peak (estimate / measured - 1):"
"$bench" memory "tests/data/estimator/arena-hw.toml" "tests/data/estimator/dp-memory.csv"
echo
echo "the same, a MoE model's experts sharded over the ranks (expert parallelism, what the alpa search plans):"
"$bench" memory "tests/data/estimator/arena-hw.toml" "tests/data/estimator/dp-memory.csv" experts-sharded |
  grep '^zero [01] moe '
