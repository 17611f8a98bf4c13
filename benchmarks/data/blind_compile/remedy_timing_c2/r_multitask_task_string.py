"""Plain-torch timing of c2_multitask_task_string.py: argv[1] in {orig, graph_break, backbone}.
graph_break: torch._dynamo.graph_break() between backbone and head (the docs' remedy);
backbone: only model.backbone is compiled, heads run eagerly."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "orig"
TASKS = {"species": 40, "age": 5, "pose": 8, "quality": 3}


def cbr(i, o, s=1, k=3):
    return nn.Sequential(
        nn.Conv2d(i, o, k, stride=s, padding=k // 2, bias=False), nn.BatchNorm2d(o), nn.ReLU()
    )


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = cbr(3, 16)
        self.s1 = nn.Sequential(cbr(16, 24, 2), cbr(24, 24))
        self.s2 = nn.Sequential(cbr(24, 48, 2), cbr(48, 48, k=1), cbr(48, 48))
        self.s3 = nn.Sequential(cbr(48, 96, 2), cbr(96, 96, k=1), cbr(96, 96), cbr(96, 112, k=1))
        self.s4 = nn.Sequential(
            cbr(112, 160, 2), cbr(160, 160, k=1), cbr(160, 176), nn.Conv2d(176, 192, 1), nn.SiLU()
        )

    def forward(self, x):
        return self.s4(self.s3(self.s2(self.s1(self.stem(x)))))


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.heads = nn.ModuleDict(
            {
                k: nn.Sequential(nn.Linear(192, 128), nn.GELU(), nn.Linear(128, n))
                for k, n in TASKS.items()
            }
        )

    def forward(self, img, task: str):
        feats = self.backbone(img).mean((2, 3))
        if MODE == "graph_break":
            torch._dynamo.graph_break()
        return F.softmax(self.heads[task](feats), dim=-1)


torch.manual_seed(0)
model = MultiTaskNet().eval()
if MODE == "backbone":
    model.backbone.compile()
    compiled = model
else:
    compiled = torch.compile(model)
order = list(TASKS)
requests = [(torch.randn(4, 3, 96, 96), order[i % len(order)]) for i in range(8)]
t = time.perf_counter()
with torch.no_grad():
    for img, task in requests:
        compiled(img, task).argmax(-1)
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
