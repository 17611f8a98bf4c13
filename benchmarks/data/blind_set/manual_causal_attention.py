"""Blind-set loop: GPT block with hand-written causal attention (nanoGPT "slow attention" path).

The attention is written out as matmul -> masked_fill(tril mask) -> softmax ->
matmul, which materialises the (B, heads, T, T) score matrix in memory in both
forward and backward.  The remedy is ``F.scaled_dot_product_attention(...,
is_causal=True)``, which dispatches to a fused flash / memory-efficient kernel
on CUDA.  Both variants are compiled and run under bf16 autocast on CUDA.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html"
SOURCE_SAYS = (
    "scaled_dot_product_attention is an efficient implementation equivalent to "
    "softmax(q @ k^T * scale + causal mask) @ v, and may call optimized (flash / memory-efficient) "
    "kernels on CUDA; nanoGPT keeps the manual masked_fill/softmax path only as the 'slow attention' "
    "fallback for PyTorch < 2.0."
)
REMEDY = "use F.scaled_dot_product_attention(is_causal=True) (flash attention)"
REMEDY_WORDS = (
    "scaled_dot_product_attention",
    "sdpa",
    "flash attention",
    "flash-attention",
    "flashattention",
    "flash_attention",
    "fused attention",
    "memory-efficient attention",
)


def _make_sync(dev: torch.device) -> Callable[[], None]:
    if dev.type == "cuda":
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


class CausalSelfAttention(nn.Module):
    def __init__(self, d: int, n_head: int, block: int, use_sdpa: bool) -> None:
        super().__init__()
        self.n_head = n_head
        self.use_sdpa = use_sdpa
        self.c_attn = nn.Linear(d, 3 * d, bias=False)
        self.c_proj = nn.Linear(d, d, bias=False)
        self.register_buffer(
            "bias", torch.tril(torch.ones(block, block)).view(1, 1, block, block), persistent=False
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        if self.use_sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, d: int, n_head: int, block: int, use_sdpa: bool) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, n_head, block, use_sdpa)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(
        self, vocab: int, d: int, n_head: int, n_layer: int, block: int, use_sdpa: bool
    ) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block, d)
        self.blocks = nn.ModuleList([Block(d, n_head, block, use_sdpa) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        pos = torch.arange(T, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for b in self.blocks:
            x = b(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.view(-1))


def build(device: str, remedy: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    torch.manual_seed(0)
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    if cuda:
        vocab, d, n_head, n_layer, T, B = 8192, 768, 12, 2, 1024, 8
    else:
        vocab, d, n_head, n_layer, T, B = 64, 32, 2, 1, 16, 2
    model = TinyGPT(vocab, d, n_head, n_layer, T, use_sdpa=remedy).to(dev)
    cmodel = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    idx = torch.randint(0, vocab, (B, T), device=dev)
    tgt = torch.randint(0, vocab, (B, T), device=dev)

    def step() -> None:
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=cuda):
            loss = cmodel(idx, tgt)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, _make_sync(dev)
