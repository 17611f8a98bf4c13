"""Blind verdict loop: a model that graph-breaks on ``.item()`` inside every block.

Source: https://github.com/isayevlab/aimnetcentral/pull/109 ("Remove the graph
breaks that make torch.compile a net loss").  The PR reports torch.compile was
slower than eager on every workload (0.5x-0.85x) because the model compiled to 42
graphs with 41 breaks, nearly all ``Tensor.item()``; a compiled forward re-entered
Python ~40 times and never got the fusion that would pay for that.

Here each of 6 residual blocks reads a data-dependent Python number with
``.item()`` (a per-block clipping threshold taken from the activations' mean magnitude,
and a count of active units used as a normaliser) and uses it in Python.  Each
``.item()`` is a graph break, so the compiled forward is split into many small
graphs with eager Python in between, and every piece carries its own guard and
AOTAutograd wrapper cost.  Expected: the compiled step is not faster.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/isayevlab/aimnetcentral/pull/109"
SOURCE_SAYS = (
    "torch.compile was slower than eager (0.5x-0.85x) because the model compiled to 42 graphs with 41 breaks, "
    "almost all Tensor.item(), so the compiled forward kept re-entering Python and never got the fusion."
)
EXPECT = "not_faster"


class Block(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.lin(self.norm(x))
        # data-dependent Python scalars -> graph breaks
        limit = 3.0 * h.detach().abs().mean().item()
        h = h.clamp(-limit, limit)
        n_active = int((h > 0).sum().item())
        h = F.relu(h) * (h.shape[-1] * h.shape[0] / max(n_active, 1)) ** 0.5
        return x + 0.5 * h


class Net(nn.Module):
    def __init__(self, d: int = 64, n_blocks: int = 6) -> None:
        super().__init__()
        self.inp = nn.Linear(32, d)
        self.blocks = nn.ModuleList(Block(d) for _ in range(n_blocks))
        self.head = nn.Linear(d, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.inp(x)
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def build() -> Callable[[], None]:
    torch.manual_seed(0)
    model = Net()
    cmodel = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(32, 32)
    y = torch.randint(0, 10, (32,))

    def step() -> None:
        out = cmodel(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step
