#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The shipped data under etc/crius is complete and self-consistent: every GPU entry has all
# required keys and sane values, every model validates for its family, the raw device names the
# project relies on map to the right GPU ids (and K40m to none), every cluster file names known
# GPUs and existing calibration tables, and the calibration CSVs follow their format.
# Checked with Python's tomllib, independently of the estimator's loader; when crius-estimate is
# built, it must also load every example cluster.
set -euo pipefail
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -c 'import tomllib' 2>/dev/null || { echo "python3 >= 3.11 (tomllib) not available"; exit 77; }

"$py" - "$TOP/etc/crius" <<'EOF'
import csv, math, os, re, sys, tomllib

etc = sys.argv[1]
errors = []
def err(msg):
    errors.append(msg)

def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)

def pos_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0

def pos_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and v > 0

# ---- gpus.toml ------------------------------------------------------------------------------
gpus = load(os.path.join(etc, "gpus.toml"))
if not set(gpus) <= {"gpu", "runtime"} or "gpu" not in gpus:
    err(f"gpus.toml: top-level keys {sorted(gpus)}, expected [gpu.*] and optional [runtime.*]")
for rname, rprof in gpus.get("runtime", {}).items():
    if rname not in ("megatron", "megatron-core", "alpa"):
        err(f"gpus.toml: [runtime.{rname}] is not a runtime profile (megatron, megatron-core, alpa)")
    switches = ("fused_attention", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap", "overlap_p2p_comm",
                "master_param_remainders")
    for k, v in rprof.items():
        if k in switches:
            if not isinstance(v, bool):
                err(f"gpus.toml: [runtime.{rname}] {k} = {v!r} is not true or false")
        elif k in ("tp_comm_splits", "tp_comm_sms"):
            if not (isinstance(v, int) and 1 <= v <= 64):
                err(f"gpus.toml: [runtime.{rname}] {k} = {v!r} is not a count of 1..64")
        elif k not in ("inter_node_factor", "runtime_overhead") or not (pos_num(v) and v <= 100):
            err(f"gpus.toml: [runtime.{rname}] {k} = {v!r}")
gpus = gpus.get("gpu", {})
required_ids = ["a100", "a100-80gb", "h100", "h200", "v100", "a40", "a10", "l20", "l40s", "p100"]
for gid in required_ids:
    if gid not in gpus:
        err(f"gpus.toml: required GPU type '{gid}' missing")
if "k40m" in gpus:
    err("gpus.toml: k40m must stay unknown (it is the unknown-GPU test case)")
gpu_keys = {"name", "memory_gib", "memory_bw_gbs", "tflops", "match", "compute_capability", "memory_type", "sm_count"}
fitted_keys = {"gemm_efficiency", "fp32_efficiency", "memory_efficiency", "fused_attention_efficiency"}
for gid, g in gpus.items():
    where = f"gpus.toml [gpu.{gid}]"
    for k in sorted(gpu_keys - set(g)):
        err(f"{where}: missing key '{k}'")
    for k in sorted(set(g) - gpu_keys - fitted_keys):
        err(f"{where}: unknown key '{k}'")
    for k in sorted(set(g) & fitted_keys):
        if not (pos_num(g[k]) and g[k] <= 1):
            err(f"{where}: {k} = {g[k]!r} not in (0, 1]")
    cc, memtype, sms = g.get("compute_capability"), g.get("memory_type"), g.get("sm_count")
    if not (isinstance(sms, int) and 16 <= sms <= 1024):
        err(f"{where}: sm_count {sms!r} not a count of SMs")
    if not (pos_num(cc) and 6 <= cc < 20):
        err(f"{where}: compute_capability {cc!r} not a CUDA compute capability (6.0..)")
    if not (isinstance(memtype, str) and re.fullmatch(r"(HBM|GDDR)\d\w*", memtype)):
        err(f"{where}: memory_type {memtype!r} is not HBMn or GDDRn")
    if not (isinstance(g.get("name"), str) and g["name"]):
        err(f"{where}: name must be a non-empty string")
    mem, bw = g.get("memory_gib"), g.get("memory_bw_gbs")
    if not (pos_num(mem) and 8 <= mem <= 512):
        err(f"{where}: memory_gib {mem!r} not in 8..512")
    if not (pos_num(bw) and 100 <= bw <= 20000):
        err(f"{where}: memory_bw_gbs {bw!r} not in 100..20000")
    t = g.get("tflops", {})
    if not isinstance(t, dict):
        err(f"{where}: tflops must be a table")
        t = {}
    for k in sorted(set(t) - {"fp16", "bf16", "tf32", "fp32"}):
        err(f"{where}: unknown tflops key '{k}'")
    for k in ("fp16", "fp32"):
        if k not in t:
            err(f"{where}: tflops.{k} missing")
    for k, v in t.items():
        if not (pos_num(v) and v < 10000):
            err(f"{where}: tflops.{k} = {v!r} not a positive TFLOP/s figure")
    # Tensor-core math is never slower than fp32 CUDA-core math; bf16 never faster than fp16.
    if "fp16" in t and "fp32" in t and t["fp16"] < t["fp32"]:
        err(f"{where}: fp16 peak below fp32 peak")
    if "bf16" in t and t["bf16"] > t.get("fp16", 0):
        err(f"{where}: bf16 peak above fp16 peak")
    if ("tf32" in t) != ("bf16" in t):
        err(f"{where}: tf32 and bf16 come together (Ampere and newer)")
    m = g.get("match")
    if not (isinstance(m, list) and m and all(isinstance(p, str) and len(p) >= 4 for p in m)):
        err(f"{where}: match must be a non-empty list of patterns (>= 4 characters)")

