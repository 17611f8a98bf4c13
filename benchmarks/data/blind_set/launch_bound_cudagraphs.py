"""Blind-set loop: a small model at a small batch size, bound by kernel-launch / Python overhead.

A 12-block residual MLP (width 256) trained at batch 32: every kernel of the
compiled forward and backward finishes in a few microseconds, so the step time
is set by the CPU launching them (inductor's wrapper, autograd, the
optimizer).  The model is compiled with the default mode; the remedy is
``torch.compile(mode="reduce-overhead")``, which records the compiled
forward/backward into CUDA graphs and replays each with a single launch.

On CPU cudagraphs do not apply and inductor skips them, so the remedy is a
no-op there.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/docs/stable/generated/torch.compile.html"
SOURCE_SAYS = (
    "torch.compile docs: mode='reduce-overhead' reduces the overhead of Python with CUDA graphs and is useful "
    "for small batches (the Tuning Guide's 'Use CUDA Graphs' section says the same: keep computation on the "
    "GPU without paying the extra cost of kernel launches)."
)
REMEDY = 'torch.compile(mode="reduce-overhead") (CUDA graphs)'
REMEDY_WORDS = (
    "reduce-overhead",
    "reduce_overhead",
    "cuda graph",
    "cudagraph",
    "cuda-graph",
    "cuda_graph",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class SmallNet(nn.Module):
    def __init__(self, d_in: int, d: int, n_blocks: int, n_cls: int) -> None:
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.blocks = nn.ModuleList(
            [nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d), nn.GELU()) for _ in range(n_blocks)]
        )
        self.out = nn.Linear(d, n_cls)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        for b in self.blocks:
            h = h + b(h)
        return F.cross_entropy(self.out(h), y)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, d_in, d, n_blocks = 32, 64, 256, 12
    else:
        B, d_in, d, n_blocks = 4, 8, 16, 2
    model = SmallNet(d_in, d, n_blocks, 10).to(dev)
    if remedy:
        cmodel = torch.compile(model, mode="reduce-overhead")
    else:
        cmodel = torch.compile(model)
    # fused AdamW in both variants so the optimizer is not the bottleneck under study
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    x = torch.randn(B, d_in, device=dev)
    y = torch.randint(0, 10, (B,), device=dev)

    def step() -> None:
        if remedy:
            torch.compiler.cudagraph_mark_step_begin()
        loss = cmodel(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
