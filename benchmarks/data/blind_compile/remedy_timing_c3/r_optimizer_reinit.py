"""Plain-torch timing of c3_optimizer_reinit.py: argv[1] in {orig, once}.
orig: the whole train step (forward, backward, AdamW step) is one torch.compile'd function
that takes the optimizer as an argument, and a new AdamW is built at the start of every epoch
(a 'fresh optimizer per epoch' restart), so every epoch recompiles the step for the new
optimizer object. once: the optimizer is built once before the epoch loop (its moments are
reset in place each epoch instead), and the step compiles once."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "orig"
EPOCHS, STEPS, N_FEAT, N_CLS, BATCH = 4, 3, 48, 6, 128


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
        self.out = nn.Linear(h, n_cls)

    def forward(self, x):
        x = self.inp(x)
        x = x + self.b1(x)
        x = x + self.b2(x)
        return self.out(x)


@torch.compile
def train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


torch.manual_seed(0)
model = ResMLP()
X = torch.randn(EPOCHS, STEPS, BATCH, N_FEAT)
Y = torch.randint(0, N_CLS, (EPOCHS, STEPS, BATCH))
t = time.perf_counter()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3) if MODE == "once" else None
for epoch in range(EPOCHS):
    if MODE == "orig":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for i in range(STEPS):
        train_step(model, opt, X[epoch, i], Y[epoch, i])
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
