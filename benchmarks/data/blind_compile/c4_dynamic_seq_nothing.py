"""CONTROL. A small intent-classification encoder served with model.compile() under
inference_mode. Requests have different sentence lengths, and the service already does what
the dynamic-shapes docs recommend: before the first call it marks the sequence dimension of
the token batch dynamic (torch._dynamo.mark_dynamic(ids, 1, min=2, max=128)), so the model is
compiled once, with a symbolic length, and every later length reuses that graph. Batch size
is fixed, there are no Python scalars, flags, or options that change between calls, and no
repeated blocks large enough to be worth regional compilation.

User complaint: "is there anything left to make the compile faster? It compiles once at start-up
and never again."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "docs 'Dynamic shapes' / torch._dynamo.mark_dynamic (mark a dimension dynamic up front to "
    "avoid the first recompile); docs 'Where to apply torch.compile?' (model.compile() on the "
    "top-level module); docs 'Dealing with Recompilations'"
)
REMEDY = "Nothing to change: one dynamic graph, compiled once and reused for every length."
REMEDY_WORDS = ("nothing",)
EXPECT = "nothing"
WRONG_WORDS = ("pad to", "bucket", "dynamic=true", "dynamic=false")

VOCAB, D, HEADS, N_CLS, BATCH = 3000, 96, 4, 12, 8
LENGTHS = (37, 12, 64, 23, 50, 9, 41, 30)


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1 = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.n2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

    def forward(self, x):
        B, L, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).view(B, L, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(B, L, D))
        return x + self.mlp(self.n2(x))


class IntentEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.layer = EncoderLayer()
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, N_CLS)

    def forward(self, ids):
        h = self.layer(self.emb(ids))
        return self.head(self.norm(h).mean(1))


def run(fresh: bool):
    torch.manual_seed(0)
    model = IntentEncoder().eval()
    model.compile()
    requests = [torch.randint(0, VOCAB, (BATCH, n)) for n in LENGTHS]
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        with torch.inference_mode():
            for ids in requests:
                torch._dynamo.mark_dynamic(ids, 1, min=2, max=128)
                model(ids)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
