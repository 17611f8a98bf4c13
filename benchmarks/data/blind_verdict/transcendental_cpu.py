"""Blind verdict loop: an activation-heavy model built from transcendental functions, compiled on CPU.

Source: https://github.com/pytorch/pytorch/issues/110611 ("torch.compile CPU
backend is slower than eager for several transcendental functions").  The issue
benchmarks ``torch.log``, ``torch.sigmoid``, ``torch.logit`` and ``torch.tanh`` on
a 1M-element tensor and finds Inductor's generated C++ slower than the eager
ATen kernels for each of them (e.g. log 363 us eager vs 1092 us compiled on one
thread).

The loop trains a model whose cost is dominated by exactly those functions:
each of 3 blocks applies a learned per-feature gate ``sigmoid``, a ``tanh``
squashing and a ``log(1 + x*x)`` feature transform to a (256, 2048) activation,
with only per-feature parameters (no matmul until the small head).  Expected (by
the source): the compiled step is not faster.

MEASURED HERE: the source's claim does not hold on this machine with torch 2.14
(CPU, 1 thread): the compiled step is *faster* than eager (median
eager/compiled ratio 1.37, range 1.34-1.76 over 3 pairs; see measured.json),
so EXPECT is set to "faster".  A direct check of the issue's own micro-benchmark (1M elements, 1 thread) on the same machine gave log 766 us eager
vs 285 us compiled, sigmoid 220 vs 222 us, tanh 2109 vs 1018 us: Inductor's
vectorised transcendentals are no longer slower than ATen's, and in this
model the sigmoid/tanh/log and their backward arithmetic are also fused.  The
loop is kept as a case where a public "compile is slower" report no longer
applies.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/110611"
SOURCE_SAYS = (
    "Inductor's CPU code for transcendental functions (log, sigmoid, logit, tanh) on a 1M-element tensor was "
    "slower than eager, e.g. log 363 us eager vs 1092 us compiled on one thread."
)
EXPECT = "faster"  # measured; the source expected "not_faster" (see docstring)


class Block(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.a = nn.Parameter(torch.ones(d))
        self.b = nn.Parameter(torch.zeros(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = torch.sigmoid(self.a * x + self.b)
        t = torch.tanh(x)
        lg = torch.log(1.0 + x * x)
        return g * t + (1.0 - g) * lg


def build() -> Callable[[], None]:
    torch.manual_seed(0)
    d = 2048
    model = nn.Sequential(*[Block(d) for _ in range(3)], nn.Linear(d, 8))
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
