#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
"""A synthetic crius-sim trace at a larger site's scale: the philly trace's jobs, repeated.

usage: sim-trace.py TRACE OUT JOBS GPUS

Lap after lap of the trace's jobs (new ids), submissions compressed by the trace's cluster
(1,280 GPUs) over GPUS, so that jobs arrive GPUS / 1,280 times as often: the same load per GPU
with philly's mix of models, sizes and GPU types.
"""
import csv, sys

trace, out, count, gpus = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rows = list(csv.DictReader(open(trace)))
t0 = min(int(r["submission_time"]) for r in rows)
span = max(int(r["submission_time"]) for r in rows) - t0 + 1
scale = 1280 / gpus
with open(out, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    for i in range(count):
        r = dict(rows[i % len(rows)])
        lap = i // len(rows)
        submit = (int(r["submission_time"]) - t0 + lap * span) * scale
        if r.get("deadline"):
            r["deadline"] = str(round(submit + (int(r["deadline"]) - int(r["submission_time"]))))
        r["submission_time"] = str(round(submit))
        r["job_id"] = f'{r["job_id"]}-{lap}'
        w.writerow(r)
