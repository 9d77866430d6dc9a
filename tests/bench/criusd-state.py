#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
"""A recorded cluster state for criusd --state (criusd(8)) built from the philly trace.

usage: criusd-state.py TRACE OUT JOBS TYPE:NODESxGPUS[,...]

The trace's jobs, repeated (new names, later submissions) up to JOBS, each a --crius-movable job
of its requested GPU type with the record job_submit_crius writes (the Cell of its request, a
data-parallel plan), packed onto its type until the cluster is ~90% busy (running), the rest
pending. The partitions are named after their GPU type.
"""
import csv, json, sys

trace, out, count, spec = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
shape = {}
for part in spec.split(","):
    gpu, dims = part.split(":")
    n, g = dims.split("x")
    shape[gpu] = (int(n), int(g))
nodes, free, by_type = [], {}, {}
for gpu, (n, g) in shape.items():
    for i in range(n):
        name = f"{gpu}-{i+1}"
        nodes.append({"name": name, "partitions": [gpu], "gpu": gpu, "gpus": g, "gpus_used": 0, "usable": True})
        free[name] = g
        by_type.setdefault(gpu, []).append(name)
byname = {n["name"]: n for n in nodes}
rows = list(csv.DictReader(open(trace)))
span = max(int(r["submission_time"]) for r in rows) - min(int(r["submission_time"]) for r in rows) + 1
total = sum(n["gpus"] for n in nodes)
used, jobs = 0, []
for i in range(count):
    r = rows[i % len(rows)]
    lap = i // len(rows)
    gpu, want = r["gpu_type"], int(r["num_gpu"])
    per = shape[gpu][1]
    gpn = min(want, per)
    nn = max(1, want // gpn)
    submit = int(r["submission_time"]) + lap * span
    rec = {"crius": 2, "by": "job_submit",
           "request": {"model": r["model_name"], "global_batch": int(r["batch_size"]), "runtime": "megatron",
                       "cell": "auto", "iters": int(r["num_iteration"]), "movable": True},
           "cell": {"gpu": gpu, "partition": gpu, "nodes": nn, "gpus_per_node": gpn, "stages": 1},
           "plan": {"version": 1, "stages": [{"layers": [0, 1], "dp": nn * gpn, "tp": 1}], "micro_batches": 1,
                    "micro_batch_size": max(1, int(r["batch_size"]) // (nn * gpn))}}
    job = {"id": 1000 + i, "name": r["job_id"] + ("" if lap == 0 else f"-{lap}"), "state": "PENDING",
           "partition": gpu, "features": gpu, "tres_per_node": f"gres:gpu:{gpn}", "admin_comment": json.dumps(rec),
           "nodes": [], "num_nodes": nn, "submit_time": submit, "start_time": 0, "priority": 1000000 - i,
           "reason": "Priority", "user": f"user{i % 50}"}
    if used < 0.9 * total:
        cand = []
        for c in by_type[gpu]:
            if free[c] >= gpn:
                cand.append(c)
                if len(cand) == nn:
                    break
        if len(cand) == nn:
            for c in cand:
                free[c] -= gpn
                byname[c]["gpus_used"] += gpn
            used += nn * gpn
            job.update(state="RUNNING", nodes=cand, start_time=submit + 60, reason="None")
    jobs.append(job)
now = max(j["submit_time"] for j in jobs) + 300
json.dump({"now": now, "nodes": nodes, "jobs": jobs}, open(out, "w"))
print(f"state: {len(nodes)} nodes, {total} GPUs, {len(jobs)} crius jobs, "
      f"{sum(j['state'] == 'RUNNING' for j in jobs)} running, {used} GPUs busy")
