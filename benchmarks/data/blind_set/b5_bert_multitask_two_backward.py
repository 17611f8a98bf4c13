"""Blind-set loop: one backward call per task loss in a multi-task model (shared encoder run backward twice).

The user trains a multi-task BERT (Hugging Face ``transformers`` ``BertModel``
built from a ``BertConfig``, random weights, 12 layers x 768) with two heads on
the shared encoder: a sentence-level classifier on the [CLS] token and a
token-level tagger.  Following a multi-task snippet, each task loss gets its
own backward call::

    loss_cls.backward(retain_graph=True)
    loss_tok.backward()

Both calls walk the graph back to the inputs, so the whole 12-layer encoder
backward (the most expensive part of the step) runs twice, and the first call
keeps all saved activations alive for the second.  Gradients add up to the same
result as one backward of the summed loss.  The remedy sums the task losses and
calls ``backward`` once.

Batches are fixed-length (packed) token sequences made once in ``build`` and
kept on the device.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://discuss.pytorch.org/t/multiple-loss-backward/126195"
SOURCE_SAYS = (
    "PyTorch forum 'Multiple loss backward' (answer by ptrblck): with a.backward(retain_graph=True); "
    "b.backward() the gradients for each parameter are calculated a second time and accumulated, and peak "
    "memory is higher than with a += b; a.backward(). A Chainer Faster R-CNN issue "
    "(https://github.com/mitmul/chainer-faster-rcnn/issues/16) reports the same pattern re-computing the "
    "trunk's gradients once per loss and a ~3x training speed-up from backpropagating the sum of the losses."
)
REMEDY = (
    "sum the task losses and call backward once: (loss_cls + loss_tok).backward(), no retain_graph"
)
REMEDY_WORDS = (
    "sum the losses",
    "sum of the losses",
    "sum the task losses",
    "summed loss",
    "add the losses",
    "adding the losses",
    "combine the losses",
    "combined loss",
    "total loss",
    "total_loss",
    "single backward",
    "one backward",
    "backward once",
    "a single .backward",
    "torch.autograd.backward([",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class MultiTaskBert(nn.Module):
    def __init__(self, cfg, n_cls: int, n_tags: int) -> None:  # noqa: ANN001
        super().__init__()
        from transformers import BertModel

        self.encoder = BertModel(cfg, add_pooling_layer=False)
        self.cls_head = nn.Sequential(nn.Dropout(0.1), nn.Linear(cfg.hidden_size, n_cls))
        self.tok_head = nn.Sequential(nn.Dropout(0.1), nn.Linear(cfg.hidden_size, n_tags))

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.encoder(input_ids=ids).last_hidden_state
        return self.cls_head(h[:, 0]), self.tok_head(h)


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    from transformers import BertConfig

    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        cfg = BertConfig(
            vocab_size=30522,
            hidden_size=768,
            num_hidden_layers=12,
            num_attention_heads=12,
            intermediate_size=3072,
            max_position_embeddings=512,
        )
        B, T, n_batches = 32, 256, 4
    else:
        cfg = BertConfig(
            vocab_size=256,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
        )
        B, T, n_batches = 2, 16, 2
    n_cls, n_tags = 3, 9
    model = MultiTaskBert(cfg, n_cls, n_tags).to(dev).train()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-5, fused=cuda, foreach=None if cuda else True)
    batches = [
        (
            torch.randint(0, cfg.vocab_size, (B, T), device=dev),
            torch.randint(0, n_cls, (B,), device=dev),
            torch.randint(0, n_tags, (B, T), device=dev),
        )
        for _ in range(n_batches)
    ]
    it = [0]

    def step() -> None:
        ids, y_cls, y_tok = batches[it[0] % n_batches]
        it[0] += 1
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            cls_logits, tok_logits = cmodel(ids)
        loss_cls = F.cross_entropy(cls_logits.float(), y_cls)
        loss_tok = F.cross_entropy(tok_logits.float().flatten(0, 1), y_tok.flatten())
        if remedy:
            (loss_cls + loss_tok).backward()
        else:
            loss_cls.backward(retain_graph=True)
            loss_tok.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
