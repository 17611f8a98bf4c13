"""A click-through-rate model (Criteo-style: 40 categorical columns + 13 numeric ones) trained
with model.compile(). Every categorical column has its own small nn.Embedding in a ModuleList,
and forward looks them up one by one in a Python loop and concatenates the results. Dynamo
unrolls the loop, so the graph holds 40 separate embedding lookups (and 40 embedding
backward ops) instead of one, and the compile of this small model takes several times longer
than its arithmetic deserves.

User complaint: "the model is two Linear layers and some embeddings, yet torch.compile takes
longer than for my transformer. Shapes are static and it compiles only once."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issue #111441 'torch.compile of simple loop takes 34 seconds' (Dynamo "
    "unrolls Python loops; compile cost grows with the number of iterations); "
    "meta-pytorch/torchrec PR #450 'Added fused_embedding_modules to tutorial' (group many "
    "embedding tables into one fused module); DLRM / torchrec practice of one table with "
    "per-feature offsets"
)
REMEDY = (
    "Store all the per-column tables in one nn.Embedding (rows concatenated) and look every "
    "column up at once with `cat_ids + offsets` (a per-column offset buffer), so the graph has a "
    "single embedding op instead of one per column and compiles much faster."
)
REMEDY_WORDS = (
    "one nn.embedding",
    "single nn.embedding",
    "one embedding",
    "single embedding",
    "one table",
    "single table",
    "one big table",
    "concatenat",
    "fuse the embedding",
    "fused embedding",
    "merge the embedding",
    "merge embedding",
    "offsets",
    "embeddingbag",
    "batch the lookup",
    "vectoriz",
)
EXPECT = "remedy"
WRONG_WORDS = ("dynamic=true", "mark_dynamic", "regional")

N_CAT, CARD, E, N_NUM, B, STEPS = 40, 50, 8, 13, 64, 4


class CTRModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embs = nn.ModuleList(nn.Embedding(CARD, E) for _ in range(N_CAT))
        self.mlp = nn.Sequential(nn.Linear(N_CAT * E + N_NUM, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, cat, num):
        e = torch.cat([emb(cat[:, i]) for i, emb in enumerate(self.embs)], dim=1)
        return self.mlp(torch.cat([e, num], dim=1)).squeeze(-1)


def run(fresh: bool):
    torch.manual_seed(0)
    model = CTRModel()
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
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for cat, num, y in data:
            F.binary_cross_entropy_with_logits(model(cat, num), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
