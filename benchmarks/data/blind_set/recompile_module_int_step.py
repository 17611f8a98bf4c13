"""Blind-set loop: a Python int step counter on the nn.Module, read in forward, changes every step.

The model blends each residual block in with a warm-up factor
``alpha = min(1, self.step / warmup)`` and the training loop does
``model.step += 1`` after every optimizer step.  torch.compile treats integer
attributes of an nn.Module as static and guards on their exact value, so every
step fails the guard and recompiles, until the recompile limit is hit and the
frame falls back to eager.  The remedy keeps the counter in a 0-d tensor
buffer (updated in place), so one compiled graph serves every step.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/115711"
SOURCE_SAYS = (
    "pytorch/pytorch#115711 '[torch.compile] nn.Module int/float attributes caused re-compile': a step "
    "counter stored as an int attribute of the module is guarded on its value and recompiles every step; "
    "the recompile log's hint says to make the integer dynamic "
    "(torch._dynamo.config.allow_unspec_int_on_nn_module = True) or convert it into a tensor."
)
REMEDY = "keep the step counter in a 0-d tensor buffer (or allow_unspec_int_on_nn_module)"
REMEDY_WORDS = (
    "register_buffer",
    "tensor buffer",
    "0-d tensor",
    "0-dim tensor",
    "scalar tensor",
    "as a tensor",
    "into a tensor",
    "in a tensor",
    "allow_unspec_int_on_nn_module",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class WarmupResMLP(nn.Module):
    def __init__(self, d: int, n_blocks: int, n_cls: int, warmup: int, tensor_step: bool) -> None:
        super().__init__()
        self.warmup = warmup
        self.tensor_step = tensor_step
        if tensor_step:
            self.register_buffer("step", torch.zeros((), dtype=torch.float32))
        else:
            self.step = 0  # plain Python int, as the user wrote it
        self.blocks = nn.ModuleList(
            [
                nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                for _ in range(n_blocks)
            ]
        )
        self.head = nn.Linear(d, n_cls)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.tensor_step:
            alpha = (self.step / self.warmup).clamp(max=1.0)
        else:
            alpha = min(1.0, self.step / self.warmup)
        for blk in self.blocks:
            x = x + alpha * blk(x)
        return self.head(x)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, d, n_blocks = 256, 1024, 2  # small: remedy=False recompiles every step
    else:
        B, d, n_blocks = 4, 16, 1
    model = WarmupResMLP(d, n_blocks, 10, warmup=1000, tensor_step=remedy).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(B, d, device=dev)
    y = torch.randint(0, 10, (B,), device=dev)

    def step() -> None:
        loss = F.cross_entropy(cmodel(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if remedy:
            model.step.add_(1)  # in-place on the buffer: no new guard value
        else:
            model.step += 1  # new Python int -> guard failure -> recompile next step

    return step, _make_sync(dev)
