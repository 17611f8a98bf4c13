"""Blind-set loop: batches copied host->device from pageable (non-pinned) memory every step.

The user keeps ready-made batches in ordinary CPU tensors (what a
``DataLoader(pin_memory=False)`` hands back) and calls ``.to('cuda')`` on them
inside every step.  A copy from pageable memory is staged by the driver and
blocks the host, so the CPU cannot run ahead and the copy cannot overlap
compute.  The remedy pins the host batches once (what ``pin_memory=True`` does
in the loader) and copies them with ``non_blocking=True``.

On CPU (smoke test) there is no host->device copy at all; pinning needs an
accelerator, so the remedy degrades to a no-op there.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide"
SOURCE_SAYS = (
    "Performance Tuning Guide: DataLoader's pin_memory defaults to False; when using a GPU "
    "it's better to set pin_memory=True, which uses pinned memory and enables faster and "
    "asynchronous memory copy from the host to the GPU (see also the pin_memory/non_blocking "
    "tutorial https://docs.pytorch.org/tutorials/intermediate/pinmem_nonblock.html)."
)
REMEDY = "pinned host memory + non_blocking=True copies"
REMEDY_WORDS = ("pin_memory", "pinned", "pin memory", "page-locked", "non_blocking", "non-blocking")


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        batch, chw, hidden, n_batches = 512, (3, 64, 64), 1024, 8  # 25 MB of fp32 pixels per batch
    else:
        batch, chw, hidden, n_batches = 8, (3, 8, 8), 32, 2
    n_in = chw[0] * chw[1] * chw[2]

    model = nn.Sequential(
        nn.Flatten(),
        nn.Linear(n_in, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, 10),
    ).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    # The "data loader": a small ring of ready-made host batches (ordinary pageable memory).
    xs = [torch.randn(batch, *chw) for _ in range(n_batches)]
    ys = [torch.randint(0, 10, (batch,)) for _ in range(n_batches)]
    non_blocking = False
    if remedy and cuda:
        # Remedy: page-locked host buffers (DataLoader(pin_memory=True) does this in its pin thread)
        # so that the H2D copy is a real async DMA that overlaps with the GPU work already queued.
        xs = [x.pin_memory() for x in xs]
        ys = [y.pin_memory() for y in ys]
        non_blocking = True
    # (on CPU: no copy happens, the remedy is a no-op)

    it = [0]

    def step() -> None:
        k = it[0] % n_batches
        it[0] += 1
        x = xs[k].to(dev, non_blocking=non_blocking)
        y = ys[k].to(dev, non_blocking=non_blocking)
        loss = F.cross_entropy(cmodel(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
