"""Blind-set loop: autograd anomaly detection left switched on for a normal training run.

The user once chased a NaN with ``torch.autograd.set_detect_anomaly(True)`` and
never took it out.  In anomaly mode the autograd engine records a Python
traceback for every node created in the forward pass and, after every backward
node, checks each gradient it produced for NaN (``isnan(...).any()`` read back
to the host).  With a compiled ResNet the backward is one compiled node that
returns ~60 parameter gradients, so every step pays ~60 small NaN-check kernels
plus ~60 device-to-host reads, and the CPU can no longer queue the next step
ahead of the GPU.  The remedy is to leave anomaly detection off (the default)
outside debugging sessions.

The model is torchvision's ResNet-18 with random weights (no download).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html"
SOURCE_SAYS = (
    "PyTorch Performance Tuning Guide, 'Disable debugging APIs': many PyTorch APIs are intended for debugging "
    "and should be disabled for regular training runs, first among them anomaly detection "
    "(torch.autograd.detect_anomaly / torch.autograd.set_detect_anomaly(True)); the autograd docs add that "
    "this mode 'should be enabled only for debugging as the different tests will slow down your program "
    "execution' (see also https://github.com/yenchenlin/nerf-pytorch/issues/42)."
)
REMEDY = "turn autograd anomaly detection off: torch.autograd.set_detect_anomaly(False) (only enable it while debugging)"
REMEDY_WORDS = (
    "detect_anomaly",
    "set_detect_anomaly",
    "anomaly detection",
    "anomaly mode",
    "detect anomaly",
    "anomaly_mode",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    import torchvision

    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, hw, n_cls = 64, 112, 100
    else:
        B, hw, n_cls = 2, 32, 10
    model = torchvision.models.resnet18(weights=None, num_classes=n_cls).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda, foreach=None if cuda else True)
    x = torch.randn(B, 3, hw, hw, device=dev)
    y = torch.randint(0, n_cls, (B,), device=dev)

    # "temporarily" switched on while hunting a NaN, then forgotten (the flag is global)
    anomaly = not remedy

    def step() -> None:
        torch.autograd.set_detect_anomaly(anomaly)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            out = cmodel(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
