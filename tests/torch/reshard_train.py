# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
"""One rank of a small GPT trained with its plan's tensor and data parallelism, which saves on
the checkpoint signal and resumes under any other plan with torch.distributed.checkpoint (DCP).

Usage (under crius-launch): reshard_train.py CKPT_DIR LOG --steps N [--global-batch B] [--pace S]

The layout is Megatron-LM's: rank = tp_rank + tp * dp_rank; attention heads and the MLP split
column- then row-parallel over TP, the output layer split over the vocabulary; the optimizer
(Adam) is ZeRO-1: each rank owns a slice of every parameter and its Adam moments, the rows of
its TP block split over DP (a parameter TP does not split: its rows split over every rank).
The owned slices are the checkpoint: ShardedTensors of the full parameter shapes, as
Megatron-Core's torch_dist format writes them, so DCP reshards them on load to any TP x DP.
Everything is float64 and every step's data depends only on the step, so the loss at a step is
the same under every plan up to rounding.

CKPT_DIR/latest names the last saved step. On CRIUS_CHECKPOINT_SIGNAL (USR1 when unset) every
rank finishes its step, all agree, the state is saved, and the program exits 0. Rank 0 appends
one JSON line per step to LOG and prints Megatron-LM's `iteration N/ M` progress line. --pace
sleeps S seconds after each step of a run that did not resume (a first run a test can move).
"""
import argparse
import json
import math
import os
import signal
import sys
import time
import warnings
import zlib

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn.functional as F
from torch.distributed._shard.sharded_tensor import Shard, ShardMetadata, init_from_local_shards

# ShardedTensor is what Megatron-Core's torch_dist format saves; PyTorch 2.x prefers DTensor.
warnings.filterwarnings("ignore", message=".*(ShardedTensor|TypedStorage)")

VOCAB, HIDDEN, HEADS, FFN, SEQ, LAYERS = 64, 32, 4, 128, 16, 2

parser = argparse.ArgumentParser()
parser.add_argument("ckpt_dir")
parser.add_argument("log")
parser.add_argument("--steps", type=int, required=True)
parser.add_argument("--global-batch", type=int, default=32)
parser.add_argument("--pace", type=float, default=0.0)
args = parser.parse_args()

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
env = os.environ
rank, world = int(env["RANK"]), int(env["WORLD_SIZE"])
tp, dp = int(env["CRIUS_TP_SIZE"]), int(env["CRIUS_DP_SIZE"])
tp_rank, dp_rank = int(env["CRIUS_TP_RANK"]), int(env["CRIUS_DP_RANK"])
if int(env.get("CRIUS_STAGES", "1")) != 1 or tp * dp != world or rank != tp_rank + tp * dp_rank:
    sys.exit(f"reshard_train.py: runs one pipeline stage in tp-dp order, not {env.get('CRIUS_STAGES')} "
             f"stages, tp {tp} x dp {dp} on {world} ranks (rank {rank})")
if HEADS % tp or FFN % tp or VOCAB % tp or args.global_batch % dp:
    sys.exit(f"reshard_train.py: tp {tp} must divide {HEADS} heads, dp {dp} the batch {args.global_batch}")

save_requested = False
def request_save(signum, frame):
    global save_requested
    save_requested = True
checkpoint_signal = env.get("CRIUS_CHECKPOINT_SIGNAL", "USR1")
if checkpoint_signal != "none":
    signal.signal(getattr(signal, "SIG" + checkpoint_signal), request_save)

dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)
tp_group = dp_group = None
for d in range(dp):  # every rank creates every group, in the same order
    g = dist.new_group([t + tp * d for t in range(tp)])
    if d == dp_rank:
        tp_group = g
for t in range(tp):
    g = dist.new_group([t + tp * d for d in range(dp)])
    if t == tp_rank:
        dp_group = g


class CopyToTP(torch.autograd.Function):
    """Identity forward; the input's gradient is the sum over the TP group."""
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        dist.all_reduce(grad, group=tp_group)
        return grad


