#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# crius-estimate: every bad input is refused with exit 2 (input/usage) or 1
# (no Cell can hold the request), a message naming the file:line:col, key or
# option, close matches for unknown names, and never a crash.
set -u
D=$TOP/tests/data/estimator
C=$D/paper-sim.toml
fail=0
expect() {  # exit-status, message-substring, args...
  local want=$1 msg=$2; shift 2
  crius-estimate "$@" >out.txt 2>err.txt
  local rc=$?
  if [ "$rc" != "$want" ]; then echo "FAIL: crius-estimate $*: exit $rc, expected $want"; cat err.txt; fail=1; return; fi
  if ! grep -qF -- "$msg" err.txt; then echo "FAIL: crius-estimate $*: stderr lacks '$msg':"; cat err.txt; fail=1; return; fi
  if ! grep -q '^crius-estimate: ' err.txt; then echo "FAIL: message does not start with the program name"; cat err.txt; fail=1; fi
}
M=(--model gpt3-1.3b --global-batch 256)

# Usage errors.
expect 2 "--model is required" --cluster "$C" --global-batch 8
expect 2 "--global-batch is required" --cluster "$C" --model gpt3-1.3b
expect 2 "--bogus" --cluster "$C" "${M[@]}" --bogus
expect 2 "--global-batch must be > 0 (got -5)" --cluster "$C" --model gpt3-1.3b --global-batch -5
expect 2 "--global-batch must be > 0 (got 0)" --cluster "$C" --model gpt3-1.3b --global-batch 0
expect 2 "--nodes" --cluster "$C" "${M[@]}" --gpu a100 --nodes 1000000000000 --gpus-per-node 4
expect 2 "--nodes must be >= 1 (got 0)" --cluster "$C" "${M[@]}" --gpu a100 --nodes 0
expect 2 "--runtime: unknown runtime 'deepspeed' (expected megatron, megatron-core or alpa)" --cluster "$C" "${M[@]}" --runtime deepspeed
expect 2 "--framework: 'megatron:0.7': Megatron-Core releases before 0.8 are not known to crius" --cluster "$C" "${M[@]}" --framework megatron:0.7
expect 2 "--framework: 'deepspeed' is not a framework (expected crius-train, megatron, megatron:MAJOR.MINOR (a Megatron-Core release from 0.8 on), torchtitan or torchtitan:MAJOR.MINOR (from 0.1))" --cluster "$C" "${M[@]}" --framework deepspeed
expect 2 "--framework: 'torchtitan:0.0': torchtitan has no release before 0.1" --cluster "$C" "${M[@]}" --framework torchtitan:0.0
expect 2 "framework torchtitan:0.2: torchtitan 0.2 builds only its Llama 3 flavors 8B, 70B and 405B" --cluster "$C" "${M[@]}" --framework torchtitan
expect 2 "framework torchtitan:0.1: torchtitan 0.1: the alpa runtime profile models Alpa's runtime" --cluster "$TOP/etc/crius/examples/dgx-h100.toml" --model llama3-8b --global-batch 64 --framework torchtitan:0.1 --runtime alpa
expect 2 "framework megatron:0.19: Megatron-LM (Megatron-Core 0.19) trains transformers; model 'wide_resnet__1B' is a wide_resnet" --cluster "$C" --model wide_resnet__1B --global-batch 256 --framework megatron
expect 2 "does not run the GPipe schedule the alpa runtime profile plans" --cluster "$C" "${M[@]}" --runtime alpa --framework megatron:0.8
expect 2 "has no Adafactor" --cluster "$C" --model moe__1.3B --global-batch 256 --framework megatron:0.13
expect 1 "framework megatron:0.8 needs the 24 layers split evenly over the stages; 5 stages do not divide them" --cluster "$C" "${M[@]}" --framework megatron:0.8 --gpu a100 --nodes 5 --gpus-per-node 4 --stages 5
expect 2 "--schedule: bad schedule 'interleaved:1'" --cluster "$C" "${M[@]}" --schedule interleaved:1
expect 2 "--schedule: unknown schedule 'pipedream'" --cluster "$C" "${M[@]}" --schedule pipedream
expect 2 "--recompute: unknown recompute 'some'" --cluster "$C" "${M[@]}" --recompute some
expect 2 "--sequence-parallel: expected on or off, got 'yes'" --cluster "$C" "${M[@]}" --sequence-parallel yes
expect 2 "--zero must be 0, 1, 2 or 3 (got 4)" --cluster "$C" "${M[@]}" --zero 4
expect 2 "--zero 3: crius-train reduces whole gradients into whole parameters (ZeRO-0 or 1)" --cluster "$C" "${M[@]}" --zero 3
expect 2 "--zero 2: Megatron-LM (Megatron-Core 0.11) shards gradients and parameters (ZeRO-2) with Megatron-FSDP, which comes with 0.12" \
  --cluster "$C" "${M[@]}" --zero 2 --framework megatron:0.11
