# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
"""Feed crius's torchtitan flags to torchtitan's own configuration parser and checks.

    validate.py TORCHTITAN_ROOT CASES.jsonl

TORCHTITAN_ROOT holds a torchtitan release's `torchtitan/` package (0.1.0 or 0.2.x). Each line of
CASES.jsonl (tests/frameworks/cases.cpp) is {"world": N, "what": "...", "args": [...]}. For each:

 1. torchtitan's ConfigManager().parse_args(args): its own tyro parser, every flag and choice;
 2. torchtitan's ParallelDims(..., world_size=N): its own checks of the degrees;
 3. what torchtitan checks only once it has GPUs and a model, read from the release's source
    (each check names its file, and the source must still hold the check's text): the global
    batch against the local batch and the data-parallel degree (train.py), DDP alone
    (models/llama3/infra/parallelize.py), the sequence length against 2 x TP (0.2), async TP
    with compilation, the micro-batch size (distributed/pipeline*.py), stages per rank for the
    schedule and the stage split: every layer once, in order (models/llama3/infra/pipeline.py);
    the flavor exists in models/llama3/__init__.py and TP divides its heads and key/value heads;
 4. crius's own condition that the estimate is what runs: gradient accumulation without a
    pipeline reduces the gradients per micro-batch (train.py's loop), the estimate once per step.

torchtitan imports modules of PyTorch >= 2.4 at its top; its config and ParallelDims need only
torch's dtypes and arithmetic, so the package's __init__ is skipped and the few missing modules
stand in. Prints one line per rejected case and a summary; exit 0 when every case passes, 1 when
one is rejected, 2 when torchtitan cannot be imported here.
"""
import ast
import contextlib
import dataclasses
import importlib
import io
import json
import os
import re
import sys
import types

root, cases_file = sys.argv[1], sys.argv[2]
pkg_dir = os.path.join(root, "torchtitan")


def cannot(why):
    print(f"torchtitan at {root} cannot be imported here: {why}", file=sys.stderr)
    sys.exit(2)


def source(rel):
    with open(os.path.join(pkg_dir, rel)) as f:
        return f.read()


try:
    import torch  # noqa: F401

    stub = types.ModuleType("torchtitan")
    stub.__path__ = [pkg_dir]
    sys.modules["torchtitan"] = stub
    dist = types.ModuleType("torchtitan.distributed")
    dist.__path__ = [os.path.join(pkg_dir, "distributed")]
    sys.modules["torchtitan.distributed"] = dist
    try:
        importlib.import_module("torch.distributed.device_mesh")
    except ImportError:  # PyTorch < 2.2: ParallelDims imports it, its checks do not use it
        dm = types.ModuleType("torch.distributed.device_mesh")
        dm.DeviceMesh = type("DeviceMesh", (), {})
        dm.init_device_mesh = lambda *a, **k: None
        sys.modules["torch.distributed.device_mesh"] = dm
    try:
        importlib.import_module("torchtitan.tools.utils")
    except Exception:  # PyTorch < 2: torch._utils._get_device_module
        tu = types.ModuleType("torchtitan.tools.utils")
        tu.device_type = "cpu"
        sys.modules["torchtitan.tools.utils"] = tu
    v02 = os.path.exists(os.path.join(pkg_dir, "config", "manager.py"))
    manager = importlib.import_module("torchtitan.config.manager" if v02 else "torchtitan.config_manager")
    ParallelDims = importlib.import_module("torchtitan.distributed.parallel_dims").ParallelDims
except Exception as e:  # noqa: BLE001 - whatever keeps torchtitan from importing here
    cannot(f"{type(e).__name__}: {e}")

pipeline_src = "distributed/pipeline_parallel.py" if v02 else "distributed/pipeline.py"
PARALLELIZE = "models/llama3/infra/parallelize.py"
# Each check below is torchtitan's: its text must still be in the release's source.
for rel, text in [("train.py", "global batch size must be multiple of local batch size"),
                  ("train.py", "for microbatch in range(self.gradient_accumulation_steps)"),
                  (PARALLELIZE, "DDP has not supported > 1D parallelism"),
                  (pipeline_src, "if batch_size % microbatch_size != 0"),
                  (pipeline_src, "must be evenly divisible by pp_"),
                  ("distributed/tensor_parallel.py" if v02 else PARALLELIZE, "Async TP requires")]:
    if text not in source(rel) and not (text.startswith("for microbatch") and v02 and "gradient_accumulation_steps" in source(rel)):
        cannot(f"{rel} no longer holds {text!r}: the checks of validate.py need reading again")
if v02 and "seq_len % parallel_dims.seq_len_divisor == 0" not in source(PARALLELIZE):
    cannot(f"{PARALLELIZE} no longer checks the sequence length against TP")

# The Llama 3 flavors, read from the release (models/llama3/__init__.py), and the FFN size its
# model.py derives: 4 dim, x 2/3, x ffn_dim_multiplier, up to a multiple of multiple_of.
flavors = {}
for node in ast.walk(ast.parse(source("models/llama3/__init__.py"))):
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Constant) and isinstance(v, ast.Call) and getattr(v.func, "id", "") == "TransformerModelArgs":
                kw = {a.arg: ast.literal_eval(a.value) for a in v.keywords if isinstance(a.value, ast.Constant)}
                flavors[k.value] = kw


