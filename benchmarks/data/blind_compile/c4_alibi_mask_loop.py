"""A small ALiBi decoder language model trained with model.compile(). The ALiBi bias / causal
mask is (re)built at the top of forward by a helper that fills it row by row in a Python loop
(`for i in range(T): bias[i, :i+1] = ...`), as in many ported ALiBi implementations. Under
torch.compile Dynamo unrolls that loop: the mask construction becomes T slice-assignments in
the traced graph that Inductor must lower on every compile, so the graph is several times
larger than the model itself and the compile takes much longer than it should.

User complaint: "compiling this 2-layer model takes longer than compiling a 12-layer one; the
compiled graph has hundreds of ops and most of them are copies into a mask. Why, and what do
I change?"
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issue #115626 'Alternatives to compiling a for loop' (ALiBi mask built by "
    "`for i in range(max_seq_len): alibi[i, :i+1] = ...` inside the model); pytorch/pytorch "
    "issue #111441 (lezcano: 'Dynamo unrolls loops, and it's not particularly fast at tracing "
    "through them'); docs 'Dealing with Recompilations'/'torch.compile programming model' "
    "(Dynamo traces Python control flow by unrolling it)"
)
REMEDY = (
    "Build the ALiBi bias once, outside the compiled forward: precompute it in __init__ for "
    "the maximum length and register it as a (non-persistent) buffer that forward slices, or "
    "build it with vectorized tensor ops (torch.arange / torch.tril) instead of a per-row "
    "Python loop. The traced graph then holds only the model."
)
REMEDY_WORDS = (
    "precompute",
    "pre-compute",
    "register_buffer",
    "as a buffer",
    "in __init__",
    "once in init",
    "cache the mask",
    "cache the bias",
    "vectoriz",
    "torch.arange",
    "torch.tril",
    "without a python loop",
    "without the loop",
    "instead of a python loop",
    "instead of the loop",
)
EXPECT = "remedy"
WRONG_WORDS = ("regional", "dynamic=true")

T, HEADS, D, VOCAB, LAYERS, BATCH, STEPS = 80, 4, 128, 256, 2, 8, 3


def alibi_bias(n_head, seq_len):
    slopes = torch.tensor([2 ** (-8 * (h + 1) / n_head) for h in range(n_head)])
    bias = torch.full((seq_len, seq_len), float("-inf"))
    for i in range(seq_len):
        bias[i, : i + 1] = -torch.arange(i, -1, -1, dtype=torch.float32)
    return slopes[:, None, None] * bias


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1 = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.n2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

    def forward(self, x, bias):
        B, L, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).view(B, L, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        x = x + self.proj(a.transpose(1, 2).reshape(B, L, D))
        return x + self.mlp(self.n2(x))


class AlibiLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.layers = nn.ModuleList([DecoderLayer() for _ in range(LAYERS)])
        self.norm = nn.LayerNorm(D)
        self.out = nn.Linear(D, VOCAB)

    def forward(self, idx):
        bias = alibi_bias(HEADS, idx.shape[1])  # rebuilt every call
        x = self.emb(idx)
        for layer in self.layers:
            x = layer(x, bias)
        return self.out(self.norm(x))


def run(fresh: bool):
    torch.manual_seed(0)
    model = AlibiLM()
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    data = torch.randint(0, VOCAB, (STEPS, BATCH, T + 1))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for i in range(STEPS):
            logits = model(data[i, :, :-1])
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), data[i, :, 1:].reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