expect 2 "--expert-parallel: expected on or off, got 'no'" --cluster "$C" "${M[@]}" --expert-parallel no
expect 2 "--expert-parallel off: model 'gpt3-1.3b' has no experts" --cluster "$C" "${M[@]}" --expert-parallel off
expect 2 "--tp must be in [1, 64] (got 0)" --cluster "$C" "${M[@]}" --tp 0
# Batch not divisible.
expect 2 "--micro-batches 7 does not divide --global-batch 256" --cluster "$C" "${M[@]}" --micro-batches 7
expect 2 "--dp 3 does not divide --global-batch 256" --cluster "$C" "${M[@]}" --dp 3
expect 2 "--global-batch 100 is not divisible by the 16 micro-batches of --runtime alpa" --cluster "$C" \
  --model gpt3-1.3b --global-batch 100 --runtime alpa
expect 2 "--schedule 1f1b is not available with --runtime alpa" --cluster "$C" "${M[@]}" --runtime alpa --schedule 1f1b
expect 2 "--schedule gpipe is not available with --runtime megatron" --cluster "$C" "${M[@]}" --schedule gpipe

# Unknown names, with close matches.
expect 2 "--model: unknown model 'bert_1.3B' in $D/models.toml (close matches: bert__1.3B" --cluster "$C" \
  --model bert_1.3B --global-batch 128
expect 2 "--gpu: unknown GPU type 'a1000' in $TOP/etc/crius/gpus.toml (close matches: a100" --cluster "$C" "${M[@]}" --gpu a1000
expect 2 "--gpu: unknown GPU type 'k40m'" --cluster "$C" "${M[@]}" --gpu k40m
expect 2 "--partition: no partition 'gpu' in $C (partitions: a100, v100, a40, a10)" --cluster "$C" "${M[@]}" --partition gpu
expect 1 "--gpu: no partition of $C has GPU type 'h100'" --cluster "$C" "${M[@]}" --gpu h100