class ReduceFromTP(torch.autograd.Function):
    """Sum of the TP group's partial results forward; identity backward."""
    @staticmethod
    def forward(ctx, x):
        x = x.contiguous()
        dist.all_reduce(x, group=tp_group)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class GatherFromTP(torch.autograd.Function):
    """Concatenation of the TP group's slices of the last dimension; backward keeps this
    rank's slice."""
    @staticmethod
    def forward(ctx, x):
        parts = [torch.empty_like(x) for _ in range(tp)]
        dist.all_gather(parts, x.contiguous(), group=tp_group)
        return torch.cat(parts, dim=-1)

    @staticmethod
    def backward(ctx, grad):
        return grad.chunk(tp, dim=-1)[tp_rank].contiguous()


def copy_to_tp(x): return CopyToTP.apply(x) if tp > 1 else x
def reduce_from_tp(x): return ReduceFromTP.apply(x) if tp > 1 else x
def gather_from_tp(x): return GatherFromTP.apply(x) if tp > 1 else x


# name -> (global shape, the dimension TP splits or None, init)
SPECS = {"embed": ((VOCAB, HIDDEN), None, "normal"), "pos": ((SEQ, HIDDEN), None, "normal")}
for layer in range(LAYERS):
    p = f"layer{layer}."
    SPECS.update({
        p + "ln1_w": ((HIDDEN,), None, "ones"), p + "ln1_b": ((HIDDEN,), None, "zeros"),
        p + "q_w": ((HIDDEN, HIDDEN), 0, "normal"), p + "k_w": ((HIDDEN, HIDDEN), 0, "normal"),
        p + "v_w": ((HIDDEN, HIDDEN), 0, "normal"),
        p + "o_w": ((HIDDEN, HIDDEN), 1, "normal"), p + "o_b": ((HIDDEN,), None, "zeros"),
        p + "ln2_w": ((HIDDEN,), None, "ones"), p + "ln2_b": ((HIDDEN,), None, "zeros"),
        p + "fc1_w": ((FFN, HIDDEN), 0, "normal"), p + "fc1_b": ((FFN,), 0, "zeros"),
        p + "fc2_w": ((HIDDEN, FFN), 1, "normal"), p + "fc2_b": ((HIDDEN,), None, "zeros"),
    })
SPECS.update({"lnf_w": ((HIDDEN,), None, "ones"), "lnf_b": ((HIDDEN,), None, "zeros"),
              "head_w": ((VOCAB, HIDDEN), 0, "normal")})


def tp_block(shape, tp_dim):
    """Offsets and sizes of this rank's TP block of a parameter."""
    offsets, sizes = [0] * len(shape), list(shape)
    if tp_dim is not None:
        sizes[tp_dim] = shape[tp_dim] // tp
        offsets[tp_dim] = tp_rank * sizes[tp_dim]
    return offsets, sizes


def owned_rows(shape, tp_dim):
    """The rows of this rank's TP block it owns (ZeRO-1), and the group that shares the block."""
    rows = tp_block(shape, tp_dim)[1][0]
    parts, index, group = (dp, dp_rank, dp_group) if tp_dim is not None else (world, rank, None)
    if rows % parts:
        sys.exit(f"reshard_train.py: {rows} rows do not split over {parts} ranks")
    n = rows // parts
    return index * n, n, group, parts


def init_value(name, shape, kind):
    if kind == "ones":
        return torch.ones(shape)
    if kind == "zeros":
        return torch.zeros(shape)
    gen = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    return torch.randn(shape, generator=gen) * 0.02


params, moments = {}, {}
for name, (shape, tp_dim, kind) in SPECS.items():
    offsets, sizes = tp_block(shape, tp_dim)
    full = init_value(name, shape, kind)
    block = full[tuple(slice(o, o + s) for o, s in zip(offsets, sizes))]
    params[name] = block.contiguous().requires_grad_(True)
    first, n, _, _ = owned_rows(shape, tp_dim)
    moments[name] = (torch.zeros([n] + sizes[1:]), torch.zeros([n] + sizes[1:]))


