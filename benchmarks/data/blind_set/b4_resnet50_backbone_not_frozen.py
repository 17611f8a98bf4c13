"""Blind-set loop: "frozen" backbone whose parameters still require grad (transfer learning).

The user follows the "ConvNet as fixed feature extractor" recipe: a torchvision
ResNet-50 (random weights here, standing in for the pretrained ones) gets a new
``fc`` head and only ``model.fc.parameters()`` are handed to the optimizer.
But the loop that sets ``requires_grad = False`` on the backbone parameters
was left out.  The optimizer never updates the backbone, yet autograd still
records the whole network, keeps all backbone activations for backward, and
``loss.backward()`` runs the full ResNet-50 backward pass, computing (and
accumulating, since the optimizer zeroes only the head's grads) a gradient for
every one of the 23.5 M backbone parameters, for nothing.  The remedy freezes
the backbone with ``requires_grad_(False)`` before the new head is attached, so
the backward pass only reaches the ``fc`` layer.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/tutorials/beginner/transfer_learning_tutorial.html"
SOURCE_SAYS = (
    "PyTorch Transfer Learning tutorial, 'ConvNet as fixed feature extractor': freeze all the network except "
    "the final layer; 'we need to set requires_grad = False to freeze the parameters so that the gradients are "
    "not computed in backward()'. The autograd notes (https://docs.pytorch.org/docs/stable/notes/autograd.html"
    "#setting-requires-grad) add that setting requires_grad is the main way to control which parts of a "
    "pretrained model take part in the gradient computation when freezing them for fine-tuning."
)
REMEDY = "freeze the backbone: set requires_grad=False on its parameters (model.requires_grad_(False) before adding the new head)"
REMEDY_WORDS = (
    "requires_grad=false",
    "requires_grad = false",
    "requires_grad_(false)",
    "requires_grad to false",
    "requires_grad false",
    "freeze the backbone",
    "freeze backbone",
    "freezing the backbone",
    "frozen backbone",
    "freeze the feature extractor",
    "freeze the pretrained",
    "freeze its parameters",
    "freeze the parameters",
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
        B, hw, n_cls = 96, 224, 10
    else:
        B, hw, n_cls = 2, 32, 4
    model = _resnet("resnet50")  # stands in for weights="IMAGENET1K_V2"
    if remedy:
        for p in model.parameters():
            p.requires_grad = False
    # new head; parameters of newly constructed modules have requires_grad=True
    model.fc = nn.Linear(model.fc.in_features, n_cls)
    model = model.to(dev).train()
    cmodel = torch.compile(model)
    # only the head is optimised, in both variants
    opt = torch.optim.SGD(model.fc.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(B, 3, hw, hw, device=dev)
    y = torch.randint(0, n_cls, (B,), device=dev)

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            out = cmodel(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