def match_name(raw):
    """The contract's rule: case-insensitive substring, the longest pattern wins."""
    best, best_len = None, -1
    for gid, g in gpus.items():
        for p in g.get("match", []):
            if p.lower() in raw.lower() and len(p) > best_len:
                best, best_len = gid, len(p)
    return best

expect = {
    "Tesla V100-SXM3-32GB-H": "v100",   # DGX-2, ../shared/data/hwloc/nvidiaDGX2.xml
    "Tesla V100-SXM2-32GB": "v100",
    "Tesla P100-SXM2-16GB": "p100",     # POWER8, power8gpudistances.xml
    "Tesla K40m": None,                 # 32em64t-2n8c2t-pci-wholeio.xml: unknown on purpose
    "Tesla M2075 Dual-Slot Computing Processor Module": None,
    "AMD Radeon R9 200": None,
    "Tesla V100-SXM2-16GB": None,       # a different part (16 GB)
    "NVIDIA A100-SXM4-40GB": "a100",
    "NVIDIA A100-PCIE-40GB": "a100",
    "NVIDIA A100-SXM4-80GB": "a100-80gb",
    "NVIDIA A100 80GB PCIe": "a100-80gb",
    "NVIDIA H100 80GB HBM3": "h100",
    "NVIDIA H100 PCIe": None,
    "NVIDIA H200": "h200",
    "NVIDIA A40": "a40",
    "NVIDIA RTX A4000": None,
    "NVIDIA A10": "a10",
    "NVIDIA L20": "l20",
    "NVIDIA L40S": "l40s",
    "NVIDIA L40": None,
}
for raw, want in expect.items():
    got = match_name(raw)
    if got != want:
        err(f"gpus.toml: device name '{raw}' maps to {got!r}, expected {want!r}")

# ---- models.toml ----------------------------------------------------------------------------
models = load(os.path.join(etc, "models.toml"))
if set(models) != {"model"}:
    err(f"models.toml: top-level keys {sorted(models)}, expected only [model.*]")
