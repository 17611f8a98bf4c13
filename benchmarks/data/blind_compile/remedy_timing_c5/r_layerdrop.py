"""DROPPED candidate (no c5 script; see README_c5.md), planned as c5_layerdrop_random: LayerDrop decided with Python random.random() in forward.

without: `if self.training and random.random() < p: continue` per layer (fairseq/HF style).
with:    the drop decision is a tensor (torch.rand) and the layer output is gated by it.
"""

import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

B, L, D, DEPTH, P, STEPS = 16, 32, 96, 6, 0.3, 8


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.ff = nn.Sequential(nn.Linear(D, 3 * D), nn.GELU(), nn.Linear(3 * D, D))

    def forward(self, x):
        return self.ff(self.norm(x))


class Encoder(nn.Module):
    def __init__(self, tensor_drop):
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(DEPTH))
        self.head = nn.Linear(D, 1)
        self.tensor_drop = tensor_drop

    def forward(self, x):
        for layer in self.layers:
            if self.tensor_drop:
                keep = (torch.rand((), device=x.device) >= P).to(x.dtype) if self.training else 1.0
                x = x + keep * layer(x)
            else:
                if self.training and random.random() < P:
                    continue
                x = x + layer(x)
        return self.head(x.mean(1)).squeeze(-1)


def main(mode):
    torch.manual_seed(0)
    random.seed(0)
    model = Encoder(tensor_drop=(mode == "with"))
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(B, L, D, generator=g), torch.randn(B, generator=g)) for _ in range(STEPS)]
    t = time.perf_counter()
    for x, y in data:
        F.mse_loss(model(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
