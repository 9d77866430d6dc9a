#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-estimate: table, --explain and --json outputs against golden files
# (tests/golden/estimate/). Regenerate after an intended model change with
#   UPDATE_GOLDEN=1 B=build tests/run tests/cli/estimate_golden.sh
set -u
C=$TOP/tests/data/estimator/paper-sim.toml
G=$TOP/tests/golden/estimate
command -v crius-estimate >/dev/null || { echo "crius-estimate not built"; exit 1; }
fail=0
check() {  # name, expected exit status, args...
  local name=$1 want=$2; shift 2
  crius-estimate --cluster "$C" "$@" >"$name.out" 2>"$name.err"
  local rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL $name: exit $rc, expected $want"; cat "$name.err"; fail=1; return
  fi
  if [ -n "${UPDATE_GOLDEN:-}" ]; then cp "$name.out" "$G/$name.out"; return; fi
  if ! diff -u "$G/$name.out" "$name.out"; then echo "FAIL $name: output differs from golden"; fail=1; fi
}
check table-bert-1.3b 0 --model bert__1.3B --global-batch 128 --top 8
check explain-gpt3-6.7b 0 --model gpt3-6.7b --global-batch 512 --gpu a100 --nodes 4 --gpus-per-node 4 --explain --top 3
check alpa-moe 0 --model moe__10B --global-batch 512 --runtime alpa --gpu v100 --nodes 1 --gpus-per-node 8
check json-alpa 0 --model bert__760M --global-batch 128 --runtime alpa --gpu a100 --nodes 1 --gpus-per-node 2 --json
check pinned 0 --model gpt3-2.7b --global-batch 256 --gpu a40 --nodes 4 --gpus-per-node 2 --tp 2 --recompute full \
  --schedule 1f1b --zero 0 --micro-batch-size 2 --sequence-parallel off
check shape-2x2 0 --model moe__2.4B --global-batch 256 --runtime alpa --gpu a100 --nodes 2 --gpus-per-node 2
check wide-resnet 0 --model wide_resnet__2B --global-batch 256 --gpu v100 --nodes 1 --gpus-per-node 4 --runtime alpa

# JSON is valid and structured as documented.
crius-estimate --cluster "$C" --model gpt3-1.3b --global-batch 256 --gpu a40 --nodes 2 --gpus-per-node 2 --json >j.json || fail=1
python3 - j.json <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
cells = d["cells"]
assert cells, "no cells"
feas = [c for c in cells if c["feasible"]]
assert feas and cells[0]["feasible"], "best first"
t = [c["iter_time_s"] for c in feas]
assert t == sorted(t), "feasible cells sorted by time"
for c in feas:
    for k in ("gpu", "nodes", "gpus_per_node", "stages", "iter_time_s", "samples_per_s", "memory_gib", "plan", "breakdown"):
        assert k in c, k
    p = c["plan"]
    assert len(p["stages"]) == c["stages"]
    assert p["stages"][0]["layers"][0] == 0 and p["stages"][-1]["layers"][1] == 24
    for k in ("compute", "tp_comm", "dp_comm", "pp_comm", "bubble", "optimizer"):
        assert k in c["breakdown"], k
    assert abs(sum(c["breakdown"].values()) - c["iter_time_s"]) < 1e-9 * c["iter_time_s"]
for c in cells:
    if not c["feasible"]:
        assert c["why"], "infeasible without why"
PY

# An H100 partition with the shipped catalogue: its own constants; an L40S partition:
# uncalibrated, the datasheet rule names the calibrated types it took (GDDR6, the nearest generation).
cat >h100.toml <<EOF
gpus = "$TOP/etc/crius/gpus.toml"
models = "$TOP/etc/crius/models.toml"
[[partition]]
name = "h100"
gpu = "h100"
nodes = 2
gpus_per_node = 8
intra_node_bw_gbs = 450
inter_node_bw_gbs = 50
inter_node_latency_us = 5
EOF
crius-estimate --cluster h100.toml --model gpt3-1.3b --global-batch 256 --explain >h100.out || fail=1
grep -q "GPU constants of h100 .*tensor-core GEMM efficiency 0.8 (calibrated), memory efficiency 0.88 (calibrated)" h100.out ||
  { cat h100.out; echo "FAIL h100: not its own constants"; fail=1; }
