"""Blind-set loop: a float dropout rate passed as a Python float that changes every step.

The user anneals dropout ("early dropout" style schedule) and passes the new
rate into the compiled model each step: ``model(x, p=schedule(step))``, which
reaches ``F.dropout(x, p)``.  A plain float multiplier would be made dynamic
after one recompile, but dropout's ``p`` must be a concrete Python float, so
dynamo guards on its value and recompiles every step (up to the recompile
limit, then falls back to eager).  The remedy follows the documentation's
"wrap constants with tensors": pass the rate as a 0-d device tensor and apply
the dropout mask with tensor arithmetic, so a single graph serves every step.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html"
SOURCE_SAYS = (
    "'Dealing with Recompilations' / 'Wrapping Constants with Tensors': by default int/float variables are "
    "treated as constants and guarded on their exact value, so a float that changes every call recompiles "
    "every call; wrap such values in tensors so only the tensor's metadata is guarded."
)
REMEDY = "pass the changing float as a 0-d tensor (wrap constants with tensors)"
REMEDY_WORDS = (
    "0-d tensor",
    "0-dim tensor",
    "scalar tensor",
    "as a tensor",
    "into a tensor",
    "in a tensor",
    "torch.tensor(",
    "wrap it in a tensor",
    "tensor argument",
    "tensor instead",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class DropMLP(nn.Module):
    def __init__(self, d: int, n_layers: int, n_cls: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(n_layers)])
        self.norms = nn.ModuleList([nn.LayerNorm(d) for _ in range(n_layers)])
        self.head = nn.Linear(d, n_cls)

    def forward(self, x: torch.Tensor, p) -> torch.Tensor:
        for lin, ln in zip(self.layers, self.norms, strict=True):
            h = F.gelu(lin(ln(x)))
            if isinstance(p, torch.Tensor):
                keep = (torch.rand_like(h) >= p).to(h.dtype)
                h = h * keep / (1.0 - p)
            else:
                h = F.dropout(h, p=p, training=self.training)
            x = x + h
        return self.head(x)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, d, n_layers = 256, 1024, 2  # small: remedy=False recompiles every step
    else:
        B, d, n_layers = 4, 16, 1
    model = DropMLP(d, n_layers, 10).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(B, d, device=dev)
    y = torch.randint(0, 10, (B,), device=dev)
    p_t = torch.zeros((), device=dev)  # remedy: the rate lives in a device scalar
    it = [0]

    def schedule(i: int) -> float:
        return 0.1 * max(0.0, 1.0 - i / 1000.0)  # linear decay of the dropout rate

    def step() -> None:
        p = schedule(it[0])
        it[0] += 1
        if remedy:
            p_t.fill_(p)
            out = cmodel(x, p_t)
        else:
            out = cmodel(x, p)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