models = models.get("model", {})
tf_req = {"family", "layers", "hidden", "heads", "ffn_hidden", "seq_len", "vocab", "dtype", "optimizer"}
tf_opt = {"kv_heads", "swiglu", "dropout", "position_embedding"}
moe_req = tf_req | {"experts", "expert_every", "capacity_factor", "top_k"}
wr_req = {"family", "depth", "width_factor", "channels", "image_size", "classes", "dtype", "optimizer"}
for mid, m in models.items():
    where = f"models.toml [model.\"{mid}\"]"
    fam = m.get("family")
    req, opt = {"transformer": (tf_req, tf_opt), "moe": (moe_req, tf_opt | {"expert_group_size"}),
                "wide_resnet": (wr_req, set())}.get(fam, (None, None))
    if req is None:
        err(f"{where}: family {fam!r} not transformer|moe|wide_resnet")
        continue
    for k in sorted(req - set(m)):
        err(f"{where}: missing key '{k}'")
    for k in sorted(set(m) - req - opt):
        err(f"{where}: unknown key '{k}'")
    if m.get("dtype") not in ("fp16", "bf16", "fp32"):
        err(f"{where}: dtype {m.get('dtype')!r}")
    if m.get("optimizer") not in ("adam", "adafactor", "sgd"):
        err(f"{where}: optimizer {m.get('optimizer')!r}")
    for k in sorted((req | opt) - {"family", "dtype", "optimizer", "swiglu", "capacity_factor", "expert_group_size",
                                   "dropout", "position_embedding"}):
        if k in m and not pos_int(m[k]):
            err(f"{where}: {k} = {m[k]!r} must be a positive integer")
    if fam in ("transformer", "moe") and all(pos_int(m.get(k)) for k in ("hidden", "heads")):
        if m["hidden"] % m["heads"]:
            err(f"{where}: hidden {m['hidden']} not divisible by heads {m['heads']}")
        kv = m.get("kv_heads", m["heads"])
        if pos_int(kv) and (kv > m["heads"] or m["heads"] % kv):
            err(f"{where}: kv_heads {kv} must divide heads {m['heads']}")
    if "swiglu" in m and not isinstance(m["swiglu"], bool):
        err(f"{where}: swiglu must be true or false")
    d = m.get("dropout", 0.1)
    if isinstance(d, bool) or not isinstance(d, (int, float)) or not 0 <= d < 1:
        err(f"{where}: dropout = {d!r} must be a number in [0, 1)")
    if m.get("position_embedding", "learned") not in ("learned", "rope"):
        err(f"{where}: position_embedding {m.get('position_embedding')!r} not learned|rope")
    if fam == "moe":
        if not pos_num(m.get("capacity_factor")):
            err(f"{where}: capacity_factor must be > 0")
        g = m.get("expert_group_size", 0)
        if not isinstance(g, int) or isinstance(g, bool) or g < 0:
            err(f"{where}: expert_group_size = {g!r} must be an integer >= 0")
        if pos_int(m.get("top_k")) and pos_int(m.get("experts")) and m["top_k"] > m["experts"]:
            err(f"{where}: top_k > experts")
        if pos_int(m.get("expert_every")) and pos_int(m.get("layers")) and m["expert_every"] > m["layers"]:
            err(f"{where}: expert_every > layers")
    if fam == "wide_resnet" and m.get("depth") not in (50, 101, 152):
        err(f"{where}: depth {m.get('depth')!r} not a bottleneck ResNet depth (50, 101, 152)")

