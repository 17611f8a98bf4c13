"""Blind-set loop: a norm/elementwise-heavy MLP run in eager mode (the user did not compile).

Each block is a hand-written RMSNorm, a sigmoid gate, a small bottleneck adapter
with a hand-written tanh-GELU and a scaled residual: a dozen pointwise/reduction
ops per block on a (tokens x 1024) activation, each of which is a separate
eager kernel reading and writing the whole tensor from HBM (forward and
backward).  The step is memory-bandwidth bound.  The remedy is the
compilation itself: ``torch.compile`` (inductor) fuses those chains into a
few kernels.  This is the one loop where remedy=False is *not* compiled.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://pytorch.org/docs/stable/torch.compiler_get_started.html"
SOURCE_SAYS = (
    "torch.compiler 'Getting Started': pointwise ops in eager mode are suboptimal because each one reads a tensor "
    "from memory and writes it back; the single most important optimization inductor performs is fusion, crucial "
    "on GPUs where the bottleneck is memory bandwidth (the Tuning Guide's 'Fuse operations' section recommends "
    "torch.compile for the same reason)."
)
REMEDY = "torch.compile the model (inductor kernel fusion)"
REMEDY_WORDS = (
    "torch.compile",
    "compile the model",
    "compiling the model",
    "inductor",
    "fuse",
    "fusion",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class NormGateBlock(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.norm_w = nn.Parameter(torch.ones(d))
        self.gate_w = nn.Parameter(torch.ones(d))
        self.gate_b = nn.Parameter(torch.zeros(d))
        self.res_scale = nn.Parameter(torch.full((d,), 0.1))
        self.fc1 = nn.Linear(d, d // 8)  # bottleneck adapter: the matmuls are cheap,
        self.fc2 = nn.Linear(d // 8, d)  # the full-width elementwise chain is not

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.norm_w  # RMSNorm
        h = h * torch.sigmoid(h * self.gate_w + self.gate_b)  # gate
        a = self.fc1(h)
        a = 0.5 * a * (1.0 + torch.tanh(0.7978845608 * (a + 0.044715 * a * a * a)))  # tanh-GELU
        h = h + self.fc2(a)
        return x + self.res_scale * h


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        tokens, d, n_blocks = 16384, 1024, 6
    else:
        tokens, d, n_blocks = 8, 16, 2
    model = nn.Sequential(*[NormGateBlock(d) for _ in range(n_blocks)], nn.Linear(d, 16)).to(dev)
    run = torch.compile(model) if remedy else model  # the user runs it eagerly
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda)
    x = torch.randn(tokens, d, device=dev)
    y = torch.randint(0, 16, (tokens,), device=dev)

    def step() -> None:
        loss = F.cross_entropy(run(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
