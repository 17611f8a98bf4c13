"""Blind-set loop: label smoothing written with one-hot probability targets over a 50k vocabulary.

The user trains a small GPT-2 (Hugging Face ``transformers`` ``GPT2LMHeadModel``
built from a ``GPT2Config``, random weights, GPT-2's 50257-token vocabulary,
4 layers x 512) and wants label smoothing 0.1.  Coming from Keras
(``categorical_crossentropy`` on one-hot labels), they build the smoothed
target distribution by hand and pass it to ``F.cross_entropy`` as class
probabilities::

    target = F.one_hot(labels, V).float()           # (B*T, V): int64 one-hot, then fp32
    target = target * (1 - eps) + eps / V
    loss = F.cross_entropy(logits, target)          # probability-target path

With 8192 tokens per batch and V = 50257 that is a 3.3 GB int64 one-hot tensor,
three more 1.6 GB fp32 (B*T, V) tensors, and the probability-target
cross-entropy (log_softmax * target, summed) with its backward, all run eagerly
outside the compiled model: tens of GB of extra memory traffic per step, on top
of the logits themselves.  The remedy keeps the integer labels and lets the loss
do the smoothing, ``F.cross_entropy(logits, labels, label_smoothing=eps)``,
which is the same loss (PyTorch mixes the one-hot target with the uniform
distribution exactly like this) without materialising any (B*T, V) target.

Batches are fixed-length token sequences made once in ``build`` and kept on the
device.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

SOURCE = "https://docs.pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html"
SOURCE_SAYS = (
    "torch.nn.CrossEntropyLoss docs: 'The performance of this criterion is generally better when target "
    "contains class indices, as this allows for optimized computation. Consider providing target as class "
    "probabilities only when a single class label per minibatch item is too restrictive', and label_smoothing "
    "mixes the target with a uniform distribution for you. The forum thread "
    "https://discuss.pytorch.org/t/functional-cross-entropy-with-one-hot-vector/207831 (KFrank) says the same "
    "for one-hot float targets: integer class labels are more efficient, so there is no reason to one-hot encode."
)
REMEDY = (
    "pass the integer class labels, not one-hot probability targets, and let the loss smooth: "
    "F.cross_entropy(logits, labels, label_smoothing=0.1)"
)
REMEDY_WORDS = (
    "label_smoothing",
    "built-in label smoothing",
    "builtin label smoothing",
    "class indices",
    "class-index",
    "class index targets",
    "integer labels",
    "integer targets",
    "integer class labels",
    "index targets",
    "instead of one-hot",
    "instead of one hot",
    "without one-hot",
    "avoid one-hot",
    "avoid the one-hot",
    "drop the one-hot",
    "remove the one-hot",
    "no one-hot",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        cfg = GPT2Config(vocab_size=50257, n_positions=1024, n_embd=512, n_layer=4, n_head=8)
        B, T, n_batches = 16, 512, 4
    else:
        cfg = GPT2Config(
            vocab_size=512,
            n_positions=64,
            n_embd=32,
            n_layer=2,
            n_head=2,
            bos_token_id=0,
            eos_token_id=0,
        )
        B, T, n_batches = 2, 16, 2
    V = cfg.vocab_size
    eps = 0.1
    model = GPT2LMHeadModel(cfg).to(dev).train()
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=cuda, foreach=None if cuda else True)
    # T+1 tokens per row: inputs are [:, :-1], next-token labels are [:, 1:]
    batches = [torch.randint(0, V, (B, T + 1), device=dev) for _ in range(n_batches)]
    it = [0]

    def step() -> None:
        seq = batches[it[0] % n_batches]
        it[0] += 1
        ids, labels = seq[:, :-1], seq[:, 1:].reshape(-1)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            logits = cmodel(input_ids=ids).logits
        logits = logits.float().reshape(-1, V)
        if remedy:
            loss = F.cross_entropy(logits, labels, label_smoothing=eps)
        else:
            target = F.one_hot(labels, V).float()
            target = target * (1.0 - eps) + eps / V
            loss = F.cross_entropy(logits, target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
