"""Blind-set loop: gradient accumulation under DDP without ``no_sync`` (2 ranks).

Each training step accumulates ACCUM micro-batches and then calls
``optimizer.step()`` once.  The user calls ``loss.backward()`` on the DDP model
for every micro-batch, so DDP all-reduces the full gradient ACCUM times per
optimizer step although only the last all-reduce is needed.  The remedy wraps
the first ACCUM-1 backward passes in ``ddp_model.no_sync()``.

Runner contract: ``torch.distributed`` is already initialised (NCCL on GPU,
gloo on CPU) with ``WORLD`` ranks; ``build(device, remedy, rank, world)`` is
called on each rank.  If ``device`` is a bare "cuda", rank r uses cuda:r.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

WORLD = 2
ACCUM = 8

SOURCE = "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide"
SOURCE_SAYS = (
    "Performance Tuning Guide, 'Skip unnecessary all-reduce if training with DistributedDataParallel and "
    "gradient accumulation': DDP all-reduces after every backward, but with accumulation over N steps only "
    "the last one is needed; apply the no_sync() context manager to the first N-1 iterations "
    "(API added in pytorch/pytorch#21736)."
)
REMEDY = "ddp_model.no_sync() for the first ACCUM-1 micro-batches"
REMEDY_WORDS = ("no_sync", "no-sync", "no_backward_sync", "skip the all-reduce", "skip all-reduce")


def _resolve(device: str, rank: int) -> torch.device:
    dev = torch.device(device)
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", rank)
    if dev.type == "cuda":
        torch.cuda.set_device(dev)
    return dev


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(
    device: str, remedy: bool, rank: int, world: int
) -> tuple[Callable[[], None], Callable[[], None]]:
    assert dist.is_available() and dist.is_initialized(), "runner must init torch.distributed first"
    dev = _resolve(device, rank)
    cuda = dev.type == "cuda"
    torch.manual_seed(0)  # same initial weights on every rank
    if cuda:
        micro_b, d, n_layers = (
            16,
            2048,
            8,
        )  # ~34M params -> ~134 MB of fp32 gradients per all-reduce
    else:
        micro_b, d, n_layers = 2, 16, 2
    layers: list[nn.Module] = []
    for _ in range(n_layers):
        layers += [nn.Linear(d, d), nn.GELU()]
    model = nn.Sequential(*layers, nn.Linear(d, 10)).to(dev)
    ddp = DDP(model, device_ids=[dev.index] if cuda else None)
    cmodel = torch.compile(ddp)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    g = torch.Generator(device="cpu").manual_seed(1234 + rank)  # different data per rank
    xs = [torch.randn(micro_b, d, generator=g).to(dev) for _ in range(ACCUM)]
    ys = [torch.randint(0, 10, (micro_b,), generator=g).to(dev) for _ in range(ACCUM)]

    def step() -> None:
        for i in range(ACCUM):
            last = i == ACCUM - 1
            ctx = ddp.no_sync() if (remedy and not last) else contextlib.nullcontext()
            with ctx:
                loss = F.cross_entropy(cmodel(xs[i]), ys[i]) / ACCUM
                loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
