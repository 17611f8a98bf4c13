"""DROPPED probe (see README_c5.md): a plain (non-buffer) tensor attribute reassigned on the module every step.

without: self.noise_mask = new tensor each step (plain attribute).
with:    registered buffer, updated in place with copy_.
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

B, D, STEPS = 32, 128, 8


class Net(nn.Module):
    def __init__(self, buf):
        super().__init__()
        self.f = nn.Sequential(
            nn.Linear(D, 256), nn.GELU(), nn.Linear(256, D), nn.GELU(), nn.Linear(D, 1)
        )
        if buf:
            self.register_buffer("mask", torch.ones(D))
        else:
            self.mask = torch.ones(D)

    def forward(self, x):
        return self.f(x * self.mask).squeeze(-1)


def main(mode):
    torch.manual_seed(0)
    model = Net(mode == "with")
    model.compile()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    t = time.perf_counter()
    for _ in range(STEPS):
        new = (torch.rand(D) > 0.1).float()
        if mode == "with":
            model.mask.copy_(new)
        else:
            model.mask = new
        F.mse_loss(model(torch.randn(B, D)), torch.randn(B)).backward()
        opt.step()
        opt.zero_grad()
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
