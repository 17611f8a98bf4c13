"""Blind-set loop: large fp32 matmuls with the default 'highest' float32 matmul precision.

A wide fp32 MLP trained in full fp32 with the default
``torch.get_float32_matmul_precision() == 'highest'``: cuBLAS runs true-fp32
GEMMs and never uses the tensor cores.  torch.compile warns "TensorFloat32
tensor cores for float32 matrix multiplication available but not enabled".
The remedy is ``torch.set_float32_matmul_precision('high')`` (TF32); bf16
autocast would be the stronger variant of the same fix.

Note: the precision is process-global.  It is set at the start of every step
(not only at build time) so that each variant measures what it claims even if
the runner builds several loops in one process; a runner that shares a process
between loops should reset it to 'highest' afterwards.  On CPU the setting has
no effect (the remedy is a no-op there).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/153195"
SOURCE_SAYS = (
    "pytorch/pytorch#153195 'TF32 is disabled by default without warning': the default 'highest' precision "
    "runs float32 GEMMs without TF32 tensor cores; torch.compile warns 'TensorFloat32 tensor cores for float32 "
    "matrix multiplication available but not enabled. Consider setting "
    "torch.set_float32_matmul_precision('high') for better performance.'"
)
REMEDY = "torch.set_float32_matmul_precision('high') (TF32) or bf16 autocast"
REMEDY_WORDS = (
    "set_float32_matmul_precision",
    "tf32",
    "tensorfloat",
    "tensor float",
    "allow_tf32",
    "matmul_precision",
    "bf16",
    "bfloat16",
    "autocast",
    "mixed precision",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    precision = "high" if remedy else "highest"
    torch.set_float32_matmul_precision(precision)
    if cuda:
        B, d, n_layers = 4096, 4096, 4
    else:
        B, d, n_layers = 8, 32, 2
    layers: list[nn.Module] = []
    for _ in range(n_layers):
        layers += [nn.Linear(d, d), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(d, 1000)).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=cuda)
    x = torch.randn(B, d, device=dev)
    y = torch.randint(0, 1000, (B,), device=dev)

    def step() -> None:
        torch.set_float32_matmul_precision(precision)
        loss = F.cross_entropy(cmodel(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
