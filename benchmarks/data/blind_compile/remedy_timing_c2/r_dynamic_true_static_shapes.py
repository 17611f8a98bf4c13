"""Plain-torch timing of c2_dynamic_true_static_shapes.py: argv[1] in {orig (dynamic=True),
none (default dynamic=None), false (dynamic=False)}."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "orig"
DYN = {"orig": True, "none": None, "false": False}[MODE]


def cbr(i, o, s=1, k=3):
    return nn.Sequential(
        nn.Conv2d(i, o, k, stride=s, padding=k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU()
    )


torch.manual_seed(0)
model = nn.Sequential(
    cbr(3, 16),
    cbr(16, 32, 2),
    cbr(32, 32),
    cbr(32, 64, 2),
    cbr(64, 64, k=1),
    cbr(64, 96, 2),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(96, 10),
)
compiled = torch.compile(model, dynamic=DYN)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
xs = torch.randn(4, 16, 3, 32, 32)
ys = torch.randint(0, 10, (4, 16))
t = time.perf_counter()
for step in range(4):
    loss = F.cross_entropy(compiled(xs[step]), ys[step])
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
