"""Blind verdict loop: per-batch padding + ``dynamic=False`` -> recompile until the limit, then eager.

Source: https://github.com/NVIDIA/TensorRT-LLM/issues/6142 ("Optimize
torch.compile's recompilation limit").  Every new batch / sequence-length
combination fails the shape guards of the compiled graph and triggers a
recompile; after the 8th unique shape Dynamo hits ``config.recompile_limit (8)``
and subsequent calls with new shapes run in regular eager mode, "so we lose the
speed-ups from torch.compile".  (The same pattern: varlen training with
``torch.compile(model, dynamic=False)`` where the max sequence length of each
batch differs, https://github.com/Dao-AILab/quack/issues/150.)

The loop pads each batch to its own longest sequence (lengths drawn at random
between 24 and 160 each step) and compiles the small token model with
``dynamic=False``.  The first ~8 steps recompile; after that nearly every step
has a new length, so it runs eagerly *plus* the cost of checking (and failing)
the guards of all cached graphs.  Expected: the compiled step is not faster.

Measured here: Dynamo stops at 8 graphs (recompile limit); the warm-up of the
first compiled child takes ~35 s (8 compiles of ~4 s each; later children hit
the Inductor cache).  Median ratio 1.02; one of the 3 pairs came out at 1.17
because that pair's eager child was slow (4.8 ms vs 4.1 ms in the others), so
this case sits near the 5% line and is sensitive to noise.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = "https://github.com/NVIDIA/TensorRT-LLM/issues/6142"
SOURCE_SAYS = (
    "Each new batch/sequence-length shape fails the compiled graph's guards and recompiles; after the 8th "
    "unique shape Dynamo hits config.recompile_limit (8) and later calls run in regular eager mode, losing the speed-up."
)
EXPECT = "not_faster"

VOCAB, D, B = 1000, 64, 16


class TokenModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.ff1 = nn.Linear(D, 2 * D)
        self.ff2 = nn.Linear(2 * D, D)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, 2)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.emb(tokens)
        h = h + self.ff2(F.gelu(self.ff1(self.norm(h))))
        m = mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        return self.head(pooled)


def build() -> Callable[[], None]:
    torch.manual_seed(0)
    model = TokenModel()
    cmodel = torch.compile(model, dynamic=False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(0)

    def step() -> None:
        # "pad to the longest sequence in the batch": a different T almost every step
        lengths = torch.randint(8, 161, (B,), generator=gen)
        lengths[0] = torch.randint(24, 161, (1,), generator=gen)
        T = int(lengths.max())
        tokens = torch.randint(0, VOCAB, (B, T), generator=gen)
        mask = torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)
        y = torch.randint(0, 2, (B,), generator=gen)
        out = cmodel(tokens, mask)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step
