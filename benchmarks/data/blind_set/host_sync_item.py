"""Blind-set loop: the step reads the loss and accuracy back to the host every iteration.

``loss_history.append(loss.item())`` and ``correct += (...).sum().item()`` are
called inside every step (the classic "record batch statistics" pattern).  Each
``.item()`` blocks the CPU until the GPU has finished all queued work, so the
CPU can never run ahead and launch the next step while the GPU is busy.  The
remedy keeps the running statistics on the device (``loss.detach()`` summed
into a device tensor) and reads them back only when they are reported, outside
the per-step path.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://discuss.pytorch.org/t/optimizing-training-recording-batch-statistics/22649"
SOURCE_SAYS = (
    "discuss.pytorch.org 'Optimizing training (recording batch statistics)': loss_history.append(loss.item()) "
    "every batch is bad practice because .item() forces a GPU->CPU transfer and wait each step; keep the "
    "statistics on the GPU and fetch them rarely (the Tuning Guide likewise says to avoid .item(), print(cuda_tensor) "
    "and .cpu() in the training loop)."
)
REMEDY = "remove the per-step .item()/host sync; accumulate metrics on device and read them rarely"
REMEDY_WORDS = (
    ".item()",
    "item()",
    "host sync",
    "host-device sync",
    "cpu-gpu sync",
    "gpu-cpu sync",
    "device-host sync",
    "synchroniz",
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
        B, d, n_layers = 128, 1024, 6
    else:
        B, d, n_layers = 4, 16, 1
    layers: list[nn.Module] = []
    for _ in range(n_layers):
        layers += [nn.Linear(d, d), nn.LayerNorm(d), nn.GELU()]
    model = nn.Sequential(*layers, nn.Linear(d, 10)).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(B, d, device=dev)
    y = torch.randint(0, 10, (B,), device=dev)

    loss_history: list[float] = []
    stats = {"correct": 0, "seen": 0}
    loss_sum = torch.zeros((), device=dev)
    correct_sum = torch.zeros((), dtype=torch.long, device=dev)

    def step() -> None:
        nonlocal loss_sum, correct_sum
        out = cmodel(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if remedy:
            # stays on the device; read back only when the epoch summary is printed
            loss_sum += loss.detach()
            correct_sum += (out.detach().argmax(1) == y).sum()
        else:
            loss_history.append(loss.item())  # host sync
            stats["correct"] += (out.argmax(1) == y).sum().item()  # host sync
            stats["seen"] += y.numel()

    return step, _make_sync(dev)
