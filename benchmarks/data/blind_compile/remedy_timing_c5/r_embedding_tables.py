"""Twin of c5_embedding_tables: one nn.Embedding per categorical column, looked up in a loop.

without: ModuleList of N_CAT embeddings, `[emb(x[:, i]) for i, emb in enumerate(self.embs)]`.
with:    one nn.Embedding holding all tables, indexed with x + per-column offsets (one lookup).
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

N_CAT, CARD, E, N_NUM, B, STEPS = 40, 50, 8, 13, 64, 4


class CTRModel(nn.Module):
    def __init__(self, fused):
        super().__init__()
        self.fused = fused
        if fused:
            self.emb = nn.Embedding(N_CAT * CARD, E)
            self.register_buffer("offsets", torch.arange(N_CAT) * CARD)
        else:
            self.embs = nn.ModuleList(nn.Embedding(CARD, E) for _ in range(N_CAT))
        self.mlp = nn.Sequential(nn.Linear(N_CAT * E + N_NUM, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, cat, num):
        if self.fused:
            e = self.emb(cat + self.offsets).flatten(1)
        else:
            e = torch.cat([emb(cat[:, i]) for i, emb in enumerate(self.embs)], dim=1)
        return self.mlp(torch.cat([e, num], dim=1)).squeeze(-1)


def main(mode):
    torch.manual_seed(0)
    model = CTRModel(fused=(mode == "with"))
    model.compile()
    opt = torch.optim.Adagrad(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(0)
    data = [
        (
            torch.randint(0, CARD, (B, N_CAT), generator=g),
            torch.randn(B, N_NUM, generator=g),
            torch.randint(0, 2, (B,), generator=g).float(),
        )
        for _ in range(STEPS)
    ]
    t = time.perf_counter()
    for cat, num, y in data:
        F.binary_cross_entropy_with_logits(model(cat, num), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
