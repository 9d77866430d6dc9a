#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# How often the framework rule changes what a job gets (crius(7), FRAMEWORKS): for every catalogue
# model Megatron-LM trains, on each shipped example cluster, the best Cell crius-estimate picks for
# a Megatron-Core 0.8, 0.10 and 0.13 job against a crius-train job's (global batch 512,
# megatron-core profile), per model: in how many clusters the Cell changed (of them, how many left
# the job no Cell at all: "none") and by how much the best iteration time grew at most. Then the
# same for a torchtitan 0.1 and 0.2 job, over the models torchtitan builds (its Llama 3 flavors).
set -eu
: "${TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${B:=$TOP/build}"
est=$B/bin/crius-estimate
[ -x "$est" ] || { echo "crius-estimate not built"; exit 1; }
python3 - "$TOP" "$est" <<'PY'
import json, subprocess, sys, tomllib
top, est = sys.argv[1], sys.argv[2]
clusters = ["etc/crius/examples/dgx-h100.toml", "etc/crius/examples/paper-sim.toml",
            "etc/crius/examples/paper-testbed.toml", "etc/crius/crius.toml"]
models = tomllib.load(open(f"{top}/etc/crius/models.toml", "rb"))["model"]

def best(cluster, model, framework):
    r = subprocess.run([est, "--cluster", f"{top}/{cluster}", "--model", model, "--global-batch", "512",
                        "--runtime", "megatron-core", "--framework", framework, "--json", "--top", "1"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    c = json.loads(r.stdout)["cells"][0]
    return (c["gpu"], c["nodes"], c["gpus_per_node"], c["stages"]), c["iter_time_s"]

def table(releases, names):
    print(f"{'model':<18}" + "".join(f"{r:>24}" for r in releases))
    print(f"{'':<18}" + "".join(f"{'changed/clusters, time':>24}" for r in releases))
    totals = {r: [0, 0, 0.0, 0] for r in releases}
    for name in names:
        row = f"{name:<18}"
        for r in releases:
            changed = n = none = 0
            worst = 0.0
            for cl in clusters:
                free, ruled = best(cl, name, "crius-train"), best(cl, name, r)
                if free is None:
                    continue
                n += 1
                if ruled is None:
                    changed += 1
                    none += 1
                    continue
                changed += ruled[0] != free[0]
                worst = max(worst, ruled[1] / free[1] - 1)
            totals[r][0] += changed
            totals[r][1] += n
            totals[r][2] = max(totals[r][2], worst)
            totals[r][3] += none
            row += f"{f'{changed}/{n}' + (f' ({none} none)' if none else '') + f', +{100 * worst:.1f}%':>24}"
        print(row)
    print(f"{'all':<18}" + "".join(f"{f'{t[0]}/{t[1]}' + (f' ({t[3]} none)' if t[3] else '') + f', +{100 * t[2]:.1f}%':>24}"
                                   for t in totals.values()))

table(["megatron:0.8", "megatron:0.10", "megatron:0.13"],
      [n for n, m in models.items() if m["family"] != "wide_resnet" and m.get("optimizer") != "adafactor"])
print()
table(["torchtitan:0.1", "torchtitan:0.2"], [n for n in models if n.startswith("llama3-")])
PY
