"""Plain-torch timing of the control c2_train_eval_nothing.py (no remedy; reports the time
and the number of graphs: expect 2 unique graphs, train and eval)."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1, bias=False),
    nn.BatchNorm2d(16),
    nn.ReLU(),
    nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False),
    nn.BatchNorm2d(32),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Dropout(0.2),
    nn.Linear(32, 10),
)
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
train_x = torch.randn(6, 32, 3, 32, 32)
train_y = torch.randint(0, 10, (6, 32))
val_x = torch.randn(2, 32, 3, 32, 32)
val_y = torch.randint(0, 10, (2, 32))
t = time.perf_counter()
for epoch in range(2):
    model.train()
    for i in range(3):
        step = epoch * 3 + i
        loss = F.cross_entropy(compiled(train_x[step]), train_y[step])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    model.eval()
    with torch.no_grad():
        for x, y in zip(val_x, val_y, strict=True):
            (compiled(x).argmax(-1) == y).sum()
    print(f"epoch {epoch}: {time.perf_counter() - t:.1f} s", flush=True)
print(f"control: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
