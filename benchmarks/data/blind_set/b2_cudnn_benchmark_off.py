"""Blind-set loop: cuDNN auto-tuner left off for a conv net whose input shape never changes.

A plain convolutional classifier (fixed 3x128x128 inputs, fixed batch) with a
mix of 3x3, 5x5, dilated and grouped convolutions, trained in fp32 (cuDNN may
use TF32, the default).  ``torch.backends.cudnn.benchmark`` is left at its
default ``False``, so cuDNN picks each convolution algorithm (forward, data
grad and weight grad) from a heuristic instead of timing the candidates.  For
less common configurations the heuristic choice can be several times slower
than the best algorithm, and the convolutions are the whole step.  Because the
shapes never change, the remedy ``torch.backends.cudnn.benchmark = True`` pays
the auto-tuning cost once (first step) and reuses the fastest algorithms.

Under ``torch.compile`` the convolutions are still extern calls into
``aten.convolution`` (cuDNN), so the flag still applies.  The flag is global;
the step sets it each time so that each variant gets what it claims.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html"
SOURCE_SAYS = (
    "Performance Tuning Guide, 'Enable cuDNN auto-tuner': for convolutional networks set "
    "torch.backends.cudnn.benchmark = True; cuDNN then benchmarks several algorithms and picks the fastest, "
    "which pays off when the input size does not change (see also "
    "https://discuss.pytorch.org/t/what-does-torch-backends-cudnn-benchmark-do/5936)."
)
REMEDY = "torch.backends.cudnn.benchmark = True"
REMEDY_WORDS = (
    "cudnn.benchmark",
    "cudnn benchmark",
    "cudnn auto-tuner",
    "cudnn autotuner",
    "cudnn auto tuner",
    "benchmark=true",
    "benchmark = true",
    "benchmark mode",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def conv_bn_relu(cin: int, cout: int, k: int, dilation: int = 1, groups: int = 1) -> nn.Sequential:
    pad = dilation * (k // 2)
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, padding=pad, dilation=dilation, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class ConvNet(nn.Module):
    def __init__(self, c: int, n_cls: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            conv_bn_relu(3, c, 5),
            conv_bn_relu(c, c, 3),
            conv_bn_relu(c, c, 3, dilation=2),
            nn.MaxPool2d(2),
            conv_bn_relu(c, 2 * c, 5),
            conv_bn_relu(2 * c, 2 * c, 3, groups=4),
            conv_bn_relu(2 * c, 2 * c, 3, dilation=2),
            nn.MaxPool2d(2),
            conv_bn_relu(2 * c, 4 * c, 3),
            conv_bn_relu(4 * c, 4 * c, 5, groups=8),
            conv_bn_relu(4 * c, 4 * c, 3),
        )
        self.head = nn.Linear(4 * c, n_cls)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.features(x)
        return self.head(h.mean(dim=(2, 3)))


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, res, c, n_cls = 64, 128, 64, 100  # fixed shapes every step
    else:
        B, res, c, n_cls = 2, 16, 8, 10
    model = ConvNet(c, n_cls).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
    x = torch.randn(B, 3, res, res, device=dev)
    y = torch.randint(0, n_cls, (B,), device=dev)

    def step() -> None:
        # the user never touches the flag (default False); the remedy turns the auto-tuner on
        torch.backends.cudnn.benchmark = remedy
        loss = F.cross_entropy(cmodel(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
