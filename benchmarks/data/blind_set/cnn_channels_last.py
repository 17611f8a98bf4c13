"""Blind-set loop: a small U-Net style segmentation CNN trained in the default NCHW layout.

Convolutions under bf16 autocast on tensor cores want NHWC; with NCHW
(``torch.contiguous_format``) weights and activations cuDNN has to pick NCHW
kernels or transpose around each convolution.  The remedy converts the model
and the input batch to ``torch.channels_last``.

Why a U-Net: inductor's own layout optimisation (torch/_inductor/graph.py,
``decide_layout_opt``) would silently switch a plain ResNet-style graph to
channels-last under torch.compile, which would hide the problem; it skips the
switch when a 3x3 convolution halves the channel count (as the decoder convs
after a skip-connection concat do here, the same reason it skips
pytorch_unet), so the layout the user chose is the layout that runs.

On CPU (smoke test) inductor/mkldnn pick their own layout; the remedy is run but
means little there.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/tutorials/intermediate/memory_format_tutorial.html"
SOURCE_SAYS = (
    "Channels Last Memory Format tutorial (and the Tuning Guide's 'Enable channels_last memory format for "
    "computer vision models'): convert convolutional models and their inputs with "
    "x.to(memory_format=torch.channels_last) / model.to(memory_format=torch.channels_last), used together "
    "with AMP to accelerate CNNs on Tensor Cores."
)
REMEDY = "channels_last memory format for model and inputs"
REMEDY_WORDS = ("channels_last", "channels-last", "channels last", "nhwc", "memory_format")


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def conv_bn_relu(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
    )


class UNetSmall(nn.Module):
    def __init__(self, cin: int, c: int, n_cls: int) -> None:
        super().__init__()
        self.enc1 = nn.Sequential(conv_bn_relu(cin, c), conv_bn_relu(c, c))
        self.enc2 = nn.Sequential(conv_bn_relu(c, 2 * c), conv_bn_relu(2 * c, 2 * c))
        self.mid = nn.Sequential(conv_bn_relu(2 * c, 4 * c), conv_bn_relu(4 * c, 4 * c))
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.dec2 = nn.Sequential(conv_bn_relu(4 * c, 2 * c), conv_bn_relu(2 * c, 2 * c))
        self.up1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec1 = nn.Sequential(conv_bn_relu(2 * c, c), conv_bn_relu(c, c))
        self.out = nn.Conv2d(c, n_cls, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], dim=1))
        return self.out(d1)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, res, c, n_cls = 32, 128, 64, 8
    else:
        B, res, c, n_cls = 2, 16, 4, 3
    model = UNetSmall(3, c, n_cls).to(dev)
    x = torch.randn(B, 3, res, res, device=dev)
    y = torch.randint(0, n_cls, (B, res, res), device=dev)
    if remedy:
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    cmodel = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            out = cmodel(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
