"""A Deep-Sets point-cloud classifier trained with model.compile(). The author wrote forward
"one cloud at a time": `torch.stack([self.encode(x[i]) for i in range(x.shape[0])])`, where
encode centres the points, runs a small MLP on each point and max-pools. With a batch of 32,
Dynamo unrolls the loop into 32 copies of the encoder, forward and backward, although every op
in it already works on a whole batch.

User complaint: "my tiny point-cloud model takes ages to compile and it gets worse when I raise
the batch size. No recompiles are reported."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issue #111441 'torch.compile of simple loop takes 34 seconds' (Dynamo "
    "unrolls Python loops; tracing cost grows with the loop length); PyTorch tutorial 'Model "
    "ensembling' / torch.vmap docs (vectorize instead of a Python for-loop); pytorch/torchtitan "
    "PR #2369 (replace a per-item for-loop with batched tensor ops for torch.compile)"
)
REMEDY = (
    "Run the encoder once on the whole batch (its Linear/mean/amax ops broadcast over the batch "
    "dimension; or torch.vmap over samples) instead of a Python loop over x[i], so the graph has "
    "one copy of the encoder whatever the batch size."
)
REMEDY_WORDS = (
    "whole batch",
    "entire batch",
    "full batch",
    "over the batch",
    "batch dimension",
    "per-sample loop",
    "per sample loop",
    "loop over the batch",
    "loop over samples",
    "for i in range",
    "vmap",
    "vectoriz",
    "batched",
)
EXPECT = "remedy"
WRONG_WORDS = ("dynamic=true", "mark_dynamic", "regional")

B, N_PTS, D_IN, H, N_CLS, STEPS = 32, 64, 3, 64, 8, 4


class SetClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(D_IN, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU())
        self.rho = nn.Sequential(nn.Linear(H, H), nn.ReLU(), nn.Linear(H, N_CLS))

    def encode(self, pts):
        return self.phi(pts - pts.mean(-2, keepdim=True)).amax(-2)

    def forward(self, x):
        z = torch.stack([self.encode(x[i]) for i in range(x.shape[0])])  # one cloud at a time
        return self.rho(z)


def run(fresh: bool):
    torch.manual_seed(0)
    model = SetClassifier()
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    data = [
        (torch.randn(B, N_PTS, D_IN, generator=g), torch.randint(0, N_CLS, (B,), generator=g))
        for _ in range(STEPS)
    ]
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for x, y in data:
            F.cross_entropy(model(x), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
