"""Blind verdict loop: a tiny MLP whose training step is pure framework overhead.

Source: https://github.com/pytorch/pytorch/issues/122029 ("AOTAutograd has high
fixed overheads").  The issue measures torch.compile's fixed per-call cost on a
microbenchmark and finds that once inputs require grad (training), a compiled
call costs about 39 us against 5.6 us eager, because of the AOTAutograd wrapper
code (guards, autograd.Function plumbing, runtime wrappers) around the graph.

This loop is the training-side version of that microbenchmark: a 2-layer MLP of
width 32 on a batch of 8.  Each op is a few microseconds, so there is nothing for
Inductor to fuse that could pay for the fixed cost of calling the compiled
forward and backward graphs.  Expected: the compiled step is not faster.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/122029"
SOURCE_SAYS = (
    "AOTAutograd adds a high fixed overhead per compiled call when inputs require grad "
    "(about 39 us compiled vs 5.6 us eager on a tiny microbenchmark), so tiny models do not gain from torch.compile."
)
EXPECT = "not_faster"


def build() -> Callable[[], None]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    cmodel = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    x = torch.randn(8, 16)
    y = torch.randn(8, 1)

    def step() -> None:
        out = cmodel(x)
        loss = F.mse_loss(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step
