"""Plain-torch timing of c2_metrics_in_compiled_step.py with (argv[1] == 'fix':
RunningMetrics.update wrapped in torch.compiler.disable) or without the remedy."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

FIX = len(sys.argv) > 1 and sys.argv[1] == "fix"
N_CLS, BATCH = 10, 16


class RunningMetrics:
    def __init__(self):
        self.steps = 0
        self.sums = dict(loss=0.0, acc=0.0, conf=0.0, entropy=0.0, ece=0.0)

    def update(self, logits, y, loss):
        self.steps += 1
        probs = logits.softmax(dim=-1)
        self.sums["loss"] += loss.item()
        self.sums["acc"] += (probs.argmax(-1) == y).float().mean().item()
        conf = probs.max(dim=-1).values
        self.sums["conf"] += conf.mean().item()
        self.sums["entropy"] += -(probs * probs.clamp_min(1e-9).log()).sum(-1).mean().item()
        correct = (probs.argmax(-1) == y).float()
        bins = (conf * 10).long().clamp(max=9)
        gap = torch.zeros(10).index_add_(0, bins, conf - correct).abs().sum() / y.numel()
        self.sums["ece"] += gap.item()


if FIX:
    RunningMetrics.update = torch.compiler.disable(RunningMetrics.update)

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1),
    nn.ReLU(),
    nn.Conv2d(16, 32, 3, stride=2, padding=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(32, N_CLS),
)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
meter = RunningMetrics()


@torch.compile
def train_step(x, y):
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    meter.update(logits.detach(), y, loss.detach())
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


xs = torch.randn(3, BATCH, 3, 32, 32)
ys = torch.randint(0, N_CLS, (3, BATCH))
t = time.perf_counter()
for step in range(3):
    train_step(xs[step], ys[step])
print(f"{'fix' if FIX else 'orig'}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
