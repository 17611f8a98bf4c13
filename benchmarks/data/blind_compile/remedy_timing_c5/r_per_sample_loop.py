"""Twin of c5_per_sample_loop: forward encodes each sample of the batch in a Python loop.

without: `torch.stack([self.encode(x[i]) for i in range(x.shape[0])])` (B unrolled copies).
with:    the encoder runs once on the whole batch (its ops already broadcast over the batch).
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

B, N_PTS, D_IN, H, N_CLS, STEPS = 32, 64, 3, 64, 8, 4


class SetClassifier(nn.Module):
    def __init__(self, batched):
        super().__init__()
        self.batched = batched
        self.phi = nn.Sequential(nn.Linear(D_IN, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU())
        self.rho = nn.Sequential(nn.Linear(H, H), nn.ReLU(), nn.Linear(H, N_CLS))

    def encode(self, pts):
        return self.phi(pts - pts.mean(-2, keepdim=True)).amax(-2)

    def forward(self, x):
        if self.batched:
            z = self.encode(x)
        else:
            z = torch.stack([self.encode(x[i]) for i in range(x.shape[0])])
        return self.rho(z)


def main(mode):
    torch.manual_seed(0)
    model = SetClassifier(batched=(mode == "with"))
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    data = [
        (torch.randn(B, N_PTS, D_IN, generator=g), torch.randint(0, N_CLS, (B,), generator=g))
        for _ in range(STEPS)
    ]
    t = time.perf_counter()
    for x, y in data:
        F.cross_entropy(model(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
