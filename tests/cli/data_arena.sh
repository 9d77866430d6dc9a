#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# The catalogues cover the Crius/Arena artifact's real data (../shared/data/arena): every model
# id of every trace, of measured-calibration.csv and of dp_mem.csv exists in models.toml with the
# artifact's shape; every GPU type the traces request exists in gpus.toml; paper-sim.toml is the
# artifact's 1,280-GPU simulated cluster; and the calibration tables are exactly what
# scripts/convert-arena-comm-tables makes of comm_tables.csv today.
set -euo pipefail
arena=${CRIUS_ARENA_DATA:-$TOP/../shared/data/arena}
[ -f "$arena/models.toml" ] || { echo "artifact data not found at $arena (set CRIUS_ARENA_DATA)"; exit 77; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -c 'import tomllib' 2>/dev/null || { echo "python3 >= 3.11 (tomllib) not available"; exit 77; }

"$py" - "$TOP/etc/crius" "$arena" <<'EOF'
import csv, glob, json, os, sys, tomllib

etc, arena = sys.argv[1:3]
errors = []
def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)

models = load(os.path.join(etc, "models.toml"))["model"]
gpus = load(os.path.join(etc, "gpus.toml"))["gpu"]

used_models, used_gpus = {}, {}
for path in sorted(glob.glob(os.path.join(arena, "traces", "*.csv"))):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    name = os.path.basename(path)
    if "model_name" in rows[0]:   # job traces
        for r in rows:
            used_models.setdefault(r["model_name"], name)
            used_gpus.setdefault(r["gpu_type"], name)
    else:                          # dp_mem.csv: model,size columns
        for r in rows:
            used_models.setdefault(f"{r['model']}__{r['size']}", name)
with open(os.path.join(arena, "measured-calibration.csv"), newline="") as f:
    for r in csv.DictReader(f):
        used_models.setdefault(f"{r['model']}__{r['size']}", "measured-calibration.csv")
        used_gpus.setdefault(r["gpu_type"], "measured-calibration.csv")
for mid, src in sorted(used_models.items()):
    if mid not in models:
        errors.append(f"model '{mid}' used by {src} is not in models.toml")
for gid, src in sorted(used_gpus.items()):
    if gid not in gpus:
        errors.append(f"GPU type '{gid}' used by {src} is not in gpus.toml")

# Every model of the artifact, with its shape.
art = load(os.path.join(arena, "models.toml"))["models"]
for mid, a in art.items():
    m = models.get(mid)
    if m is None:
        errors.append(f"artifact model '{mid}' is not in models.toml")
        continue
    if a["family"] == "wide_resnet":
        pairs = [("depth", "resnet_depth"), ("width_factor", "width_factor"),
                 ("channels", "num_filters"), ("image_size", "image_size"), ("classes", "num_classes")]
        want = {"family": "wide_resnet", "dtype": "fp32", "optimizer": "sgd"}
    else:
        pairs = [("layers", "num_layers"), ("hidden", "hidden_size"), ("heads", "num_heads"),
                 ("ffn_hidden", "intermediate_size"), ("seq_len", "seq_len"), ("vocab", "vocab_size")]
        want = {"family": "transformer", "dtype": "fp16", "optimizer": "adam"} if a["family"] == "bert" \
            else {"family": "moe", "dtype": "fp16", "optimizer": "adafactor", "experts": a.get("num_experts"),
                  "expert_every": 2, "top_k": 2, "capacity_factor": 1.0,
                  "expert_group_size": a.get("expert_group_size")}
    for ours, theirs in pairs:
        if m.get(ours) != a[theirs]:
            errors.append(f"{mid}: {ours} = {m.get(ours)!r}, the artifact has {theirs} = {a[theirs]!r}")
    for k, v in want.items():
        if m.get(k) != v:
            errors.append(f"{mid}: {k} = {m.get(k)!r}, expected {v!r}")

# paper-sim.toml = traces/sim_cluster_spec.json x the artifact's GPUs per node.
spec = json.load(open(os.path.join(arena, "traces", "sim_cluster_spec.json")))[0]
per_node = {}
with open(os.path.join(arena, "gpu_specs.csv"), newline="") as f:
    for r in csv.DictReader(f):
        per_node[r["gpu_type"]] = int(r["node_capacity_gpus"])
sim = load(os.path.join(etc, "examples", "paper-sim.toml"))["partition"]
got = {p["gpu"]: (p["nodes"], p["gpus_per_node"]) for p in sim}
want = {g: (v["node_num"], per_node[g]) for g, v in spec.items()}
if got != want:
    errors.append(f"paper-sim.toml partitions {got} != artifact {want}")
total = sum(n * g for n, g in got.values())
if total != 1280:
    errors.append(f"paper-sim.toml has {total} GPUs, not 1,280")

for e in errors:
    print(e)
print(f"{len(used_models)} model ids and {len(used_gpus)} GPU types used by the artifact's data; "
      f"paper-sim.toml {total} GPUs; {len(errors)} problems")
sys.exit(1 if errors else 0)
EOF

# The shipped tables are reproducible from the artifact's data.
"$TOP/scripts/convert-arena-comm-tables" "$arena" "$TEST_TMP/calibration" >"$TEST_TMP/convert.log"
for f in "$TEST_TMP"/calibration/nccl-*.csv; do
  if ! cmp -s "$f" "$TOP/etc/crius/calibration/$(basename "$f")"; then
    echo "etc/crius/calibration/$(basename "$f") differs from scripts/convert-arena-comm-tables output"
    diff "$f" "$TOP/etc/crius/calibration/$(basename "$f")" | head -5
    exit 1
  fi
done
echo "calibration tables reproduced: $(ls "$TEST_TMP"/calibration | tr '\n' ' ')"
