"""Blind-set loop: gradient-norm clipping written as a Python loop over the parameters.

A deep, narrow residual MLP (48 blocks, ~290 small parameter tensors) is
trained with a fused AdamW, but the user clips the global gradient norm by
hand: one loop computes ``p.grad.pow(2).sum()`` per parameter and adds it up,
a second loop multiplies every ``p.grad`` by the clip coefficient.  That is
several tiny kernel launches (and autograd-free eager dispatches) per
parameter tensor, well over a thousand per step, so the step is launch/CPU
bound while the compiled forward/backward takes only a few ms.  The remedy is
``torch.nn.utils.clip_grad_norm_(params, max_norm, foreach=True)``, which
computes all norms with ``torch._foreach_norm`` and scales all gradients with
one multi-tensor multiply (no host sync either way).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/docs/stable/generated/torch.nn.utils.clip_grad_norm_.html"
SOURCE_SAYS = (
    "torch.nn.utils.clip_grad_norm_ docs: clips the gradient norm of an iterable of parameters, computed over "
    "all gradients together as if concatenated into one vector; its foreach option uses the faster "
    "foreach-based implementation (the default for CUDA tensors)."
)
REMEDY = (
    "torch.nn.utils.clip_grad_norm_(..., foreach=True) instead of the per-parameter Python loop"
)
REMEDY_WORDS = (
    "clip_grad_norm",
    "clip_grad_norm_(",
    "get_total_norm",
    "clip_grads_with_norm",
    "_foreach_norm",
    "_foreach_mul",
    "foreach=true",
    "foreach implementation",
    "foreach-based",
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
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(
        params, lr=3e-4, weight_decay=0.1, fused=cuda, foreach=None if cuda else True
    )
    x = torch.randn(B, d, device=dev)
    y = torch.randint(0, 10, (B,), device=dev)
    max_norm = 1.0

    def step() -> None:
        loss = F.cross_entropy(cmodel(x), y)
        loss.backward()
        if remedy:
            torch.nn.utils.clip_grad_norm_(params, max_norm, foreach=True)
        else:
            total_sq = torch.zeros((), device=dev)
            for p in params:  # per-parameter norms, one by one
                total_sq = total_sq + p.grad.pow(2).sum()
            coef = torch.clamp(max_norm / (total_sq.sqrt() + 1e-6), max=1.0)
            for p in params:  # per-parameter scaling, one by one
                p.grad.mul_(coef)
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
