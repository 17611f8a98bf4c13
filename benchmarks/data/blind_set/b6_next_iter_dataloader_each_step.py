"""Blind-set loop: ``next(iter(loader))`` in every step, so the DataLoader and its workers restart each step.

The user trains a torchvision ResNet-18 (``weights=None``, 100 classes; batch
256, 96 px, bf16 autocast) from an image ``Dataset`` (uint8 images held in host
memory, converted to float and randomly flipped in ``__getitem__``) through a
``DataLoader(shuffle=True, num_workers=4, pin_memory=True)``.  The training loop
is written step-based, and the batch is fetched with::

    x, y = next(iter(train_loader))

``iter(train_loader)`` builds a brand-new multi-process iterator every step: it
forks 4 worker processes (plus the pin-memory thread), each worker starts
loading ``prefetch_factor`` = 2 batches, the step waits for the first one from a
cold start, takes it, and the iterator is then dropped, which shuts the 4
workers down again, discarding the other 7 batches they were making.  The data
loading that the workers were meant to overlap with GPU work becomes serial
process start-up and teardown in every step.  The remedy creates the iterator
once, keeps it across steps (workers stay alive and prefetch ahead), and builds a
new one only when an epoch ends (``StopIteration``).

The fork/teardown cost and the worker prefetching are the only differences;
dataset, loader arguments, ``pin_memory`` and the ``non_blocking`` copies are the
same in both variants.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SOURCE = "https://github.com/skhu101/GM-NAS/issues/4"
SOURCE_SAYS = (
    "GM-NAS issue 'iter(dataset) in training loop': `input, target = next(iter(train_queue))` inside the batch "
    "loop 'creates an iter object every batch which significantly slows down training'. "
    "https://github.com/MishaLaskin/vqvae/issues/18 reports the same loop 'costs time heavily' and recommends "
    "`training_loader = iter(training_loader)` once, then `next(training_loader)` in the loop."
)
REMEDY = (
    "create the DataLoader iterator once (it = iter(loader)) and call next(it) each step, "
    "re-creating it only on StopIteration"
)
REMEDY_WORDS = (
    "iterator once",
    "iter() once",
    "iter(loader) once",
    "iter(train_loader) once",
    "create the iterator",
    "creating the iterator",
    "reuse the iterator",
    "reuse one iterator",
    "re-use the iterator",
    "keep the iterator",
    "keep one iterator",
    "persistent iterator",
    "single iterator",
    "iterator outside",
    "new iterator every",
    "new iterator each",
    "next(iter(",
    "stopiteration",
    "persistent_workers",
    "persistent workers",
    "iterate over the dataloader",
    "iterate over the loader",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def _resnet18(num_classes: int) -> nn.Module:
    """torchvision ResNet-18 with random weights (timm's equivalent if torchvision is missing)."""
    try:
        import torchvision

        return torchvision.models.resnet18(weights=None, num_classes=num_classes)
    except ImportError:
        import timm

        return timm.create_model("resnet18", pretrained=False, num_classes=num_classes)


class ImageDataset(Dataset):
    """uint8 images in host memory; ToTensor-style scaling plus a random horizontal flip."""

    def __init__(self, images: torch.Tensor, labels: torch.Tensor) -> None:
        self.images = images  # (N, 3, H, W) uint8
        self.labels = labels

    def __len__(self) -> int:
        return self.images.shape[0]

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        img = self.images[i].float().div_(255.0)
        if torch.rand(()) < 0.5:
            img = img.flip(-1)
        return img, self.labels[i]


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        N, B, hw, n_cls, workers = 8192, 256, 96, 100, 4
    else:
        N, B, hw, n_cls, workers = 16, 4, 32, 10, 2
    images = torch.randint(0, 256, (N, 3, hw, hw), dtype=torch.uint8)
    labels = torch.randint(0, n_cls, (N,))
    loader = DataLoader(
        ImageDataset(images, labels),
        batch_size=B,
        shuffle=True,
        drop_last=True,
        num_workers=workers,
        pin_memory=cuda,
    )
    model = _resnet18(n_cls).to(dev).train()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=cuda, foreach=None if cuda else True)
    state: dict[str, object] = {"it": None}

    def next_batch() -> tuple[torch.Tensor, torch.Tensor]:
        if not remedy:
            return next(iter(loader))
        if state["it"] is None:
            state["it"] = iter(loader)
        try:
            return next(state["it"])
        except StopIteration:  # end of epoch: start the next one
            state["it"] = iter(loader)
            return next(state["it"])

    def step() -> None:
        xb, yb = next_batch()
        x = xb.to(dev, non_blocking=True)
        y = yb.to(dev, non_blocking=True)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            out = cmodel(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
