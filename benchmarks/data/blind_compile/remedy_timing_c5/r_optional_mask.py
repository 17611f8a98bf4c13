"""DROPPED candidate (no c5 script; see README_c5.md), planned as c5_optional_mask_none: attention mask passed only for padded batches (else None).

without: `mask = None` when a batch has no padding, a bool padding mask otherwise.
with:    every batch passes a bool mask (all True when there is no padding).
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

VOCAB, D, HEADS, N_CLS, B, L = 2000, 96, 4, 5, 16, 48
PADDED = (False, True, False, True, False, True, False, True)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.n1 = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.n2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))
        self.head = nn.Linear(D, N_CLS)

    def forward(self, ids, mask=None):
        x = self.emb(ids)
        q, k, v = self.qkv(self.n1(x)).view(B, L, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        am = mask[:, None, None, :] if mask is not None else None
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=am)
        x = x + self.proj(a.transpose(1, 2).reshape(B, L, D))
        x = x + self.mlp(self.n2(x))
        if mask is None:
            pooled = x.mean(1)
        else:
            m = mask.unsqueeze(-1).to(x.dtype)
            pooled = (x * m).sum(1) / m.sum(1)
        return self.head(pooled)


def batches(always_mask):
    g = torch.Generator().manual_seed(0)
    out = []
    for padded in PADDED:
        ids = torch.randint(1, VOCAB, (B, L), generator=g)
        lengths = torch.randint(L // 2, L + 1, (B,), generator=g) if padded else torch.full((B,), L)
        mask = torch.arange(L)[None, :] < lengths[:, None]
        ids = ids.masked_fill(~mask, 0)
        out.append(
            (
                ids,
                mask if (padded or always_mask) else None,
                torch.randint(0, N_CLS, (B,), generator=g),
            )
        )
    return out


def main(mode):
    torch.manual_seed(0)
    model = Encoder()
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = batches(always_mask=(mode == "with"))
    t = time.perf_counter()
    for ids, mask, y in data:
        F.cross_entropy(model(ids, mask), y).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
