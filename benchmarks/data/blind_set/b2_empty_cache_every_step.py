"""Blind-set loop: ``torch.cuda.empty_cache()`` called at the end of every training step.

The user "frees GPU memory" after each iteration with ``torch.cuda.empty_cache()``.
PyTorch's caching allocator normally keeps freed blocks and hands them out
again on the next step without touching the driver.  ``empty_cache()`` returns
every unused cached block to the driver (``cudaFree``, which synchronizes the
device), so the next step has to ``cudaMalloc`` all of its activation and
gradient buffers again (a few GB here: wide activations at a large batch).
The per-step cost is a device sync plus many large driver allocations and
frees, and the CPU can no longer run ahead of the GPU.  The remedy is to delete
the call and let the caching allocator reuse its blocks.

On CPU (smoke test) ``empty_cache`` has nothing to do, so both variants behave
the same there.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://discuss.pytorch.org/t/about-torch-cuda-empty-cache/34232"
SOURCE_SAYS = (
    "discuss.pytorch.org 'About torch.cuda.empty_cache()' (albanD): the function should not be used by the "
    "end-user except in edge cases; PyTorch keeps freed GPU memory in a pool so that the next allocations are "
    "much faster, and emptying it every batch makes the program much slower, so don't call it in the loop."
)
REMEDY = "remove the per-step torch.cuda.empty_cache() and let the caching allocator reuse memory"
REMEDY_WORDS = (
    "empty_cache",
    "empty cache",
    "caching allocator",
    "cache allocator",
    "cudamalloc",
    "cudafree",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, d, n_layers = 32768, 1024, 8  # 64 MB (bf16) per activation, a few GB per step
    else:
        B, d, n_layers = 8, 16, 2
    layers: list[nn.Module] = []
    for _ in range(n_layers):
        layers += [nn.Linear(d, d), nn.LayerNorm(d), nn.GELU()]
    model = nn.Sequential(*layers, nn.Linear(d, 10)).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda)
    x = torch.randn(B, d, device=dev)
    y = torch.randint(0, 10, (B,), device=dev)

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            out = cmodel(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if not remedy and cuda:
            torch.cuda.empty_cache()  # "free memory" after every step

    return step, _make_sync(dev)
