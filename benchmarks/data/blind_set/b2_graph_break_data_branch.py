"""Blind-set loop: a data-dependent Python ``if`` on a tensor inside the compiled forward.

Each residual block rescales its update when it gets too large:
``if h.abs().amax() > self.limit: h = h * (self.limit / h.abs().amax())``.
The ``if`` needs the tensor's value in Python, so dynamo cannot trace it: it
graph-breaks at every block.  The compiled model falls apart into one small
graph per block (and as many backward graphs), each ``if`` forces a
GPU->CPU sync, and inductor cannot fuse across the breaks.  With 12 narrow
blocks the step is dominated by the syncs and the per-graph overhead.  The
remedy writes the same rescaling without Python control flow
(``h * torch.clamp(limit / amax, max=1)``, i.e. a ``torch.where``-style
branch-free form), so the model compiles into one graph (``fullgraph=True``
would have flagged the break).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/docs/stable/compile/programming_model.common_graph_breaks.html"
SOURCE_SAYS = (
    "torch.compile docs 'Common Graph Breaks' / 'Data-dependent operations': torch.compile graph breaks on "
    "data-dependent control flow (an if on a tensor value) and on direct data access such as .item(); the "
    "workaround is to avoid the data-dependent operation, e.g. rewrite the branch with torch.where or torch.cond."
)
REMEDY = "remove the data-dependent if (branch-free torch.where/clamp rescaling) so the forward is one graph"
REMEDY_WORDS = (
    "graph break",
    "graph-break",
    "graphbreak",
    "torch.where",
    "torch.cond",
    "fullgraph",
    "branch-free",
    "branchless",
    "without the if",
    "data-dependent control flow",
    "data-dependent branch",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class Block(nn.Module):
    def __init__(self, d: int, branch_free: bool, limit: float = 4.0) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.branch_free = branch_free
        self.limit = limit

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc2(F.gelu(self.fc1(self.ln(x))))
        amax = h.detach().abs().amax()
        if self.branch_free:
            h = h * torch.clamp(self.limit / amax, max=1.0)
        elif amax > self.limit:  # Python branch on a tensor value -> graph break + sync
            h = h * (self.limit / amax)
        return x + h


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, d, n_blocks, n_cls = 64, 512, 12, 10
    else:
        B, d, n_blocks, n_cls = 4, 16, 2, 10
    model = nn.Sequential(
        *[Block(d, branch_free=remedy) for _ in range(n_blocks)], nn.Linear(d, n_cls)
    ).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda)
    x = torch.randn(B, d, device=dev)
    y = torch.randint(0, n_cls, (B,), device=dev)

    def step() -> None:
        loss = F.cross_entropy(cmodel(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
