"""Blind-set loop: per-step random tensors generated on the CPU and then moved to the GPU.

A diffusion-style denoiser draws fresh Gaussian noise and timesteps every step.
The user wrote ``torch.randn(x0.shape).to(device)`` (and ``torch.rand(B).to(device)``)
the way many examples do.  The noise is the size of the whole batch (here about
2M values, 8 MB), so each step the CPU generates it with the CPU random generator
and then copies it from ordinary pageable memory to the GPU.  That copy has to
wait for the GPU to drain the previous step, and the GPU then sits idle while
the next batch of noise is produced on the host.  The remedy creates the random
tensors directly on the target device (``torch.randn(shape, device=device)``), so
the CUDA generator fills them in a single kernel.

Both variants produce noise with the same distribution (not the same values:
CPU and CUDA generators differ).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html"
SOURCE_SAYS = (
    "PyTorch Performance Tuning Guide, 'Create tensors directly on the target device': instead of calling "
    "torch.rand(size).cuda() to generate a random tensor, produce the output directly on the target device, "
    "torch.rand(size, device='cuda'); this applies to every factory function that accepts a device argument "
    "(torch.rand, torch.zeros, torch.full and similar)."
)
REMEDY = "create the per-step random tensors directly on the GPU: torch.randn(shape, device=device) instead of torch.randn(shape).to(device)"
REMEDY_WORDS = (
    "device=",
    "directly on the device",
    "directly on the gpu",
    "directly on the target device",
    "on the target device",
    "on-device random",
    "generate on the gpu",
    "generate them on the gpu",
    "generated on the gpu",
    "randn_like",
)


class Denoiser(nn.Module):
    """Small conv noise predictor with a timestep embedding (DDPM-style, much smaller)."""

    def __init__(self, c_in: int, ch: int) -> None:
        super().__init__()
        self.t_mlp = nn.Sequential(nn.Linear(1, ch), nn.SiLU(), nn.Linear(ch, ch))
        self.inp = nn.Conv2d(c_in, ch, 3, padding=1)
        self.b1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.b2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.n1 = nn.GroupNorm(8, ch)
        self.n2 = nn.GroupNorm(8, ch)
        self.out = nn.Conv2d(ch, c_in, 3, padding=1)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        h = self.inp(x) + self.t_mlp(t[:, None])[:, :, None, None]
        h = h + self.b1(F.silu(self.n1(h)))
        h = h + self.b2(F.silu(self.n2(h)))
        return self.out(F.silu(h))


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, C, hw, ch = 128, 4, 64, 64  # noise: 128*4*64*64 = 2.1M floats (8 MB) per step
    else:
        B, C, hw, ch = 2, 4, 8, 16
    model = Denoiser(C, ch).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=cuda, foreach=None if cuda else True)
    x0 = torch.randn(
        B, C, hw, hw, device=dev
    )  # the (already on-device) clean latents of this batch

    def step() -> None:
        if remedy:
            noise = torch.randn(x0.shape, device=dev)
            t = torch.rand(B, device=dev)
        else:
            noise = torch.randn(x0.shape).to(dev)  # CPU RNG + pageable host->device copy
            t = torch.rand(B).to(dev)
        a = torch.cos(t * 1.5707963)[:, None, None, None]
        xt = a * x0 + (1 - a * a).sqrt() * noise
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            pred = cmodel(xt, t)
        loss = F.mse_loss(pred.float(), noise)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
