"""Blind-set loop: float64 data forced a ``model.double()``, so bf16 autocast silently does nothing.

The user's images come from NumPy (``np.load`` of a preprocessed array, dtype
float64), and ``torch.from_numpy`` keeps that dtype.  The first forward failed
with "Input type (double) and bias type (float) should be the same", which the
user fixed the way many forum answers suggest, with ``model.double()``.  Later
they added ``torch.autocast("cuda", dtype=torch.bfloat16)`` from the AMP recipe
and assume the step runs in mixed precision.  It does not: autocast only
lowers float32 ops, and "ops that run in float64 ... are not eligible, and will
run in these types whether or not autocast is enabled".  So every convolution,
batch norm and their backward run in float64 (torchvision ResNet-18, random
weights, batch 32 at 112 px), far from the tensor cores' bf16 speed.  The
remedy converts the data to float32 once when it is loaded and keeps the model
in float32, so autocast runs the convolutions in bf16 as intended.

The data set is loaded once in ``build`` (as NumPy would give it) and kept on
the device; both variants read the same batches.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/docs/stable/amp.html#op-eligibility"
SOURCE_SAYS = (
    "torch.amp docs, 'Autocast Op Reference / Op Eligibility': ops that run in float64 or non-floating-point "
    "dtypes are not eligible and run in these types whether or not autocast is enabled; the speed-up of mixed "
    "precision comes from running eligible float32 ops (convolutions, matmuls) in float16/bfloat16. So keep "
    "the model and inputs in float32 (e.g. convert float64 NumPy data with .float()) instead of calling "
    "model.double(); double precision is much slower on GPUs."
)
REMEDY = (
    "convert the float64 NumPy data to float32 (x.float() / astype(np.float32)) and drop model.double(), so "
    "bf16 autocast applies"
)
REMEDY_WORDS = (
    "float64",
    "double precision",
    "double-precision",
    "model.double()",
    ".double()",
    "torch.double",
    "to float32",
    "astype(np.float32)",
    'astype("float32")',
    "astype('float32')",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def _resnet18(num_classes: int) -> nn.Module:
    try:
        import torchvision

        return torchvision.models.resnet18(weights=None, num_classes=num_classes)
    except ImportError:
        import timm

        return timm.create_model("resnet18", pretrained=False, num_classes=num_classes)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, hw, n_cls, n_batches = 32, 112, 10, 4
    else:
        B, hw, n_cls, n_batches = 2, 32, 4, 2
    rng = np.random.default_rng(0)
    # what np.load(...) returns for the preprocessed data set: float64 images, int64 labels
    images_np = rng.standard_normal((n_batches * B, 3, hw, hw))  # dtype float64
    labels_np = rng.integers(0, n_cls, n_batches * B)
    images = torch.from_numpy(images_np)  # stays float64
    labels = torch.from_numpy(labels_np)
    model = _resnet18(n_cls)
    if remedy:
        images = images.float()  # convert once at load time; the model stays float32
    else:
        model = model.double()  # "fixes" the dtype mismatch error
    images = images.to(dev)
    labels = labels.to(dev)
    batches = list(zip(images.split(B), labels.split(B), strict=False))
    model = model.to(dev).train()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda, foreach=None if cuda else True)
    it = [0]

    def step() -> None:
        x, y = batches[it[0] % n_batches]
        it[0] += 1
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            out = cmodel(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
