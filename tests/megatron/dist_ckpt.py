# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
"""Megatron-Core's own dist_checkpointing, on CPU: a model's weights saved under one TP x PP and
loaded under another, as a job criusd moved would load them.

    dist_ckpt.py MEGATRON_ROOT save|load DIR     (under crius-launch: its CRIUS_TP_*/CRIUS_PP_*)

Each rank holds its part of a stack of layers (PP splits the layers, TP the rows of each layer's
column-parallel weight, as Megatron's ColumnParallelLinear does) as Megatron ShardedTensors;
`save` writes them with dist_checkpointing.save, `load` reads its part of the same weights under
the plan it now runs with dist_checkpointing.load and checks every value. The zarr format (0.8's;
Debian's python3-zarr) is used because 0.8's torch_dist needs PyTorch >= 2 (Debian 12 has 1.13)
and its default load strategy tensorstore (not in Debian); 0.8's zarr writer calls
torch.cuda.synchronize() first, which a CPU has nothing for: that one call is a stand-in.
"""
import os
import sys

import torch
import torch.distributed as dist

root, mode, ckpt = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, root)
torch.cuda.synchronize = lambda *a, **k: None
from megatron.core import dist_checkpointing  # noqa: E402
from megatron.core.dist_checkpointing import ShardedTensor  # noqa: E402
from megatron.core.dist_checkpointing.strategies.zarr import ZarrLoadShardedStrategy, ZarrSaveShardedStrategy  # noqa: E402

LAYERS, ROWS, COLS = 4, 8, 6
tp, pp = int(os.environ["CRIUS_TP_SIZE"]), int(os.environ["CRIUS_STAGES"])
tp_rank, pp_rank, dp_rank = (int(os.environ[k]) for k in ("CRIUS_TP_RANK", "CRIUS_PP_RANK", "CRIUS_DP_RANK"))
dist.init_process_group("gloo")
full = torch.arange(LAYERS * ROWS * COLS, dtype=torch.float32).reshape(LAYERS, ROWS, COLS)
mine = full.chunk(pp, 0)[pp_rank].chunk(tp, 1)[tp_rank].clone()


def sharded(t):
    # axis 0: this stage's layers; axis 1: this TP rank's rows; DP ranks hold replicas.
    return {"layers.weight": ShardedTensor.from_rank_offsets("decoder.layers.weight", t, (0, pp_rank, pp),
                                                             (1, tp_rank, tp), replica_id=dp_rank)}


if mode == "save":
    if dist.get_rank() == 0:
        os.makedirs(ckpt, exist_ok=True)
    dist.barrier()
    dist_checkpointing.save(sharded(mine), ckpt, sharded_strategy=ZarrSaveShardedStrategy("zarr", 1))
    print(f"rank {dist.get_rank()}: saved layers {tuple(mine.shape)} at tp {tp} pp {pp}", flush=True)
else:
    got = dist_checkpointing.load(sharded(torch.zeros_like(mine)), ckpt, sharded_strategy=ZarrLoadShardedStrategy())
    assert torch.equal(got["layers.weight"], mine), "the loaded part differs from the saved weights"
    print(f"rank {dist.get_rank()}: loaded {tuple(mine.shape)} at tp {tp} pp {pp}, equal", flush=True)
dist.destroy_process_group()