sed -i 's/gpu = "h100"/gpu = "l40s"/' h100.toml
crius-estimate --cluster h100.toml --model gpt3-1.3b --global-batch 256 --explain >l40s.out || fail=1
grep -q "GPU constants of l40s .*tensor-core GEMM efficiency 0.73 (uncalibrated: datasheet rule, the mean of a10, a40), memory efficiency 0.7 (uncalibrated: datasheet rule, the mean of a10, a40)" l40s.out ||
  { cat l40s.out; echo "FAIL l40s: not marked uncalibrated with the datasheet rule"; fail=1; }
# megatron-core: its switches said, a fused-attention plan faster than the 2022 profile's at
# the same Cell, and a switch turned off in the catalogue said off.
crius-estimate --cluster "$TOP/tests/data/estimator/h100-dgx.toml" --model mlm-gpt-1.7b --global-batch 192 --nodes 6 \
  --gpus-per-node 8 --stages 1 --tp 1 --runtime megatron-core --explain >core.out || fail=1
grep -q "runtime profile megatron-core .*on: fused_attention, overlap_grad_reduce, overlap_param_gather, tp_comm_overlap, overlap_p2p_comm; off: master_param_remainders" core.out ||
  { cat core.out; echo "FAIL megatron-core: switches not listed"; fail=1; }
crius-estimate --cluster "$TOP/tests/data/estimator/h100-dgx.toml" --model mlm-gpt-1.7b --global-batch 192 --nodes 6 \
  --gpus-per-node 8 --stages 1 --tp 1 --runtime megatron --json >old.json || fail=1
crius-estimate --cluster "$TOP/tests/data/estimator/h100-dgx.toml" --model mlm-gpt-1.7b --global-batch 192 --nodes 6 \
  --gpus-per-node 8 --stages 1 --tp 1 --runtime megatron-core --json >core.json || fail=1
python3 -c 'import json,sys; o=json.load(open("old.json"))["cells"][0]; c=json.load(open("core.json"))["cells"][0]; sys.exit(0 if c["plan"]["runtime"] == "megatron-core" and c["iter_time_s"] < o["iter_time_s"] else 1)' ||
  { echo "FAIL megatron-core: not faster than megatron on a 4k-sequence model, or not recorded in the plan"; fail=1; }
grep -q "runtime profile megatron (.*on: none" "$G/explain-gpt3-6.7b.out" ||
  { echo "FAIL: the megatron explain golden does not list its switches"; fail=1; }
grep -q "GPU constants of a100 .*tensor-core GEMM efficiency 0.76 (calibrated)" "$G/explain-gpt3-6.7b.out" ||
  { echo "FAIL: the a100 explain golden does not say calibrated"; fail=1; }
# The runtime profile a job gets when it names none is its framework's (crius(7), FRAMEWORKS).
for fw_rt in "crius-train megatron" "megatron megatron-core" "megatron:0.8 megatron-core"; do
  set -- $fw_rt
  crius-estimate --cluster "$TOP/tests/data/estimator/h100-dgx.toml" --model mlm-gpt-1.7b --global-batch 192 --nodes 2 \
    --gpus-per-node 8 --framework "$1" --json >default.json || fail=1
  python3 -c 'import json,sys; sys.exit(0 if json.load(open("default.json"))["cells"][0]["plan"]["runtime"] == sys.argv[1] else 1)' "$2" ||
    { echo "FAIL: framework $1 without --runtime did not get the $2 profile"; fail=1; }
done
crius-estimate --cluster "$TOP/tests/data/estimator/h100-dgx.toml" --model mlm-gpt-1.7b --global-batch 192 --nodes 2 \
  --gpus-per-node 8 --framework megatron --runtime megatron --json >asked.json || fail=1
grep -q '"runtime": "megatron"' asked.json || { echo "FAIL: --runtime megatron with framework megatron was not kept"; fail=1; }
exit $fail
