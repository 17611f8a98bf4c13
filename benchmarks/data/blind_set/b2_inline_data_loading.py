"""Blind-set loop: CPU-heavy per-sample augmentation done in the main process (``num_workers=0``).

The user's ``Dataset.__getitem__`` decodes a uint8 image, takes a random crop,
flips it, jitters brightness/contrast, normalizes it and adds noise, one sample
at a time on the CPU.  The ``DataLoader`` is created with the default
``num_workers=0``, so all of that runs synchronously in the training process
between two steps: the GPU (a small conv net that needs only a few ms per
batch) sits idle while the main process prepares the next batch.  The remedy
is ``num_workers > 0`` (with ``persistent_workers=True`` and a prefetch
factor), so worker processes prepare batches in parallel and ahead of time,
overlapping data preparation with the GPU step.

Both variants use ``pin_memory`` the same way (on CUDA) and the same
``non_blocking`` copy, so only the worker count differs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SOURCE = "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html"
SOURCE_SAYS = (
    "Performance Tuning Guide, 'Enable asynchronous data loading and augmentation': DataLoader's default "
    "num_workers=0 loads data synchronously in the main process; setting num_workers > 0 loads and augments "
    "data asynchronously in worker processes, in parallel with training."
)
REMEDY = "DataLoader(num_workers > 0, persistent_workers=True, prefetch_factor) for the per-sample augmentation"
REMEDY_WORDS = (
    "num_workers",
    "num workers",
    "worker processes",
    "workers",
    "multiprocess data loading",
    "multi-process data loading",
    "prefetch",
    "asynchronous data loading",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class AugmentedImages(Dataset):
    """Synthetic uint8 images with a per-sample CPU augmentation pipeline."""

    def __init__(self, n: int, raw: int, crop: int, n_cls: int) -> None:
        g = torch.Generator().manual_seed(0)
        self.images = torch.randint(0, 256, (64, 3, raw, raw), dtype=torch.uint8, generator=g)
        self.labels = torch.randint(0, n_cls, (n,), generator=g)
        self.n, self.raw, self.crop = n, raw, crop
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
        self.std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        img = self.images[i % len(self.images)].float().div_(255.0)  # "decode"
        top, left = torch.randint(0, self.raw - self.crop + 1, (2,)).tolist()
        img = img[:, top : top + self.crop, left : left + self.crop]  # random crop
        if torch.rand(()) < 0.5:
            img = img.flip(-1)  # horizontal flip
        b, c = 0.8 + 0.4 * torch.rand(2)  # brightness / contrast jitter
        m = img.mean()
        img = ((img - m) * c + m) * b
        img = F.avg_pool2d(img.unsqueeze(0), 3, stride=1, padding=1).squeeze(0)  # light blur
        img = (img.clamp_(0.0, 1.0) - self.mean) / self.std
        img = img + 0.01 * torch.randn_like(img)
        return img.contiguous(), self.labels[i]


def _forever(loader: DataLoader) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    while True:
        yield from loader


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, raw, crop, c, n_cls = 128, 160, 128, 32, 100
        workers = max(2, min(8, (os.cpu_count() or 4) - 2))
    else:
        B, raw, crop, c, n_cls = 4, 20, 16, 4, 10
        workers = 1
    ds = AugmentedImages(n=B * 1000, raw=raw, crop=crop, n_cls=n_cls)
    if remedy:
        loader = DataLoader(
            ds,
            batch_size=B,
            shuffle=True,
            drop_last=True,
            num_workers=workers,
            persistent_workers=True,
            prefetch_factor=4,
            pin_memory=cuda,
        )
    else:
        loader = DataLoader(
            ds, batch_size=B, shuffle=True, drop_last=True, pin_memory=cuda
        )  # num_workers=0
    batches = _forever(loader)

    model = nn.Sequential(
        nn.Conv2d(3, c, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(c, 2 * c, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(2 * c, 4 * c, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(4 * c, n_cls),
    ).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda)

    def step() -> None:
        xb, yb = next(batches)
        x = xb.to(dev, non_blocking=True)
        y = yb.to(dev, non_blocking=True)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            out = cmodel(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
