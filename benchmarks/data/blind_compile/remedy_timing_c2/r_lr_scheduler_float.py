"""Plain-torch timing of c2_lr_scheduler_float.py, with (argv[1] == 'fix') or without the remedy
(lr and gamma wrapped in tensors). Prints wall time of the 8 steps and dynamo's graph counters."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

FIX = len(sys.argv) > 1 and sys.argv[1] == "fix"
N_FEAT, N_CLS, BATCH = 32, 10, 64

torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(N_FEAT, 128),
    nn.LayerNorm(128),
    nn.GELU(),
    nn.Linear(128, 128),
    nn.GELU(),
    nn.Dropout(0.1),
    nn.Linear(128, N_CLS),
)
lr = torch.tensor(3e-3) if FIX else 3e-3
gamma = torch.tensor(0.95) if FIX else 0.95
opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=gamma)


@torch.compile
def train_step(x, y):
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
    return loss


xs = torch.randn(8, BATCH, N_FEAT)
ys = torch.randint(0, N_CLS, (8, BATCH))
t = time.perf_counter()
for step in range(8):
    train_step(xs[step], ys[step])
print(f"{'fix' if FIX else 'orig'}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
