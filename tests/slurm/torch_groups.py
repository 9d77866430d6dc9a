# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# One rank of a torch.distributed job under crius-launch: rendezvous from the environment
# crius-launch sets (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), then Megatron-LM's groups
# (megatron/core/parallel_state.py: every rank creates every group, in the same order; rank
# order tp-dp-pp) built from the plan's CRIUS_* sizes, each checked with an all-reduce of the
# member ranks. Each rank writes what it saw as JSON to PREFIX.RANK (argv[1]: ranks' stdout
# lines from several hosts may interleave).
import json
import os
import socket
import sys

import torch
import torch.distributed as dist

env = os.environ
rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
tp, pp = int(env["CRIUS_TP_SIZE"]), int(env["CRIUS_STAGES"])
dp = world // (tp * pp)
assert tp * dp * pp == world, (tp, dp, pp, world)

tp_groups = [list(range(i * tp, (i + 1) * tp)) for i in range(world // tp)]
dp_groups = [[s * tp * dp + d * tp + t for d in range(dp)] for s in range(pp) for t in range(tp)]
pp_groups = [list(range(i, world, world // pp)) for i in range(world // pp)]
mine = {}
for kind, groups in (("tp", tp_groups), ("dp", dp_groups), ("pp", pp_groups)):
    for members in groups:
        group = dist.new_group(members)
        if rank in members:
            mine[kind] = (members, group)

sums = {}
for kind, (members, group) in mine.items():
    t = torch.tensor([rank], dtype=torch.int64)
    dist.all_reduce(t, group=group)
    assert t.item() == sum(members), (kind, members, t.item())
    sums[kind] = t.item()
dist.barrier()
with open(f"{sys.argv[1]}.{rank}", "w") as out:
    json.dump({
        "rank": rank, "host": socket.gethostname(), "master_addr": env["MASTER_ADDR"],
        "tp_rank": int(env["CRIUS_TP_RANK"]), "pp_rank": int(env["CRIUS_PP_RANK"]),
        "groups": {k: m for k, (m, _) in mine.items()}, "sums": sums}, out)
dist.destroy_process_group()