# Bad files.
expect 2 "/nonexistent/crius.toml: cannot open file" --cluster /nonexistent/crius.toml "${M[@]}"
cp "$TOP/etc/crius/gpus.toml" "$D/models.toml" .
printf '[[partition]]\nname = "p"\ngpu = "a100"\nnodes = 2\ngpus_per_node = 4\nintra_node_bw_gbs = 300\ninter_node_bw_gbs = [25\n' >broken.toml
expect 2 "broken.toml:7:" --cluster broken.toml "${M[@]}"
printf '[[partition]]\nname = "p"\ngpu = "a100"\nnodes = 1000000000000\ngpus_per_node = 4\nintra_node_bw_gbs = 300\ninter_node_bw_gbs = 25\ninter_node_latency_us = 5\n' >huge.toml
expect 2 "huge.toml:4:9: key 'nodes' in [[partition]] 'p' = 1000000000000 is out of range [1, 65536]" --cluster huge.toml "${M[@]}"
printf '[[partition]]\nname = "p"\ngpu = "a100"\nnodes = 2\ngpus_per_node = 4\nintra_node_bw_gbs = -300\ninter_node_bw_gbs = 25\ninter_node_latency_us = 5\n' >neg.toml
expect 2 "neg.toml:6:21: key 'intra_node_bw_gbs' in [[partition]] 'p' = -300 is out of range" --cluster neg.toml "${M[@]}"
printf '[[partition]]\nname = "p"\ngpu = "a100"\nnodes = 2\nintra_node_bw_gbs = 300\ninter_node_bw_gbs = 25\ninter_node_latency_us = 5\n' >missing.toml
expect 2 "missing.toml:1:1: missing required key 'gpus_per_node' in [[partition]] 'p'" --cluster missing.toml "${M[@]}"
printf 'family = "transformer"\nlayers = 0\nhidden = 1024\nheads = 16\nffn_hidden = 4096\nseq_len = 2048\nvocab = 51200\ndtype = "fp16"\n' >zero.toml
expect 2 "zero.toml:2:10: key 'layers' in model file = 0 is out of range [1, 1024]" --cluster "$C" --model ./zero.toml --global-batch 8
printf 'family = "transformer"\nlayers = 4\nhidden = 1024\nheads = 16\nffn_hidden = 4096\nseq_len = 2048\nvocab = 51200\ndtype = "fp8"\n' >dtype.toml
expect 2 "dtype.toml:8:9: key 'dtype' in model file = \"fp8\" is unknown (expected fp16, bf16, fp32 or fp64)" --cluster "$C" --model ./dtype.toml --global-batch 8
printf 'family = "transformer"\nlayers = 4\nhidden = 1024\nheads = 16\nffn_hidden = 4096\nseq_len = 2048\nvocab = 51200\ndtype = "fp16"\nexperts = 4\n' >extra.toml
expect 2 "extra.toml:9:1: unknown key 'experts' in model file" --cluster "$C" --model ./extra.toml --global-batch 8
expect 2 "./absent.toml: cannot open file" --cluster "$C" --model ./absent.toml --global-batch 8

# Requests no Cell can hold: exit 1 and say why.
expect 1 "no Cell can hold gpt3-175b with global batch 1536" --cluster "$C" --model gpt3-175b --global-batch 1536 --gpu a10 --nodes 1
expect 1 "needs at least" --cluster "$C" --model gpt3-175b --global-batch 1536 --gpu a10 --nodes 1
expect 1 "no Cell of $C matches --nodes 2 --gpus-per-node 4 --stages 7 --gpu a100" --cluster "$C" "${M[@]}" --gpu a100 --nodes 2 --gpus-per-node 4 --stages 7
# Hostile files (issue 13): deep nesting before the recursive parser, absurd sizes and rates.
python3 -c 'print("a." * 4000 + "a = 1")' >deep.toml
expect 2 "deep.toml: line 1: a dotted key or table name nested deeper than 16 levels" --cluster "$C" --model ./deep.toml --global-batch 8
python3 -c 'print("x = " + "[" * 5000 + "]" * 5000)' >deeparr.toml
expect 2 "deeparr.toml: line 1: an array or inline table nested deeper than 16 levels" --cluster deeparr.toml "${M[@]}"
sed -e 's/^nodes = .*/nodes = 1000000/' -e 's|^gpus = .*|gpus = "gpus.toml"|' "$C" >many.toml
expect 2 "key 'nodes' in [[partition]] 'a100' = 1000000 is out of range [1, 65536]" --cluster many.toml "${M[@]}"
sed -e 's/^intra_node_bw_gbs = .*/intra_node_bw_gbs = 1e-300/' -e 's|^gpus = .*|gpus = "gpus.toml"|' "$C" >slow.toml
expect 2 "key 'intra_node_bw_gbs' in [[partition]] 'a100' = 1e-300 is out of range [0.01, 100000]" --cluster slow.toml "${M[@]}"
exit $fail
