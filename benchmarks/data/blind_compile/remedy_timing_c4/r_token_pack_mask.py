"""Plain-torch timing of c4_token_pack_mask.py: argv[1] in {without, with}.
without: forward packs real tokens with boolean-mask indexing `h[~pad]` and `nonzero()`
(data-dependent sizes: graph breaks, then the pieces after them compile for the first token
count and again with a dynamic size). with: the padded (B, T, D) layout is kept, padding is zeroed by
multiplying with the mask and pooled with a masked mean, so forward is one static graph."""

import sys
import time

import torch
import torch.nn as nn

MODE = sys.argv[1] if len(sys.argv) > 1 else "without"
VOCAB, D, SEQ, BATCH, N_CLS, CALLS = 2000, 128, 64, 16, 6, 5


class FFBlock(nn.Module):
    def __init__(self, d=D):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class PackedEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.pos = nn.Parameter(torch.zeros(SEQ, D))
        self.stem = FFBlock()
        self.blocks = nn.Sequential(FFBlock(), FFBlock())
        self.head = nn.Linear(D, N_CLS)

    def forward(self, ids, pad):
        h = self.stem(self.emb(ids) + self.pos)
        keep = ~pad
        tok = h[keep]  # pack the real tokens: (n_tokens, D)
        tok = self.blocks(tok)
        seg = keep.nonzero()[:, 0]  # sentence id of each packed token
        pooled = torch.zeros(ids.shape[0], D).index_add_(0, seg, tok)
        pooled = pooled / keep.sum(1, keepdim=True).clamp(min=1)
        return self.head(pooled)


class MaskedEncoder(PackedEncoder):
    def forward(self, ids, pad):
        h = self.stem(self.emb(ids) + self.pos)
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        tok = self.blocks(h * keep) * keep
        pooled = tok.sum(1) / keep.sum(1).clamp(min=1)
        return self.head(pooled)


torch.manual_seed(0)
model = (PackedEncoder() if MODE == "without" else MaskedEncoder()).eval()
model.compile()
ids = torch.randint(0, VOCAB, (CALLS, BATCH, SEQ))
lengths = torch.randint(SEQ // 4, SEQ + 1, (CALLS, BATCH))
pad = torch.arange(SEQ)[None, None, :] >= lengths[..., None]
t = time.perf_counter()
with torch.no_grad():
    for i in range(CALLS):
        model(ids[i], pad[i])
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]), "graph_breaks", sum(counters["graph_break"].values()))
