"""Blind-set loop: activation (gradient) checkpointing switched on although memory is plentiful.

A small GPT-2 (Hugging Face ``transformers``, built from a config with random
weights, no download) is trained with ``model.gradient_checkpointing_enable()``,
copied from a large-model recipe.  At this size and batch the activations use
only a few GB of the GPU's memory, so checkpointing buys nothing; it just
re-runs every transformer block's forward pass during backward (roughly a third
more matmul work per step).  The remedy is to leave gradient checkpointing off
(``model.gradient_checkpointing_disable()``) when the batch fits without it.

Non-reentrant checkpointing (``use_reentrant=False``) is passed explicitly so the
compiled model stays one graph in both variants, on old and new ``transformers``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

SOURCE = "https://huggingface.co/docs/transformers/en/grad_checkpointing"
SOURCE_SAYS = (
    "Hugging Face Transformers docs, 'Gradient checkpointing': checkpointing discards activations and "
    "recomputes them in the backward pass, so training is ~20% slower, in exchange for less activation "
    "memory; the single-GPU training guide (perf_train_gpu_one) adds that if the batch already fits in memory "
    "there is no reason to apply memory-optimizing techniques because they can slow down training."
)
REMEDY = "disable gradient checkpointing (model.gradient_checkpointing_disable()) since the activations fit in memory"
REMEDY_WORDS = (
    "gradient checkpointing",
    "gradient_checkpointing",
    "activation checkpointing",
    "activation_checkpointing",
    "checkpointing",
    "torch.utils.checkpoint",
    "recompute",
    "recomputation",
    "rematerializ",
)


class LMWithLoss(torch.nn.Module):
    """Next-token loss around the HF model, so forward and loss compile together."""

    def __init__(self, lm: torch.nn.Module, vocab: int) -> None:
        super().__init__()
        self.lm = lm
        self.vocab = vocab

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        logits = self.lm(input_ids=ids).logits
        return F.cross_entropy(
            logits[:, :-1].reshape(-1, self.vocab).float(), ids[:, 1:].reshape(-1)
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
        B, T, n_layer, n_embd, n_head, vocab = 8, 1024, 6, 768, 12, 8192
    else:
        B, T, n_layer, n_embd, n_head, vocab = 2, 32, 2, 64, 4, 512
    cfg = GPT2Config(
        n_layer=n_layer,
        n_embd=n_embd,
        n_head=n_head,
        n_positions=T,
        vocab_size=vocab,
        bos_token_id=0,
        eos_token_id=0,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        use_cache=False,
    )
    model = GPT2LMHeadModel(cfg).to(dev)
    model.train()
    if not remedy:
        # copied from a large-model fine-tuning recipe
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    cmodel = torch.compile(LMWithLoss(model, vocab))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=cuda, foreach=None if cuda else True)
    ids = torch.randint(0, vocab, (B, T), device=dev)

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            loss = cmodel(ids)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
