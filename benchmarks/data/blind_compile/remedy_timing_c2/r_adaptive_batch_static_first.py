"""Plain-torch timing of c2_adaptive_batch_static_first.py: argv[1] in {orig, mark_dynamic,
eager_then_compile, dynamic_true}."""

import sys
import time

import torch
import torch.nn as nn

MODE = sys.argv[1] if len(sys.argv) > 1 else "orig"
BATCH_SIZES = (6, 3, 8, 5, 2, 7, 4, 6)


def cbr(i, o, s=1, k=3):
    return nn.Sequential(
        nn.Conv2d(i, o, k, stride=s, padding=k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU()
    )


torch.manual_seed(0)
model = nn.Sequential(
    cbr(3, 16),
    cbr(16, 24, 2),
    cbr(24, 24),
    cbr(24, 48, 2),
    cbr(48, 48, k=1),
    cbr(48, 48),
    cbr(48, 96, 2),
    cbr(96, 96, k=1),
    cbr(96, 160, 2),
    nn.Conv2d(160, 192, 1),
    nn.SiLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(192, 20),
).eval()
compiled = torch.compile(model, dynamic=True if MODE == "dynamic_true" else None)
if MODE == "eager_then_compile":
    torch.compiler.set_stance("eager_then_compile")
batches = [torch.randn(n, 3, 64, 64) for n in BATCH_SIZES]
if MODE == "mark_dynamic":
    torch._dynamo.mark_dynamic(batches[0], 0)
t = time.perf_counter()
with torch.no_grad():
    for batch in batches:
        (torch.sigmoid(compiled(batch)) > 0.5).sum()
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
