"""Blind-set loop: cuDNN switched off (``torch.backends.cudnn.enabled = False``) in a CNN training run.

At some point the user hit a ``CUDNN_STATUS_...`` error and applied the
workaround found online, ``torch.backends.cudnn.enabled = False``; the error
went away (driver update) but the line stayed at the top of the training
script.  With cuDNN disabled, every convolution of the torchvision ResNet-18
(forward, input-gradient and weight-gradient) falls back to PyTorch's native
CUDA implementation, which for each image of the batch unfolds the input with
``im2col`` and runs a separate GEMM (and ``col2im`` in backward), so one
convolution becomes dozens of small kernels instead of one cuDNN kernel.  The
compiled graph still calls ``aten.convolution`` / ``convolution_backward``, and
those dispatch to the slow path at run time.  The remedy leaves cuDNN enabled
(the default).

The flag is global, so the step sets it each time (as the script's top line
would for the whole run).  Both variants switch off inductor's on-disk FX-graph
and AOT-autograd caches: their keys do not include ``cudnn.enabled``, while the
compiled code asserts the convolution output strides, which differ between cuDNN
(channels-last output after inductor's layout optimisation) and the native
kernels; a graph cached by one variant then fails in the other
(``assert_size_stride``).  This only affects compile time, not the step.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/speedinghzl/Pytorch-Deeplab/issues/1"
SOURCE_SAYS = (
    "GitHub issue 'Why cudnn.enabled = False?' (speedinghzl/Pytorch-Deeplab #1): the training script disabled "
    "cuDNN; a user found that with torch.backends.cudnn.enabled = True training is faster and uses less GPU "
    "memory, and the author replied that it had been disabled only for a measurement and that the setting "
    "would be corrected (cuDNN enabled). The torch.backends docs describe cudnn.enabled as the switch that "
    "controls whether cuDNN is used at all (https://docs.pytorch.org/docs/stable/backends.html)."
)
REMEDY = "keep cuDNN enabled: torch.backends.cudnn.enabled = True (remove the 'cudnn.enabled = False' workaround)"
REMEDY_WORDS = (
    "cudnn.enabled = true",
    "cudnn.enabled=true",
    "cudnn.enabled",
    "re-enable cudnn",
    "reenable cudnn",
    "cudnn is disabled",
    "cudnn disabled",
    "disabled cudnn",
    "cudnn is off",
    "cudnn off",
    "turn cudnn back on",
    "without cudnn",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def _resnet(name: str, **kw: int) -> nn.Module:
    """torchvision ResNet with random weights (timm's equivalent if torchvision is missing)."""
    try:
        import torchvision

        return getattr(torchvision.models, name)(weights=None, **kw)
    except ImportError:
        import timm

        return timm.create_model(name, pretrained=False, **kw)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, hw, n_cls = 32, 96, 100
    else:
        B, hw, n_cls = 2, 32, 10
    cudnn_on = remedy  # the user's script: torch.backends.cudnn.enabled = False
    torch.backends.cudnn.enabled = cudnn_on
    # keep the two variants from sharing cached compiled graphs (see the module docstring)
    from torch._functorch import config as functorch_config
    from torch._inductor import config as inductor_config

    inductor_config.fx_graph_cache = False
    functorch_config.enable_autograd_cache = False
    model = _resnet("resnet18", num_classes=n_cls).to(dev).train()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda, foreach=None if cuda else True)
    x = torch.randn(B, 3, hw, hw, device=dev)
    y = torch.randint(0, n_cls, (B,), device=dev)

    def step() -> None:
        torch.backends.cudnn.enabled = cudnn_on
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            out = cmodel(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