def sharded(name, local):
    """A ShardedTensor of the parameter's full shape whose shard here is LOCAL, this rank's
    owned rows of its TP block."""
    shape, tp_dim, _ = SPECS[name]
    offsets, _ = tp_block(shape, tp_dim)
    first, _, _, _ = owned_rows(shape, tp_dim)
    offsets[0] += first
    meta = ShardMetadata(shard_offsets=offsets, shard_sizes=list(local.shape), placement=f"rank:{rank}/cpu")
    return init_from_local_shards([Shard(local, meta)], *shape)


def owned(name):
    first, n, _, _ = owned_rows(SPECS[name][0], SPECS[name][1])
    return params[name].data[first:first + n]


def gather_owned(name, piece):
    """Every owner's rows back into this rank's TP block."""
    _, _, group, parts = owned_rows(SPECS[name][0], SPECS[name][1])
    pieces = [torch.empty_like(piece) for _ in range(parts)]
    dist.all_gather(pieces, piece.contiguous(), group=group)
    params[name].data.copy_(torch.cat(pieces, dim=0))


def state_dict(step):
    sd = {"step": torch.tensor([step], dtype=torch.int64)}
    for name in SPECS:
        sd[name] = sharded(name, owned(name).clone())
        sd[name + ".exp_avg"] = sharded(name, moments[name][0])
        sd[name + ".exp_avg_sq"] = sharded(name, moments[name][1])
    return sd


def save(step):
    path = os.path.join(args.ckpt_dir, f"step-{step}")
    sd = state_dict(step)
    if hasattr(dcp, "save"):
        dcp.save(sd, checkpoint_id=path)
    else:
        dcp.save_state_dict(sd, storage_writer=dcp.FileSystemWriter(path))
    dist.barrier()
    if rank == 0:
        with open(os.path.join(args.ckpt_dir, "latest.tmp"), "w") as out:
            out.write(f"{step}\n")
        os.replace(os.path.join(args.ckpt_dir, "latest.tmp"), os.path.join(args.ckpt_dir, "latest"))
    dist.barrier()


def load():
    """The step of the last checkpoint, its state loaded into this plan's shards (0: none)."""
    latest = os.path.join(args.ckpt_dir, "latest")
    if not os.path.exists(latest):
        return 0
    step = int(open(latest).read())
    path = os.path.join(args.ckpt_dir, f"step-{step}")
    sd = state_dict(-1)
    if hasattr(dcp, "load"):
        dcp.load(sd, checkpoint_id=path)
    else:
        dcp.load_state_dict(sd, storage_reader=dcp.FileSystemReader(path))
    if sd["step"].item() != step:
        sys.exit(f"reshard_train.py: {path} holds step {sd['step'].item()}, 'latest' says {step}")
    for name in SPECS:
        gather_owned(name, sd[name].local_shards()[0].tensor)
        moments[name][0].copy_(sd[name + ".exp_avg"].local_shards()[0].tensor)
        moments[name][1].copy_(sd[name + ".exp_avg_sq"].local_shards()[0].tensor)
    return step


def batch(step):
    """The step's samples: sequences t -> (a t + b) mod VOCAB with random a, b (learnable)."""
    gen = torch.Generator().manual_seed(1000 + step)
    a = torch.randint(1, 8, (args.global_batch, 1), generator=gen)
    b = torch.randint(0, VOCAB, (args.global_batch, 1), generator=gen)
    tokens = (a * torch.arange(SEQ + 1) + b) % VOCAB
    return tokens[:, :-1], tokens[:, 1:]


