"""Plain-torch timing of the control c3_distill_two_models_nothing.py (no remedy: argv[1]
is only echoed)."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "orig"
N_FEAT, N_CLS, BATCH, T = 64, 10, 256, 4.0
torch.manual_seed(0)
teacher = nn.Sequential(
    nn.Linear(N_FEAT, 512),
    nn.BatchNorm1d(512),
    nn.ReLU(),
    nn.Dropout(0.2),
    nn.Linear(512, 256),
    nn.BatchNorm1d(256),
    nn.ReLU(),
    nn.Linear(256, N_CLS),
).eval()
for p in teacher.parameters():
    p.requires_grad_(False)
student = nn.Sequential(
    nn.Linear(N_FEAT, 96), nn.LayerNorm(96), nn.GELU(), nn.Dropout(0.1), nn.Linear(96, N_CLS)
)
teacher.compile()
student.compile()
opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
xs, ys = torch.randn(4, BATCH, N_FEAT), torch.randint(0, N_CLS, (4, BATCH))
t = time.perf_counter()
for step in range(4):
    with torch.no_grad():
        soft = F.softmax(teacher(xs[step]) / T, dim=-1)
    logits = student(xs[step])
    kd = F.kl_div(F.log_softmax(logits / T, dim=-1), soft, reduction="batchmean") * T * T
    loss = 0.7 * kd + 0.3 * F.cross_entropy(logits, ys[step])
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
