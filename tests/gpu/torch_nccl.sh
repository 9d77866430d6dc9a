#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
# A real torch.distributed job on NCCL under crius-launch: every rank joins the default group
# from crius-launch's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, builds its TP and DP groups from
# the plan's CRIUS_* variables (Megatron-LM's tp-dp-pp order) and all-reduces over each on its
# GPU (LOCAL_RANK); the sums must be those of the groups' members. Skips (77) without a GPU or
# without a PyTorch built with CUDA and NCCL.
set -u
fail() { echo "FAIL: $*"; exit 1; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "${ngpu:-0}" -ge 1 ] || { echo "SKIP: no GPU (nvidia-smi -L lists none)"; exit 77; }
py=${CRIUS_TEST_PYTHON:-python3}
"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() and torch.distributed.is_nccl_available() else 1)' 2>/dev/null ||
  { echo "SKIP: $py has no PyTorch with CUDA and NCCL"; exit 77; }
cat >job.py <<'PY'
import os, torch, torch.distributed as dist
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
dist.init_process_group("nccl")
tp, dp = int(os.environ["CRIUS_TP_SIZE"]), int(os.environ["CRIUS_DP_SIZE"])
assert int(os.environ["CRIUS_TP_RANK"]) == rank % tp and int(os.environ["CRIUS_DP_RANK"]) == rank // tp % dp
groups = {}
for kind, members in [("tp", [[s + i for i in range(tp)] for s in range(0, world, tp)]),
                      ("dp", [[b + t + tp * d for d in range(dp)] for b in range(0, world, tp * dp) for t in range(tp)])]:
    for m in members:
        g = dist.new_group(m)  # every rank creates every group, as torch requires
        if rank in m:
            groups[kind] = (g, m)
for kind, (g, m) in groups.items():
    x = torch.tensor([float(rank)], device="cuda")
    dist.all_reduce(x, group=g)
    assert x.item() == sum(m), (kind, m, x.item())
    print(f"rank {rank}: {kind} group {m} sum {x.item():.0f} ok", flush=True)
dist.destroy_process_group()
PY
n=$(( ngpu >= 4 ? 4 : ngpu ))
if [ "$n" -ge 4 ]; then opts=(--tp 2 --dp 2); elif [ "$n" -ge 2 ]; then opts=(--tp 2); else opts=(-n 1); fi
crius-launch "${opts[@]}" -- "$py" job.py >out.txt 2>&1
rc=$?
cat out.txt
[ $rc = 0 ] || fail "exit $rc"
[ "$(grep -c ' ok$' out.txt)" = $((n * 2)) ] || fail "not every rank checked its TP and DP groups"
echo "torch_nccl passed on $n GPUs"
