# SPDX-FileCopyrightText: 2026 The crius developers
# SPDX-License-Identifier: GPL-2.0-or-later
"""Feed crius's Megatron-LM arguments to Megatron-LM's own argument parsing and validation.

    validate.py MEGATRON_ROOT CASES.jsonl

MEGATRON_ROOT holds a Megatron-LM release's `megatron/` package. Each line of CASES.jsonl
(tests/frameworks/cases.cpp) is {"world": N, "what": "...", "args": [...]}. For each, with
WORLD_SIZE=N: megatron.training.arguments.parse_args() and validate_args(), then
core_transformer_config_from_args() (Megatron-Core's TransformerConfig checks: layer splits,
query groups, MoE), exactly as pretrain_gpt.py runs them before it builds the model. Prints one
line per rejected case and a summary; exit 0 when every case passes, 1 when one is rejected,
2 when Megatron-LM cannot be imported with this Python and PyTorch.

Megatron-LM needs a GPU build of PyTorch >= 2; this runs on Debian's CPU PyTorch 1.13. Modules
of PyTorch >= 2 (and triton) that importing Megatron needs but its argument checks never use are
replaced by inert stand-ins, and the few GPU queries the checks make answer as an H100 would.
Nothing of Megatron's own logic is replaced.
"""
import collections
import contextlib
import importlib.abc
import importlib.machinery
import io
import json
import os
import sys
import tempfile
import types

root, cases_file = sys.argv[1], sys.argv[2]
os.environ["RANK"] = "0"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402


# ---- stand-ins for what PyTorch 1.13 lacks ----------------------------------------------------
class _Any(type):
    """A class whose attributes, calls and subscripts are all more stand-ins."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stand_in(name)

    def __call__(cls, *a, **k):
        if len(a) == 1 and not k and callable(a[0]):
            return a[0]  # used as a decorator
        if not a and k:
            return lambda f: f
        return _stand_in("instance")

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls


def _stand_in(name):
    return _Any(name, (object,), {})


class _Module(types.ModuleType):
    __path__ = []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _stand_in(name)
        setattr(self, name, value)
        return value


MISSING = ("einops", "numpy.dtypes", "torch.distributed.checkpoint", "torch.distributed.device_mesh",
           "torch.distributed.tensor", "torch.distributed._tensor", "torch.distributed._composable",
           "torch.distributed.fsdp", "torch.distributed._functional_collectives", "torch._dynamo",
           "torch.distributed._symmetric_memory", "torch.nn.attention", "torch.export", "torch.utils._pytree",
           "torch._subclasses", "torch._C._distributed_c10d", "transformer_engine", "apex", "flash_attn")
BROKEN = ("torch.distributed._shard",)  # present in 1.13 but fails to import on Python 3.11


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.startswith(("transformer_engine", "apex", "flash_attn")):
            return None  # optional in every release: let Megatron see them absent
        if name.startswith(BROKEN):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        if name.startswith(MISSING):
            try:
                if importlib.machinery.PathFinder.find_spec(name, path):
                    return None
            except Exception:
                pass
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        return _Module(spec.name)

    def exec_module(self, module):
        module.__path__ = []


sys.meta_path.insert(0, _Finder())
torch.jit.script = lambda f=None, *a, **k: f
if not hasattr(torch, "compile"):
    torch.compile = lambda f=None, *a, **k: f if f is not None else (lambda g: g)
for name in ("_coalescing_manager", "DeviceMesh", "init_device_mesh", "_make_nccl_premul_sum",
             "get_process_group_ranks"):
    if not hasattr(dist, name):
        setattr(dist, name, _stand_in(name))
import torch.optim.optimizer as _optimizer  # noqa: E402
import torch.cuda.memory as _cuda_memory  # noqa: E402

if not hasattr(_optimizer, "ParamsT"):
    _optimizer.ParamsT = object
for name in ("CUDAPluggableAllocator", "MemPool", "use_mem_pool"):
    if not hasattr(_cuda_memory, name):
        setattr(_cuda_memory, name, _stand_in(name))
if int(torch.__version__.split(".")[0]) < 2:
    # PyTorch 1.13 knows no triton; a newer PyTorch would take a stand-in for the real one.
    _triton = _Module("triton")
    _triton.__version__ = "3.0.0"
    sys.modules.setdefault("triton", _triton)
    sys.modules.setdefault("triton.language", _Module("triton.language"))
import typing  # noqa: E402

if not hasattr(typing, "override"):
    typing.override = lambda f: f
# The checks ask for the GPU's compute capability: an H100's.
torch.cuda.get_device_capability = lambda *a, **k: (9, 0)

sys.path.insert(0, root)
try:
    with contextlib.redirect_stdout(io.StringIO()):
        from megatron.training import arguments as A
except Exception as e:  # noqa: BLE001
    print(f"validate.py: cannot import Megatron-LM from {root}: {type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(2)
if hasattr(A, "get_device_arch_version"):
    A.get_device_arch_version = lambda: 9
# Transformer Engine's fused RoPE kernel, which a GPU node has and this machine does not (the
# configuration only asks whether it exists).
try:
    from megatron.core.models.common.embeddings import rope_utils

    if getattr(rope_utils, "fused_apply_rotary_pos_emb", 0) is None:
        rope_utils.fused_apply_rotary_pos_emb = lambda *a, **k: None
except ImportError:
    pass
# Megatron-Core's layout parsing asks for this process's rank.
if not dist.is_initialized():
    with tempfile.TemporaryDirectory() as rendezvous:
        dist.init_process_group("gloo", init_method="file://" + os.path.join(rendezvous, "store"), world_size=1, rank=0)

rejected = passed = 0
reasons = collections.Counter()
with open(cases_file, encoding="utf-8") as f:
    for line in f:
        case = json.loads(line)
        os.environ["WORLD_SIZE"] = str(case["world"])
        # As crius-launch sets it: 1, except for Megatron-FSDP (ZeRO-2 and 3), which refuses 1.
        if {"--use-custom-fsdp", "--use-megatron-fsdp"} & set(case["args"]):
            os.environ.pop("CUDA_DEVICE_MAX_CONNECTIONS", None)
        else:
            os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
        sys.argv = ["pretrain_gpt.py"] + case["args"]
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                args = A.parse_args()
                A.validate_args(args)
                A.core_transformer_config_from_args(args)
            passed += 1
        except BaseException as e:  # noqa: BLE001 (argparse exits; asserts; ValueError)
            rejected += 1
            reasons[f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"] += 1
            if rejected <= 5:
                print(f"REJECTED {case['what']} (world {case['world']}): {type(e).__name__}: {e}\n"
                      f"  {' '.join(case['args'])}")
for reason, n in reasons.most_common(10):
    print(f"  {n} x {reason}")
print(f"{root}: {passed} accepted, {rejected} rejected")
sys.exit(1 if rejected else 0)
