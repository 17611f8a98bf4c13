"""DROPPED candidate (no c5 script; see README_c5.md), planned as c5_compile_per_call: torch.compile(fn) called inside the optimizer step.

without: `torch.compile(single_param_adam, fullgraph=True)(...)` for every parameter, every step.
with:    the compiled function is created once in __init__ and reused.
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

D_IN, H, B, STEPS = 32, 64, 64, 4


def single_param_adam(p, grad, m, v, lr, beta1, beta2, eps, step):
    m.lerp_(grad, 1 - beta1)
    v.lerp_(grad * grad, 1 - beta2)
    m_hat = m / (1 - beta1**step)
    v_hat = v / (1 - beta2**step)
    p.sub_(lr * m_hat / (v_hat.sqrt() + eps))


class CompiledAdam(torch.optim.Optimizer):
    def __init__(self, params, once, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))
        self.once = torch.compile(single_param_adam, fullgraph=True) if once else None

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = torch.zeros(())
                    state["m"] = torch.zeros_like(p)
                    state["v"] = torch.zeros_like(p)
                state["step"] += 1
                fn = self.once or torch.compile(single_param_adam, fullgraph=True)
                fn(
                    p,
                    p.grad,
                    state["m"],
                    state["v"],
                    torch.tensor(group["lr"]),
                    group["betas"][0],
                    group["betas"][1],
                    group["eps"],
                    state["step"],
                )


def main(mode):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(D_IN, H), nn.GELU(), nn.Linear(H, 1))
    opt = CompiledAdam(model.parameters(), once=(mode == "with"), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    data = [
        (torch.randn(B, D_IN, generator=g), torch.randn(B, 1, generator=g)) for _ in range(STEPS)
    ]
    t = time.perf_counter()
    for x, y in data:
        F.mse_loss(model(x), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