def forward(x, y):
    P = params
    h = P["embed"][x] + P["pos"][: x.shape[1]]
    local_heads, head_dim = HEADS // tp, HIDDEN // HEADS
    mask = torch.full((x.shape[1], x.shape[1]), float("-inf")).triu(1)
    for layer in range(LAYERS):
        p = f"layer{layer}."
        a = copy_to_tp(F.layer_norm(h, (HIDDEN,), P[p + "ln1_w"], P[p + "ln1_b"]))
        q, k, v = (
            (a @ P[p + w].t()).view(x.shape[0], x.shape[1], local_heads, head_dim).transpose(1, 2)
            for w in ("q_w", "k_w", "v_w"))
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(head_dim) + mask, dim=-1) @ v
        att = att.transpose(1, 2).reshape(x.shape[0], x.shape[1], local_heads * head_dim)
        h = h + reduce_from_tp(att @ P[p + "o_w"].t()) + P[p + "o_b"]
        m = copy_to_tp(F.layer_norm(h, (HIDDEN,), P[p + "ln2_w"], P[p + "ln2_b"]))
        m = F.gelu(m @ P[p + "fc1_w"].t() + P[p + "fc1_b"])
        h = h + reduce_from_tp(m @ P[p + "fc2_w"].t()) + P[p + "fc2_b"]
    h = copy_to_tp(F.layer_norm(h, (HIDDEN,), P["lnf_w"], P["lnf_b"]))
    logits = gather_from_tp(h @ P["head_w"].t())
    return F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))


def train_step(step):
    """One optimizer step on the global batch; returns its mean loss."""
    x, y = batch(step)
    per_dp = args.global_batch // dp
    x, y = x[dp_rank * per_dp:(dp_rank + 1) * per_dp], y[dp_rank * per_dp:(dp_rank + 1) * per_dp]
    micro = int(env.get("CRIUS_MICRO_BATCH_SIZE", per_dp))
    if micro <= 0 or per_dp % micro:
        micro = per_dp
    for p in params.values():
        p.grad = None
    total = torch.zeros(1)
    for first in range(0, per_dp, micro):
        loss = forward(x[first:first + micro], y[first:first + micro]) * (micro / per_dp)
        loss.backward()
        total += loss.detach()
    for p in params.values():
        dist.all_reduce(p.grad, group=dp_group)
        p.grad /= dp
    dist.all_reduce(total, group=dp_group)
    lr, beta1, beta2, eps = 3e-3, 0.9, 0.999, 1e-8
    for name in SPECS:
        first, n, _, _ = owned_rows(SPECS[name][0], SPECS[name][1])
        grad = params[name].grad[first:first + n]
        m, v = moments[name]
        m.mul_(beta1).add_(grad, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        update = (m / (1 - beta1 ** step)) / ((v / (1 - beta2 ** step)).sqrt() + eps)
        gather_owned(name, owned(name) - lr * update)
    return total.item() / dp


os.makedirs(args.ckpt_dir, exist_ok=True)
start = load()
cell = env.get("CRIUS_CELL", "")
if rank == 0 and start:
    print(f"resumed at step {start} under tp {tp} x dp {dp}, saved under Cell "
          f"{env.get('CRIUS_PREV_CELL', '?')}", flush=True)
for step in range(start + 1, args.steps + 1):
    loss = train_step(step)
    if rank == 0:
        with open(args.log, "a") as out:
            out.write(json.dumps({"step": step, "loss": loss, "tp": tp, "dp": dp, "cell": cell,
                                  "resumed_at": start, "prev_cell": env.get("CRIUS_PREV_CELL")}) + "\n")
        print(f" iteration {step:8d}/{args.steps:8d} | lm loss: {loss:.6e}", flush=True)
    if args.pace and not start:
        time.sleep(args.pace)
    stop = torch.tensor([1 if save_requested else 0])
    dist.all_reduce(stop, op=dist.ReduceOp.MAX)
    if stop.item():
        save(step)
        if rank == 0:
            print(f"saved step {step} on the checkpoint signal", flush=True)
        break
dist.barrier()
dist.destroy_process_group()
