"""A small flow-matching / diffusion-style generator served behind an API. The whole sampler
(the Euler loop over `n_steps` denoiser calls) is one torch.compile'd function, and every
request picks its own quality level, i.e. its own number of sampling steps. Dynamo unrolls
the Python `for i in range(n_steps)` loop, so `n_steps` is burned into the graph (a guard
`n_steps == 8`), and every new step count traces and compiles a new, longer unrolled graph.

User complaint: "the first request at each new 'steps' setting hangs for many seconds, and
TORCH_LOGS=recompiles shows sample() recompiling on n_steps. The denoiser is tiny - why is
compiling so slow and why does it keep happening?"
"""

import compilescope
import torch
import torch.nn as nn

SOURCE = (
    "pytorch/pytorch issue #111441 'torch.compile of simple loop takes 34 seconds' (lezcano: "
    "'Dynamo unrolls loops ... what we figured that often works best is to just compile the "
    "body of the loop'); pytorch/pytorch issue #114293 'Recompilation triggered at each step "
    "of the loop' (guards `L['end'] == 10` from `range(start+1, end)`); docs 'Where to apply "
    "torch.compile?' (compile the step, not the loop)"
)
REMEDY = (
    "Do not compile the whole sampling loop: compile only the loop body (one Euler step / the "
    "denoiser call) and keep the `for i in range(n_steps)` loop in plain Python, passing the "
    "time as a tensor. The body then compiles once and is reused for every step count."
)
REMEDY_WORDS = (
    "loop body",
    "body of the loop",
    "compile the step",
    "compile only the step",
    "compile the denoiser",
    "compile only the denoiser",
    "single euler step",
    "one euler step",
    "sampling step",
    "per-step function",
    "outside the compiled",
    "out of the compiled",
    "loop in python",
    "python loop outside",
    "move the loop",
)
EXPECT = "remedy"
WRONG_WORDS = ("recompile_limit", "cache_size_limit")

DIM, HID, BATCH = 64, 256, 32
STEP_COUNTS = (8, 12, 16, 10)  # quality levels chosen by four requests


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


def make_sampler(model):
    @torch.compile
    def sample(x, n_steps: int):
        dt = 1.0 / n_steps
        for i in range(n_steps):
            t = torch.full((1, 1), 1.0 - i * dt)
            x = x - model(x, t) * dt
        return x

    return sample


def run(fresh: bool):
    torch.manual_seed(0)
    model = Denoiser().eval()
    sample = make_sampler(model)
    noise = torch.randn(len(STEP_COUNTS), BATCH, DIM)
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        with torch.no_grad():
            for k, n in enumerate(STEP_COUNTS):
                sample(noise[k], n)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
