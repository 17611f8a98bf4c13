"""DROPPED candidate (no c5 script; see README_c5.md), planned as c5_hooks_per_step: activation hooks registered and removed every step.

without: each step registers forward hooks on the blocks, runs, then removes them.
with:    the hooks are registered once, before the first compiled call, and kept.
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

B, D, DEPTH, N_CLS, STEPS = 32, 128, 4, 10, 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(64, D)
        self.blocks = nn.ModuleList(Block() for _ in range(DEPTH))
        self.head = nn.Linear(D, N_CLS)

    def forward(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h)


def main(mode):
    torch.manual_seed(0)
    model = Net()
    model.compile()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(0)
    data = [
        (torch.randn(B, 64, generator=g), torch.randint(0, N_CLS, (B,), generator=g))
        for _ in range(STEPS)
    ]
    acts = {}

    def save(name):
        def hook(_mod, _inp, out):
            acts[name] = out

        return hook

    if mode == "with":
        for i, blk in enumerate(model.blocks):
            blk.register_forward_hook(save(f"block{i}"))
    t = time.perf_counter()
    for x, y in data:
        handles = []
        if mode == "without":
            handles = [
                blk.register_forward_hook(save(f"block{i}")) for i, blk in enumerate(model.blocks)
            ]
        logits = model(x)
        reg = sum(a.pow(2).mean() for a in acts.values())
        loss = F.cross_entropy(logits, y) + 1e-4 * reg
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        for h in handles:
            h.remove()
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
