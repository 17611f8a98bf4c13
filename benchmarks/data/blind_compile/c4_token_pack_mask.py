"""A token-classification / sentence-embedding encoder served with model.compile(). To skip
work on padding, forward packs the real tokens with boolean-mask indexing (`h[~pad]`), runs
the heavy blocks on the packed (N_tokens, D) tensor and pools per sentence. `h[mask]` and
`mask.nonzero()` have data-dependent output sizes, so Dynamo graph-breaks at them; the pieces
after the breaks see a new token count on every batch, compile once for the first count, then
recompile with a dynamic size. One forward becomes five graphs to compile instead of one.

User complaint: "TORCH_LOGS=graph_breaks shows a break at the mask indexing and the recompile
log shows the second half of forward recompiling on a size; I only wanted to skip padding."
"""

import compilescope
import torch
import torch.nn as nn

SOURCE = (
    "docs 'Common Graph Breaks' / torch.compile programming model (data-dependent operations: "
    "'The general workaround for these graph breaks is to avoid doing data-dependent "
    "operations'); docs 'Dynamic shapes' / torch._dynamo.config.capture_dynamic_output_shape_ops "
    "(boolean-mask indexing / nonzero has a data-dependent output shape and graph-breaks unless "
    "captured)"
)
REMEDY = (
    "Avoid the data-dependent boolean indexing: keep the padded (B, T, D) layout and zero out / "
    "mask the padding with torch.where or a multiplication by the mask (and a masked mean for "
    "pooling), so forward is one static graph; or set "
    "torch._dynamo.config.capture_dynamic_output_shape_ops = True to keep the indexing in-graph."
)
REMEDY_WORDS = (
    "torch.where",
    "multiply by the mask",
    "multiplying by the mask",
    "multiply with the mask",
    "masked mean",
    "mask out",
    "zero out",
    "instead of boolean",
    "avoid boolean",
    "avoid the boolean",
    "capture_dynamic_output_shape_ops",
    "keep the padded",
)
EXPECT = "remedy"

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


def run(fresh: bool):
    torch.manual_seed(0)
    model = PackedEncoder().eval()
    model.compile()
    ids = torch.randint(0, VOCAB, (CALLS, BATCH, SEQ))
    lengths = torch.randint(SEQ // 4, SEQ + 1, (CALLS, BATCH))
    pad = torch.arange(SEQ)[None, None, :] >= lengths[..., None]
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        with torch.no_grad():
            for i in range(CALLS):
                model(ids[i], pad[i])
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
