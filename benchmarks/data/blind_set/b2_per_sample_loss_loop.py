"""Blind-set loop: the weighted loss is computed with a Python loop over the samples of the batch.

The model itself is compiled and runs on the whole batch, but the user then
computes a per-sample weighted cross-entropy one sample at a time:
``for i in range(B): loss = loss + w[i] * F.cross_entropy(out[i:i+1], y[i:i+1])``.
Every iteration dispatches a handful of tiny eager ops (two slices, log-softmax,
NLL, an index, a multiply, an add) and records as many autograd nodes, so a
batch of 512 turns into thousands of kernel launches in the forward pass and
again in the backward pass.  The step is bound by Python/dispatcher overhead
and the GPU idles.  The remedy computes the same loss in one batched call:
``(F.cross_entropy(out, y, reduction="none") * w).mean()``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://discuss.pytorch.org/t/batching-question/102632"
SOURCE_SAYS = (
    "discuss.pytorch.org 'Batching Question' (ptrblck): a Python for loop over the samples adds Python overhead "
    "in each iteration and calls into the dispatcher for a tiny workload, while the batched call uses the "
    "vectorized kernels; the batched version was ~77x faster in the poster's test, so process the whole batch at once."
)
REMEDY = (
    "vectorize the per-sample loop: one batched cross_entropy(reduction='none') times the weights"
)
REMEDY_WORDS = (
    "vectoriz",
    "vectoris",
    "batched",
    "reduction='none'",
    'reduction="none"',
    "reduction=none",
    "whole batch at once",
    "single call",
    "one call",
    "remove the loop",
    "without the loop",
    "without a loop",
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
        B, d, n_layers, n_cls = 512, 1024, 4, 100
    else:
        B, d, n_layers, n_cls = 4, 16, 1, 10
    layers: list[nn.Module] = []
    for _ in range(n_layers):
        layers += [nn.Linear(d, d), nn.LayerNorm(d), nn.GELU()]
    model = nn.Sequential(*layers, nn.Linear(d, n_cls)).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda)
    x = torch.randn(B, d, device=dev)
    y = torch.randint(0, n_cls, (B,), device=dev)
    w = torch.rand(B, device=dev) + 0.5  # per-sample importance weights

    def step() -> None:
        out = cmodel(x)
        if remedy:
            loss = (F.cross_entropy(out, y, reduction="none") * w).mean()
        else:
            loss = out.new_zeros(())
            for i in range(B):  # one sample at a time
                loss = loss + w[i] * F.cross_entropy(out[i : i + 1], y[i : i + 1])
            loss = loss / B
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