def params(m, tied):
    h, L, V = m["hidden"], m["layers"], m["vocab"]
    kv = m.get("kv_heads", m["heads"]) * (h // m["heads"])
    attn = 2 * h * h + 2 * h * kv
    ffn = (3 if m.get("swiglu") else 2) * h * m["ffn_hidden"]
    return L * (attn + ffn) + (1 if tied else 2) * V * h

# Published parameter counts, within 5%: the catalogue has the shapes the sources describe.
# GPT-3 ties input and output embeddings; Llama does not.
published = {"gpt3-125m": 125e6, "gpt3-350m": 350e6, "gpt3-760m": 760e6, "gpt3-1.3b": 1.3e9,
             "gpt3-2.7b": 2.7e9, "gpt3-6.7b": 6.7e9, "gpt3-13b": 13e9, "gpt3-175b": 175e9,
             "llama2-7b": 6.74e9, "llama2-13b": 13.0e9, "llama2-70b": 69.0e9,
             "llama3-8b": 8.03e9, "llama3-70b": 70.6e9, "bert__6.7B": 6.7e9}
for mid, n in published.items():
    if mid not in models:
        err(f"models.toml: model '{mid}' missing")
        continue
    got = params(models[mid], tied=not mid.startswith("llama"))
    if abs(got / n - 1) > 0.05:
        err(f"models.toml: {mid} has {got / 1e9:.3g}e9 parameters, the source says {n / 1e9:.3g}e9")
mx = models.get("mixtral-8x7b")
if mx:  # 46.7e9 total: attention + 8 SwiGLU experts per layer + embeddings
    total = mx["layers"] * (2 * mx["hidden"] ** 2 + 2 * mx["hidden"] * mx["kv_heads"] * 128
                            + mx["experts"] * 3 * mx["hidden"] * mx["ffn_hidden"]) + mx["vocab"] * mx["hidden"]
    if abs(total / 46.7e9 - 1) > 0.05:
        err(f"models.toml: mixtral-8x7b has {total / 1e9:.3g}e9 parameters, the paper says 46.7e9")
else:
    err("models.toml: model 'mixtral-8x7b' missing")
# Issue 3's formula test vector only holds with these GPT-3 175B shapes.
g = models.get("gpt3-175b")
if g:
    B, s, l, h, V = 1536, g["seq_len"], g["layers"], g["hidden"], g["vocab"]
    flops = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))
    if abs(flops / 3.3862e18 - 1) > 1e-4:
        err(f"models.toml: gpt3-175b gives {flops:.5g} FLOPs per iteration at batch 1536, not 3.3862e18")

# ---- cluster files --------------------------------------------------------------------------
part_req = {"name", "gpu", "nodes", "gpus_per_node", "intra_node_bw_gbs", "inter_node_bw_gbs",
            "inter_node_latency_us"}
part_opt = {"nvlink_domain", "numa_nodes", "calibration"}
clusters = ["crius.toml", "examples/paper-sim.toml", "examples/paper-testbed.toml",
            "examples/dgx-h100.toml"]
totals = {}
for rel in clusters:
    path = os.path.join(etc, rel)
    c = load(path)
    d = os.path.dirname(path)
    for k in sorted(set(c) - {"gpus", "models", "partition", "job_submit", "spank", "criusd", "scheduler"}):
        err(f"{rel}: unknown top-level key '{k}'")
    for k in ("gpus", "models"):
        if k in c and not os.path.isfile(os.path.join(d, c[k])):
            err(f"{rel}: {k} = {c[k]!r} does not exist relative to the file")
        if k not in c and not os.path.isfile(os.path.join(d, k + ".toml")):
            err(f"{rel}: no '{k}' key and no {k}.toml beside the file")
    names = set()
    totals[rel] = 0
    for i, p in enumerate(c.get("partition", [])):
        where = f"{rel} partition {i + 1} ({p.get('name')})"
        for k in sorted(part_req - set(p)):
            err(f"{where}: missing key '{k}'")
        for k in sorted(set(p) - part_req - part_opt):
            err(f"{where}: unknown key '{k}'")
        if p.get("name") in names:
            err(f"{where}: duplicate partition name")
        names.add(p.get("name"))
        if p.get("gpu") not in gpus:
            err(f"{where}: gpu {p.get('gpu')!r} not in gpus.toml")
        for k in ("nodes", "gpus_per_node"):
            if not pos_int(p.get(k)):
                err(f"{where}: {k} must be a positive integer")
        for k in ("intra_node_bw_gbs", "inter_node_bw_gbs", "inter_node_latency_us"):
            if not pos_num(p.get(k)):
                err(f"{where}: {k} must be > 0")
        if pos_num(p.get("intra_node_bw_gbs")) and pos_num(p.get("inter_node_bw_gbs")) and \
                pos_int(p.get("gpus_per_node")) and \
                p["inter_node_bw_gbs"] / p["gpus_per_node"] > p["intra_node_bw_gbs"]:
            err(f"{where}: network faster per GPU than the intra-node links")
        nd = p.get("nvlink_domain")
        if nd is not None and not (pos_int(nd) and pos_int(p.get("gpus_per_node")) and p["gpus_per_node"] % nd == 0):
            err(f"{where}: nvlink_domain {nd!r} must divide gpus_per_node")
        if "calibration" in p:
            cal = os.path.join(d, p["calibration"])
            if not os.path.isfile(cal):
                err(f"{where}: calibration {p['calibration']!r} does not exist")
            elif not os.path.basename(cal).startswith(f"nccl-{p.get('gpu')}."):
                err(f"{where}: calibration {p['calibration']!r} is not the table of GPU '{p.get('gpu')}'")
        if pos_int(p.get("nodes")) and pos_int(p.get("gpus_per_node")):
            totals[rel] += p["nodes"] * p["gpus_per_node"]
    if not c.get("partition"):
        err(f"{rel}: no [[partition]]")
