"""Blind-set loop: a full training checkpoint written with ``torch.save`` after every optimizer step.

The user trains a torchvision ConvNeXt-Tiny (``weights=None``, 100 classes,
28.6 M parameters; batch 64, 224 px, bf16 autocast, fused AdamW) and, to "never
lose progress", saves a resumable checkpoint at the end of every step::

    torch.save({"step": i, "model": model.state_dict(),
                "optimizer": opt.state_dict()}, ckpt_path)

That is ~340 MB per step (fp32 weights plus AdamW's two moment buffers).
``torch.save`` copies every CUDA tensor to the host one storage at a time
(synchronous device-to-host copies into pageable memory, so the GPU pipeline
drains), pickles the dict and writes the file, every step, while the GPU idles.
The remedy checkpoints at an interval (every 1000 steps here, as the source
recommends checkpointing less often); the measured steps then never save.

The checkpoint goes to a fresh temporary directory (one file, overwritten each
time).  Images and labels are made once in ``build`` and kept on the device.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/deepchem/deepchem/issues/458"
SOURCE_SAYS = (
    "deepchem issue 'Checkpointing is significantly slowing down training': saving after every epoch took "
    "about 30 s per 2-minute epoch (on Tox21 more time went to saving checkpoints than to computing); "
    "'you could get a significant speedup by checkpointing less often', fixed with a checkpoint_interval option "
    "(default every 10 epochs). Same fix in https://github.com/eriklindernoren/PyTorch-YOLOv3/issues/173 "
    "(weights saved every batch; save once per CHKPT_INTERVAL instead)."
)
REMEDY = "checkpoint at an interval (every N steps, here 1000), not after every step"
REMEDY_WORDS = (
    "checkpoint less often",
    "checkpointing less often",
    "save less often",
    "saving less often",
    "checkpoint less frequently",
    "checkpointing less frequently",
    "save less frequently",
    "saving less frequently",
    "fewer checkpoints",
    "checkpoint interval",
    "checkpointing interval",
    "checkpoint_interval",
    "save interval",
    "save_interval",
    "save_every",
    "save_steps",
    "save_freq",
    "checkpoint_every",
    "every n steps",
    "every n iterations",
    "every n epochs",
    "every few hundred",
    "every 1000",
    "every 1,000",
    "at an interval",
    "remove the torch.save",
    "remove torch.save",
    "move the torch.save",
    "move torch.save",
    "torch.save out of",
    "async_save",
    "asynchronous checkpoint",
    "async checkpoint",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def _convnext_tiny(num_classes: int) -> nn.Module:
    """torchvision ConvNeXt-Tiny with random weights (timm's equivalent if torchvision is missing)."""
    try:
        import torchvision

        return torchvision.models.convnext_tiny(weights=None, num_classes=num_classes)
    except ImportError:
        import timm

        return timm.create_model("convnext_tiny", pretrained=False, num_classes=num_classes)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, hw, n_cls = 64, 224, 100
    else:
        B, hw, n_cls = 2, 32, 10
    model = _convnext_tiny(n_cls).to(dev).train()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(
        model.parameters(), lr=1e-3, weight_decay=0.05, fused=cuda, foreach=None if cuda else True
    )
    x = torch.randn(B, 3, hw, hw, device=dev)
    y = torch.randint(0, n_cls, (B,), device=dev)
    ckpt_dir = tempfile.mkdtemp(prefix="b6_ckpt_")
    ckpt_path = os.path.join(ckpt_dir, "last.pt")
    atexit.register(
        shutil.rmtree, ckpt_dir, ignore_errors=True
    )  # harness hygiene, not part of the loop
    save_every = 1 if not remedy else 1000
    it = [0]

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            out = cmodel(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        it[0] += 1
        if it[0] % save_every == 0:
            torch.save(
                {"step": it[0], "model": model.state_dict(), "optimizer": opt.state_dict()},
                ckpt_path,
            )

    return step, _make_sync(dev)