def ffn_size(kw):
    hidden = int(2 * (4 * kw["dim"]) / 3)
    if kw.get("ffn_dim_multiplier"):
        hidden = int(kw["ffn_dim_multiplier"] * hidden)
    m = kw.get("multiple_of", 256)
    return m * ((hidden + m - 1) // m)


def check(case):
    args, world = case["args"], case["world"]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            cfg = manager.ConfigManager().parse_args(list(args))
    except SystemExit:
        return "the parser refused it: " + " ".join(err.getvalue().split())[-300:]
    par, tr = cfg.parallelism, cfg.training
    kw = dict(dp_replicate=par.data_parallel_replicate_degree, dp_shard=par.data_parallel_shard_degree,
              cp=par.context_parallel_degree, tp=par.tensor_parallel_degree, pp=par.pipeline_parallel_degree,
              world_size=world)
    names = {f.name for f in dataclasses.fields(ParallelDims)}
    if "ep" in names:
        kw.update(ep=1, etp=1)
    if "enable_loss_parallel" in names:
        kw["enable_loss_parallel"] = not par.disable_loss_parallel
    try:
        dims = ParallelDims(**kw)
    except AssertionError as e:
        return f"ParallelDims: {e or 'assertion'}"
    dp = dims.dp_replicate * dims.dp_shard
    if tr.global_batch_size % (tr.local_batch_size * dp) != 0:
        return "train.py: global batch size must be multiple of local batch size times data-parallel degree"
    if dims.dp_replicate > 1 and dims.dp_shard == 1 and dims.cp == 1 and (dims.tp > 1 or dims.pp > 1):
        return "parallelize.py: DDP has not supported > 1D parallelism"
    if v02 and tr.seq_len % (dims.tp * 2 * dims.cp) != 0:
        return "parallelize.py: Sequence length must be divisible by the product of TP degree and 2 * CP degree"
    if par.enable_async_tensor_parallel and dims.tp > 1:
        compiled = cfg.compile.enable and "model" in cfg.compile.components if v02 else tr.compile
        if not compiled:
            return "parallelize.py: Async TP requires compilation"
    flavor = flavors.get(cfg.model.flavor)
    if cfg.model.name != "llama3" or flavor is None:
        return f"no llama3 flavor {cfg.model.flavor!r} in models/llama3/__init__.py"
    n_layers, n_heads = flavor["n_layers"], flavor["n_heads"]
    n_kv = flavor.get("n_kv_heads") or n_heads
    if n_heads % dims.tp or n_kv % dims.tp:
        return f"model.py: TP {dims.tp} splits heads ({n_heads}) or key/value heads ({n_kv}) across ranks"
    want = case.get("dims")
    if want:
        got = {"layers": n_layers, "hidden": flavor["dim"], "heads": n_heads, "kv_heads": n_kv, "ffn_hidden": ffn_size(flavor)}
        if got != want:
            return f"flavor {cfg.model.flavor} is {got}, the estimate's model {want}"
    if dims.pp > 1:
        if tr.local_batch_size % par.pipeline_parallel_microbatch_size != 0:
            return "pipeline: local batch size must be divisible by microbatch_size"
        multi = par.pipeline_parallel_schedule.lower() not in ("1f1b", "gpipe")
        if v02:
            parts = [p.split(",") if isinstance(p, str) else list(p) for p in (par.module_fqns_per_model_part or [])]
        else:
            points = par.pipeline_parallel_split_points or []
            bounds = [0] + [int(re.fullmatch(r"layers\.(\d+)", p).group(1)) if re.fullmatch(r"layers\.(\d+)", p) else -1
                            for p in points] + [n_layers]
            if any(b < 0 for b in bounds) or any(b >= c for b, c in zip(bounds, bounds[1:])):
                return f"pipeline.py: split points {points} are not layer names in order within {n_layers} layers"
            parts = [[f"layers.{i}" for i in range(b, c)] for b, c in zip(bounds, bounds[1:])]
            parts[0].insert(0, "tok_embeddings")
            parts[-1] += ["norm", "output"]
        stages = len(parts)
        if stages % dims.pp:
            return f"pipeline: num_stages {stages} must be evenly divisible by pp_size {dims.pp}"
        if (stages // dims.pp == 1) == multi:
            return f"pipeline: schedule {par.pipeline_parallel_schedule} runs {'several stages' if multi else 'one stage'} per rank, not {stages // dims.pp}"
        flat = [m for p in parts for m in p]
        order = ["tok_embeddings"] + [f"layers.{i}" for i in range(n_layers)] + ["norm", "output"]
        if flat != order or any(not p for p in parts):
            return "pipeline: the stages do not hold every module once, in order"
    elif dp > 1 and tr.global_batch_size // (tr.local_batch_size * dp) > 1:
        steps = tr.global_batch_size // (tr.local_batch_size * dp)
        return f"train.py: {steps} accumulation steps reduce the gradients {steps} times; the estimate reduces them once"
    return None


cases = [json.loads(line) for line in open(cases_file) if line.strip()]
rejected = 0
for case in cases:
    why = check(case)
    if why:
        rejected += 1
        print(f"REJECTED {case['what']} (world {case['world']}): {why}", file=sys.stderr)
print(f"torchtitan {'0.2' if v02 else '0.1'} at {root}: {len(cases)} cases, {len(cases) - rejected} accepted, {rejected} rejected")
sys.exit(1 if rejected else 0)
