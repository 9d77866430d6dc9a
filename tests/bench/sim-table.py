#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
"""sim-table.py LABEL=FILE.json...: one row per policy, the mean JCT (s) and throughput
(samples/s) of each crius-sim --json run side by side, then crius's mean JCT against each
policy (negative: crius lower) and its throughput ratio, per run."""
import json
import sys

runs = []
for arg in sys.argv[1:]:
    label, path = arg.split("=", 1)
    runs.append((label, json.load(open(path))["policies"]))
names = []
for _, p in runs:
    names += [n for n in p if n not in names]
print("| policy | " + " | ".join(f"{l}: JCT mean / throughput" for l, _ in runs) + " |")
print("|---" * (len(runs) + 1) + "|")
for n in names:
    cells = []
    for _, p in runs:
        v = p.get(n)
        cells.append(f"{v['jct_mean_s']:,.0f} / {v['throughput_mean']:.1f}" if v else "")
    print(f"| {n} | " + " | ".join(cells) + " |")
print()
print("| crius vs | " + " | ".join(f"{l}: mean JCT, throughput" for l, _ in runs) + " |")
print("|---" * (len(runs) + 1) + "|")
for n in names:
    if n.startswith("crius"):
        continue
    cells = []
    for _, p in runs:
        c = next((v for k, v in p.items() if k.startswith("crius")), None)
        v = p.get(n)
        if not (c and v):
            cells.append("")
            continue
        d = 100 * (c["jct_mean_s"] / v["jct_mean_s"] - 1)
        cells.append(f"{d:+.0f}%, {c['throughput_mean'] / v['throughput_mean']:.2f}x")
    print(f"| {n} | " + " | ".join(cells) + " |")
