"""Blind-set loop: L2 regularisation written as a Python sum over all parameters, added to the loss.

The user trains a ViT-S/16 image classifier (Hugging Face ``transformers``
``ViTForImageClassification`` from a ``ViTConfig``, random weights, batch 128
at 224 px, bf16 autocast) with Adam and an L2 penalty written by hand in the
training step::

    l2 = sum(p.pow(2).sum() for p in model.parameters())
    loss = ce + 0.5 * weight_decay * l2

The model is compiled, but this term is not: for each of the ~200 parameter
tensors it launches a square, a sum and an add in the forward and as many
autograd nodes (plus the extra gradient accumulation) in the backward, about
1,400 small eager kernels and autograd-engine calls per step.  Its gradient is
just ``weight_decay * p``, which is exactly what the optimizer's
``weight_decay`` adds to the gradient inside its own (fused) update.  The
remedy drops the penalty from the loss and passes ``weight_decay`` to
``torch.optim.Adam`` (same maths: Adam's ``weight_decay`` is this L2 penalty,
not AdamW's decoupled decay, which is why this loop uses fused Adam rather
than AdamW).

Batches are made once in ``build`` and kept on the device.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

SOURCE = "https://github.com/huggingface/transformers/issues/5938"
SOURCE_SAYS = (
    "transformers#5938 (answer by sgugger): the optimizer's weight_decay is the L2 coefficient, 'applied "
    "directly to the gradient, to avoid wasting compute with this huge sum of all the weights squared'. The "
    "torch.optim.Adam docs define weight_decay as the L2 penalty (it adds weight_decay * param to the "
    "gradient), so a hand-written L2 term in the loss can be replaced by Adam(..., weight_decay=wd)."
)
REMEDY = (
    "remove the hand-written L2 term from the loss and pass weight_decay to the (fused) Adam optimizer, which "
    "adds weight_decay * p to the gradients inside its update"
)
REMEDY_WORDS = (
    "weight_decay",
    "weight decay",
    "weight-decay",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    from transformers import ViTConfig, ViTForImageClassification

    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        cfg = ViTConfig(
            image_size=224,
            patch_size=16,
            hidden_size=384,
            num_hidden_layers=12,
            num_attention_heads=6,
            intermediate_size=1536,
            num_labels=100,
        )
        B, n_batches = 128, 2
    else:
        cfg = ViTConfig(
            image_size=32,
            patch_size=8,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            num_labels=4,
        )
        B, n_batches = 2, 2
    wd = 1e-4
    model = ViTForImageClassification(cfg).to(dev).train()
    cmodel = torch.compile(model)
    params = list(model.parameters())
    kw = dict(lr=1e-4, fused=cuda, foreach=None if cuda else True)
    if remedy:
        opt = torch.optim.Adam(params, weight_decay=wd, **kw)
    else:
        opt = torch.optim.Adam(params, **kw)
    batches = [
        (
            torch.randn(B, 3, cfg.image_size, cfg.image_size, device=dev),
            torch.randint(0, cfg.num_labels, (B,), device=dev),
        )
        for _ in range(n_batches)
    ]
    it = [0]

    def step() -> None:
        x, y = batches[it[0] % n_batches]
        it[0] += 1
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            logits = cmodel(pixel_values=x).logits
        loss = F.cross_entropy(logits.float(), y)
        if not remedy:
            l2 = sum(p.pow(2).sum() for p in params)
            loss = loss + 0.5 * wd * l2
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
