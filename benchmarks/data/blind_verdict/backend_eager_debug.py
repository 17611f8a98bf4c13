"""Blind verdict loop: the model is compiled with a debugging backend (``backend="eager"``).

Source: https://github.com/pytorch/pytorch/issues/121370 ("Compiling
lumiere-pytorch in backend='aot_eager' is significantly faster than
backend='eager'").  The issue reports that with ``backend="eager"`` the compiled
model ran at 0.95x of plain eager: that backend only captures the FX graph with
Dynamo and runs it op by op, so it generates no fused code and adds guard and
frame-evaluation overhead.

Users copy ``backend="eager"`` from troubleshooting snippets (it is the first
thing the torch.compile troubleshooting docs suggest to bisect a problem) and
leave it in.  This loop compiles a small residual MLP (width 128, batch 64, four
blocks with hand-written RMSNorm) that way.  Expected: the compiled step is not
faster, since nothing is fused and Dynamo's per-call cost is added.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/121370"
SOURCE_SAYS = (
    "With torch.compile(backend='eager') the model ran at only 0.95x of eager (no speed-up), while aot_eager "
    "behaved differently: the eager backend just replays the captured graph op by op."
)
EXPECT = "not_faster"


class Block(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
        h = self.fc2(F.silu(self.fc1(h)))
        return x + h


def build() -> Callable[[], None]:
    torch.manual_seed(0)
    d = 128
    model = nn.Sequential(*[Block(d) for _ in range(4)], nn.Linear(d, 10))
    cmodel = torch.compile(model, backend="eager")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(64, d)
    y = torch.randint(0, 10, (64,))

    def step() -> None:
        out = cmodel(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step
