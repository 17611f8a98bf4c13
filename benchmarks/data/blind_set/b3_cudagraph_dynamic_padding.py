"""Blind-set loop: ``mode="reduce-overhead"`` with per-batch ("dynamic") padding, so every step has a new shape.

A small causal LM is compiled with ``torch.compile(mode="reduce-overhead")``
(CUDA graphs), the right choice for a launch-bound model.  But its batches are
padded to the longest sequence *in each batch*, the usual dynamic-padding
collator, so the sequence length changes almost every step.  After the second
length Dynamo makes the length dynamic, and CUDA-graph trees then record a new
CUDA graph for every distinct length ("CUDAGraph supports dynamic shapes by
recording a new graph for each distinct input size ... We have observed N
distinct sizes").  A new length is never replayed, so the steps run the
warm-up path and the CUDA graphs never pay off.  The remedy pads every batch
to one fixed length (the maximum, 512), masking the padding out of the loss,
so a single graph is recorded once and replayed every step.

The batches are pre-built (the same token ids in both variants); the lengths
come from a fixed-seed generator.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/pytorch/pytorch/issues/188150"
SOURCE_SAYS = (
    "pytorch/pytorch#188150 'torch.compile reduce-overhead: CUDAGraphs recompiles on every batch with dynamic "
    "padding (HF training loop)': with per-batch padding CUDA graphs see a different input shape each batch and "
    "record a new graph for each distinct size, erasing the speed-up; workaround: pad all inputs to a fixed "
    "length so CUDA graphs see one shape (the inductor warning itself suggests padding inputs to a few fixed "
    "shapes)."
)
REMEDY = "pad every batch to one fixed sequence length (or a few buckets) so the CUDA graph is recorded once and replayed"
REMEDY_WORDS = (
    "pad to a fixed",
    "pad all",
    "pad every",
    "pad the inputs",
    "pad inputs",
    "padding to a fixed",
    "fixed length",
    "fixed sequence length",
    "fixed shape",
    "max_length",
    "pad_to_multiple_of",
    "bucket",
    "distinct sizes",
    "distinct input size",
    "re-record",
    "rerecord",
)


class Block(nn.Module):
    def __init__(self, d: int, n_head: int) -> None:
        super().__init__()
        self.n_head = n_head
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, C))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class LMLoss(nn.Module):
    """Causal LM returning the mean next-token loss over non-padding positions (labels == -100 ignored)."""

    def __init__(self, vocab: int, max_t: int, d: int, n_head: int, n_layer: int) -> None:
        super().__init__()
        self.vocab = vocab
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_t, d)
        self.blocks = nn.ModuleList([Block(d, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        T = ids.shape[1]
        x = self.tok(ids) + self.pos(torch.arange(T, device=ids.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(
            logits.float().view(-1, self.vocab), labels.view(-1), ignore_index=-100
        )


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        B, max_t, min_t, d, n_head, n_layer, vocab, n_batches = 8, 512, 64, 256, 4, 8, 4096, 96
    else:
        B, max_t, min_t, d, n_head, n_layer, vocab, n_batches = 2, 32, 8, 32, 2, 2, 64, 6
    model = LMLoss(vocab, max_t, d, n_head, n_layer).to(dev)
    # CUDA graphs for a launch-bound model; on CPU inductor skips cudagraphs, so this is default mode there
    cmodel = torch.compile(model, mode="reduce-overhead")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=cuda, foreach=None if cuda else True)

    # Pre-built batches of variable-length sequences, padded the way a collator would.
    g = torch.Generator().manual_seed(1234)
    batches: list[tuple[torch.Tensor, torch.Tensor]] = []
    for _ in range(n_batches):
        # length-grouped batches: the longest sequence sets the batch length, the others are a bit shorter
        longest = int(torch.randint(min_t, max_t + 1, (1,), generator=g))
        lens = torch.randint(longest // 2, longest + 1, (B,), generator=g)
        lens[0] = longest
        pad_to = max_t if remedy else int(lens.max())  # fixed length vs. longest-in-batch
        ids = torch.zeros(B, pad_to, dtype=torch.long)
        labels = torch.full((B, pad_to), -100, dtype=torch.long)
        for i, n in enumerate(lens.tolist()):
            seq = torch.randint(1, vocab, (n + 1,), generator=g)
            ids[i, :n] = seq[:n]
            labels[i, :n] = seq[1:]
        batches.append((ids.to(dev), labels.to(dev)))
    it = iter(range(10**9))

    def step() -> None:
        ids, labels = batches[next(it) % n_batches]
        if cuda:
            torch.compiler.cudagraph_mark_step_begin()
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            loss = cmodel(ids, labels)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
