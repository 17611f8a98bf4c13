"""Plain-torch timing of c3_reset_per_fold.py: argv[1] in {orig, no_reset}.
orig: k-fold cross-validation; every fold calls torch._dynamo.reset() before building and
compiling a fresh model of the same class, so each fold traces and compiles the train and
eval graphs again (Inductor's on-disk FX graph cache makes folds 2..k cheaper, not free).
no_reset: the same loop without the reset; folds 2..k reuse the compiled code (same class,
same shapes; parameters are graph inputs)."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "orig"
K, N_FEAT, N_CLS, BATCH = 4, 48, 6, 128


class ResMLP(nn.Module):
    def __init__(self, d=N_FEAT, h=192, n_cls=N_CLS):
        super().__init__()
        self.inp = nn.Linear(d, h)
        self.b1 = nn.Sequential(
            nn.LayerNorm(h), nn.Linear(h, 2 * h), nn.GELU(), nn.Linear(2 * h, h)
        )
        self.b2 = nn.Sequential(
            nn.LayerNorm(h), nn.Linear(h, 2 * h), nn.GELU(), nn.Linear(2 * h, h)
        )
        self.drop = nn.Dropout(0.1)
        self.out = nn.Linear(h, n_cls)

    def forward(self, x):
        x = self.inp(x)
        x = x + self.drop(self.b1(x))
        x = x + self.drop(self.b2(x))
        return self.out(x)


torch.manual_seed(0)
X = torch.randn(K, 4, BATCH, N_FEAT)
Y = torch.randint(0, N_CLS, (K, 4, BATCH))
t = time.perf_counter()
for fold in range(K):
    if MODE == "orig":
        torch._dynamo.reset()
    model = ResMLP()
    compiled = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for i in range(3):  # train on the other folds' batches
        loss = F.cross_entropy(compiled(X[(fold + 1 + i) % K, i]), Y[(fold + 1 + i) % K, i])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    model.eval()
    with torch.no_grad():
        acc = (compiled(X[fold, 3]).argmax(-1) == Y[fold, 3]).float().mean()
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
