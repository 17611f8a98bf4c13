"""DROPPED candidate (no c5 script; see README_c5.md), planned as c5_saliency_requires_grad: input requires_grad toggled on logging steps.

without: every other step the input gets requires_grad_(True) to log an input-gradient
         saliency norm, through the same compiled model.
with:    the logging step computes the saliency with the eager forward (model.forward, which bypasses the compiled __call__),
         so the compiled model always sees inputs with requires_grad=False.
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

B, C, S, N_CLS, STEPS = 16, 3, 32, 10, 6


def make():
    return nn.Sequential(
        nn.Conv2d(C, 32, 3, padding=1),
        nn.GELU(),
        nn.Conv2d(32, 64, 3, stride=2, padding=1),
        nn.GELU(),
        nn.Conv2d(64, 64, 3, stride=2, padding=1),
        nn.GELU(),
        nn.Flatten(),
        nn.Linear(64 * (S // 4) ** 2, 128),
        nn.GELU(),
        nn.Linear(128, N_CLS),
    )


def main(mode):
    torch.manual_seed(0)
    model = make()
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    data = [
        (torch.randn(B, C, S, S, generator=g), torch.randint(0, N_CLS, (B,), generator=g))
        for _ in range(STEPS)
    ]
    t = time.perf_counter()
    for i, (x, y) in enumerate(data):
        log_step = i % 2 == 1
        if log_step and mode == "with":
            xs = x.clone().requires_grad_(True)
            F.cross_entropy(model.forward(xs), y).backward(inputs=[xs])
            _sal = xs.grad.abs().mean()
        if log_step and mode == "without":
            x = x.clone().requires_grad_(True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if log_step and mode == "without":
            _sal = x.grad.abs().mean()
        opt.step()
        opt.zero_grad(set_to_none=True)
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
