"""Blind-set loop: a for-loop (single-tensor) AdamW over hundreds of small parameters.

A deep, narrow residual MLP (LayerNorm + two Linear layers per block, ~300
parameter tensors of at most 256x256) trained with
``AdamW(..., foreach=False)`` (e.g. copied from an old memory-saving recipe).
The for-loop implementation launches a handful of tiny kernels per parameter
tensor every step, so the optimizer step is launch/CPU bound and dwarfs the
compiled forward/backward.  The remedy is the fused (``fused=True``) or
multi-tensor (``foreach=True``) implementation.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/3929"
SOURCE_SAYS = (
    "pytorch/pytorch#3929 'Implement fused versions of optimizers': the optimizers are terribly slow when "
    "dealing with large sets of relatively small parameters (100x in the issue's example); torch.optim's docs "
    "now say for-loop implementations are usually slower than foreach (multi-tensor) ones, and fused is faster still."
)
REMEDY = "fused=True (or foreach=True) optimizer"
REMEDY_WORDS = (
    "foreach",
    "fused=true",
    "fused adam",
    "fused optimizer",
    "fused implementation",
    "multi-tensor",
    "multi_tensor",
    "multitensor",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class Block(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, d, n_blocks = 64, 256, 48  # 48 * 6 + 2 = 290 parameter tensors
    else:
        B, d, n_blocks = 4, 8, 4
    model = nn.Sequential(*[Block(d) for _ in range(n_blocks)], nn.Linear(d, 10)).to(dev)
    cmodel = torch.compile(model)
    if remedy:
        try:
            opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)
        except (RuntimeError, ValueError):  # a device without a fused kernel
            opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, foreach=True)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, foreach=False)
    x = torch.randn(B, d, device=dev)
    y = torch.randint(0, 10, (B,), device=dev)

    def step() -> None:
        loss = F.cross_entropy(cmodel(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
