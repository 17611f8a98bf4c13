"""Twin of c5_ensemble_loop: a deep ensemble of small MLPs evaluated in a Python loop.

without: ModuleList of N_MEMBERS MLPs, `torch.stack([m(x) for m in self.members])`.
with:    the members' weights stacked into batched tensors, one torch.baddbmm per layer.
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

N_MEMBERS, D_IN, H, B, STEPS = 16, 32, 64, 128, 4


class LoopEnsemble(nn.Module):
    def __init__(self):
        super().__init__()
        self.members = nn.ModuleList(
            nn.Sequential(
                nn.Linear(D_IN, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU(), nn.Linear(H, 1)
            )
            for _ in range(N_MEMBERS)
        )

    def forward(self, x):
        return torch.stack([m(x) for m in self.members]).squeeze(-1)


class BatchedEnsemble(nn.Module):
    def __init__(self):
        super().__init__()
        dims = ((D_IN, H), (H, H), (H, 1))
        self.w = nn.ParameterList(
            nn.Parameter(torch.randn(N_MEMBERS, i, o) / i**0.5) for i, o in dims
        )
        self.b = nn.ParameterList(nn.Parameter(torch.zeros(N_MEMBERS, 1, o)) for _, o in dims)

    def forward(self, x):
        h = x.unsqueeze(0).expand(N_MEMBERS, -1, -1)
        for j, (w, b) in enumerate(zip(self.w, self.b, strict=True)):
            h = torch.baddbmm(b, h, w)
            if j < len(self.w) - 1:
                h = F.relu(h)
        return h.squeeze(-1)


def main(mode):
    torch.manual_seed(0)
    model = BatchedEnsemble() if mode == "with" else LoopEnsemble()
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(B, D_IN, generator=g), torch.randn(B, generator=g)) for _ in range(STEPS)]
    t = time.perf_counter()
    for x, y in data:
        F.mse_loss(model(x), y.expand(N_MEMBERS, -1)).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
