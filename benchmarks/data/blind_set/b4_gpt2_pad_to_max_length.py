"""Blind-set loop: every batch padded to the model's maximum length instead of the longest sample.

The user fine-tunes a GPT-2 (Hugging Face ``transformers``, built from a config
with random weights) on short texts of 24 to 128 tokens.  The tokenizer was
called with ``padding="max_length"`` (and the model's 1024-token limit), so
every batch reaches the model as 16 x 1024 tokens of which about 7 in 8 are
padding.  The attention mask and the ``-100`` labels keep the padding out of
the loss, but the GPU still runs every layer, the attention and the 50k-word
LM head over all 1024 positions, forward and backward.  The remedy is dynamic
padding: pad each batch only to its longest sample (what
``DataCollatorWithPadding`` / ``padding="longest"`` does), rounded up with
``pad_to_multiple_of`` so that the compiled model sees one shape (128 here).

The batches are collated once in ``build`` (as a DataLoader would) and kept on
the device, so the step contains only the training work.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "https://ai.lefebvre-sarrut.eu/2020/05/20/divide-hugging-face-transformers-training-time-by-2-or-more-"
    "with-dynamic-padding-and-uniform-length-batching/"
)
SOURCE_SAYS = (
    "'Divide Hugging Face Transformers training time by 2 or more with dynamic padding and uniform length "
    "batching': padding every sequence to one fixed maximum length spends most of the computation on pad "
    "tokens; padding each batch only to its longest sequence (dynamic padding, what transformers' "
    "DataCollatorWithPadding does: https://huggingface.co/docs/transformers/main_classes/data_collator) cut "
    "training time by 2x or more without hurting accuracy; the Hugging Face course ('Dynamic padding', "
    "https://huggingface.co/learn/llm-course/chapter3/2) recommends the same collator."
)
REMEDY = (
    "dynamic padding: pad each batch to its longest sequence (DataCollatorWithPadding / padding='longest', with "
    "pad_to_multiple_of to bound the number of shapes) instead of padding='max_length'"
)
REMEDY_WORDS = (
    "dynamic padding",
    "dynamically pad",
    "datacollatorwithpadding",
    "padding='longest'",
    'padding="longest"',
    "padding=true",
    "pad to the longest",
    "pad to longest",
    "pad each batch",
    "longest sequence in the batch",
    "longest in the batch",
    "pad_to_multiple_of",
    "less padding",
    "reduce padding",
    "padding-free",
    "sequence packing",
    "pack sequences",
    "group_by_length",
    "bucketing",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def _collate(
    samples: list[torch.Tensor], pad_to: int, pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-pad a list of 1-D token tensors to ``pad_to`` (what the tokenizer/collator returns)."""
    B = len(samples)
    ids = torch.full((B, pad_to), pad_id, dtype=torch.long)
    mask = torch.zeros((B, pad_to), dtype=torch.long)
    for i, s in enumerate(samples):
        ids[i, : len(s)] = s
        mask[i, : len(s)] = 1
    labels = ids.masked_fill(mask == 0, -100)
    return ids, mask, labels


class CausalLMWithLoss(nn.Module):
    """Model plus next-token loss (pad positions carry label -100), compiled as one graph."""

    def __init__(self, lm: nn.Module) -> None:
        super().__init__()
        self.lm = lm

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        logits = self.lm(input_ids=ids, attention_mask=mask, use_cache=False).logits
        return F.cross_entropy(
            logits[:, :-1].float().reshape(-1, logits.size(-1)),
            labels[:, 1:].reshape(-1),
            ignore_index=-100,
        )


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)
        B, n_batches, lo, hi = 16, 4, 24, 128
    else:
        cfg = GPT2Config(
            n_layer=2,
            n_embd=64,
            n_head=4,
            n_positions=64,
            vocab_size=512,
            bos_token_id=0,
            eos_token_id=0,
        )
        B, n_batches, lo, hi = 4, 2, 4, 16
    model_max_length = cfg.n_positions
    pad_id = cfg.eos_token_id  # GPT-2 has no pad token; the usual choice is eos
    model = GPT2LMHeadModel(cfg).to(dev).train()
    cmodel = torch.compile(CausalLMWithLoss(model))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=cuda, foreach=None if cuda else True)

    # a small text data set, already tokenized: samples of lo..hi tokens
    batches = []
    for _ in range(n_batches):
        lengths = torch.randint(lo, hi + 1, (B,))
        lengths[0] = hi  # every batch holds at least one long sample
        samples = [torch.randint(0, cfg.vocab_size, (int(n),)) for n in lengths]
        if remedy:
            # DataCollatorWithPadding(tokenizer, pad_to_multiple_of=64): longest in batch, rounded up
            longest = max(len(s) for s in samples)
            pad_to = -(-longest // 64) * 64 if cuda else longest
        else:
            # tokenizer(texts, padding="max_length", truncation=True): pad to the model limit
            pad_to = model_max_length
        batches.append(tuple(t.to(dev) for t in _collate(samples, pad_to, pad_id)))
    it = [0]

    def step() -> None:
        ids, mask, labels = batches[it[0] % n_batches]
        it[0] += 1
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            loss = cmodel(ids, mask, labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
