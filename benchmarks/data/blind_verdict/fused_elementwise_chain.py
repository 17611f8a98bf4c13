"""Blind verdict loop (negative control): a long chain of cheap elementwise ops on a large activation.

Source: https://docs.pytorch.org/docs/stable/torch.compiler_get_started.html
("Getting Started" with torch.compile).  The page explains that pointwise ops in
eager mode are suboptimal because each one reads a tensor from memory and
writes the result back, and that fusion is "the single most important
optimization that inductor performs": a chain of pointwise ops becomes one
read and one write.

The model is memory-bound and has no matmul except a tiny head: 4 blocks, each
a hand-written LayerNorm-free "scale, shift, squared-ReLU, leaky mix, clamp,
residual" chain of ~10 arithmetic ops with per-feature parameters, on a
(256, 2048) activation (2 MiB).  Eager runs every op (and every backward op) as
a separate pass over memory; Inductor fuses each block into a few loops.
Expected: the compiled step is clearly faster (negative control).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/docs/stable/torch.compiler_get_started.html"
SOURCE_SAYS = (
    "Pointwise ops in eager mode each read and write memory; fusion is the single most important optimization "
    "Inductor performs, turning a chain of reads/writes into one read and one write."
)
EXPECT = "faster"


class Block(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(d))
        self.shift = nn.Parameter(torch.zeros(d))
        self.mix = nn.Parameter(torch.full((d,), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * self.scale + self.shift
        r = F.relu(h)
        h2 = r * r
        leaky = torch.where(h > 0, h, 0.01 * h)
        h = self.mix * h2 + (1.0 - self.mix) * leaky
        h = h.clamp(-4.0, 4.0)
        return 0.7 * x + 0.3 * h


def build() -> Callable[[], None]:
    torch.manual_seed(0)
    d = 2048
    model = nn.Sequential(*[Block(d) for _ in range(4)], nn.Linear(d, 8))
    cmodel = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(256, d)
    y = torch.randn(256, 8)

    def step() -> None:
        out = cmodel(x)
        loss = F.mse_loss(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step
