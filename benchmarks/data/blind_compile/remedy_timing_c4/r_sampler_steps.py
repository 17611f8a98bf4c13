"""Plain-torch timing of c4_sampler_steps.py: argv[1] in {without, with}.
without: the whole Euler sampling loop `for i in range(n_steps)` is one torch.compile'd
function, and four requests use 8, 12, 16 and 10 steps, so each step count unrolls and
compiles a new graph. with: only the loop body (one Euler step: denoiser call and update) is
compiled; the loop stays in Python and the time and step size are passed as tensors, so the
body compiles once for all step counts."""

import sys
import time

import torch
import torch.nn as nn

MODE = sys.argv[1] if len(sys.argv) > 1 else "without"
DIM, HID, BATCH = 64, 256, 32
STEP_COUNTS = (8, 12, 16, 10)


class TimeEmbed(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.register_buffer("freqs", torch.exp(torch.linspace(0, 4, d // 2)))

    def forward(self, t):
        a = t * self.freqs
        return torch.cat([a.sin(), a.cos()], -1)


class Denoiser(nn.Module):
    def __init__(self, d=DIM, h=HID):
        super().__init__()
        self.temb = TimeEmbed()
        self.inp = nn.Linear(d + 32, h)
        self.mid = nn.Sequential(nn.SiLU(), nn.Linear(h, h), nn.SiLU(), nn.Linear(h, h))
        self.out = nn.Sequential(nn.SiLU(), nn.Linear(h, d))

    def forward(self, x, t):
        e = self.temb(t).expand(x.shape[0], -1)
        h = self.inp(torch.cat([x, e], -1))
        return self.out(h + self.mid(h))


torch.manual_seed(0)
model = Denoiser().eval()


@torch.compile
def sample(x, n_steps: int):
    dt = 1.0 / n_steps
    for i in range(n_steps):
        t = torch.full((1, 1), 1.0 - i * dt)
        x = x - model(x, t) * dt
    return x


@torch.compile
def euler_step(x, t, dt):
    return x - model(x, t) * dt


def sample_fixed(x, n_steps):
    dt = torch.tensor(1.0 / n_steps)
    for i in range(n_steps):
        x = euler_step(x, torch.full((1, 1), 1.0 - i / n_steps), dt)
    return x


noise = torch.randn(len(STEP_COUNTS), BATCH, DIM)
t = time.perf_counter()
with torch.no_grad():
    for k, n in enumerate(STEP_COUNTS):
        (sample if MODE == "without" else sample_fixed)(noise[k], n)
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