want_totals = {"examples/paper-sim.toml": 1280, "examples/paper-testbed.toml": 64,
               "crius.toml": 32, "examples/dgx-h100.toml": 256}
for rel, n in want_totals.items():
    if totals.get(rel) != n:
        err(f"{rel}: {totals.get(rel)} GPUs, expected {n}")

# ---- calibration tables ---------------------------------------------------------------------
header = "op,nodes,gpus_per_node,group_size,nodes_per_group,bytes,time_s"
ops = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send"}
total_bytes = 0
for gid in ("a100", "v100", "a40", "a10"):
    rel = f"calibration/nccl-{gid}.csv"
    path = os.path.join(etc, rel)
    total_bytes += os.path.getsize(path)
    with open(path) as f:
        lines = f.read().splitlines()
    if not lines or lines[0] != header:
        err(f"{rel}:1: header must be '{header}'")
        continue
    seen, last, curves = set(), {}, set()
    for n, line in enumerate(lines[1:], start=2):
        cols = line.split(",")
        if len(cols) != 7:
            err(f"{rel}:{n}: {len(cols)} columns, expected 7")
            continue
        op = cols[0]
        try:
            nodes, gpn, gs, npg, nbytes = (int(x) for x in cols[1:6])
            t = float(cols[6])
        except ValueError:
            err(f"{rel}:{n}: not numbers: {line}")
            continue
        if op not in ops:
            err(f"{rel}:{n}: op {op!r}")
        if min(nodes, gpn, gs, npg, nbytes) < 1 or gs < 2 or npg > nodes or gs > nodes * gpn \
                or (nodes * gpn) % gs or gs < npg or not (math.isfinite(t) and 0 < t < 100):
            err(f"{rel}:{n}: inconsistent row: {line}")
        if nbytes % 4:
            err(f"{rel}:{n}: bytes {nbytes} not 4 x float32 elements")
        key = (op, nodes, gpn, gs, npg)
        if (key, nbytes) in seen:
            err(f"{rel}:{n}: duplicate row {line}")
        seen.add((key, nbytes))
        if key in last and nbytes <= last[key]:
            err(f"{rel}:{n}: bytes not increasing within its curve")
        last[key] = nbytes
        curves.add(key)
    if len(curves) < 10:
        err(f"{rel}: only {len(curves)} curves")
    for op in ops:
        if not any(k[0] == op for k in curves):
            err(f"{rel}: no '{op}' rows")
if total_bytes > 4 * 1024 * 1024:
    err(f"calibration tables take {total_bytes} bytes, over the 4 MiB budget")

for e in errors:
    print(e)
print(f"{len(gpus)} GPU types, {len(models)} models, {len(clusters)} cluster files; "
      f"{len(errors)} problems")
sys.exit(1 if errors else 0)
EOF

# With the estimator built, its own loader must accept every shipped cluster file.
if [ -x "$B/bin/crius-estimate" ]; then
  for c in "$TOP"/etc/crius/crius.toml "$TOP"/etc/crius/examples/*.toml; do
    if ! crius-estimate --cluster "$c" --model gpt3-1.3b --global-batch 64 --top 1 \
        >"$TEST_TMP/estimate.out" 2>&1; then
      echo "crius-estimate failed on $c:"; cat "$TEST_TMP/estimate.out"; exit 1
    fi
    echo "crius-estimate loads $(basename "$c")"
  done
else
  echo "crius-estimate not built: loader check skipped, tomllib checks only"
fi
