"""Plain-torch timing of c4_mixed_dtype_inputs.py: argv[1] in {without, with}.
without: batches arrive as float32, float64 and float16 and the compiled forward converts
them itself (`x.float()` on its first line), so each input dtype compiles forward and
backward again. with: the training loop converts each batch to float32 before calling the
compiled model, so the model compiles once."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "without"
CH, LEN, N_OUT, BATCH = 8, 128, 4, 32
SOURCES = (torch.float32, torch.float64, torch.float16)  # cached / numpy / fp16 shards


class SensorNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv1d(CH, 32, 5, padding=2),
            nn.GELU(),
            nn.Conv1d(32, 64, 5, stride=2, padding=2),
            nn.GELU(),
            nn.Conv1d(64, 64, 3, stride=2, padding=1),
            nn.GELU(),
        )
        self.head = nn.Sequential(
            nn.Flatten(),
            nn.LayerNorm(64 * LEN // 4),
            nn.Linear(64 * LEN // 4, 256),
            nn.GELU(),
            nn.Linear(256, N_OUT),
        )

    def forward(self, x):
        x = x.float()  # "the model handles any input dtype"
        return self.head(self.stem(x))


def batches():
    g = torch.Generator().manual_seed(0)
    out = []
    for _epoch in range(2):
        for dt in SOURCES:
            x = torch.randn(BATCH, CH, LEN, generator=g).to(dt)
            y = torch.randn(BATCH, N_OUT, generator=g)
            out.append((x, y))
    return out


torch.manual_seed(0)
model = SensorNet()
model.compile()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = batches()
t = time.perf_counter()
for x, y in data:
    if MODE == "with":
        x = x.float()  # one dtype before the compiled call
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
