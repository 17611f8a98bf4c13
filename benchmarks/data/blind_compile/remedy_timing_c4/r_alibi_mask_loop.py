"""Plain-torch timing of c4_alibi_mask_loop.py: argv[1] in {without, with}.
without: the ALiBi bias is rebuilt at the top of the compiled forward by a per-row Python loop
(T=80 slice assignments unrolled into the graph). with: the same bias is precomputed once in
__init__ and registered as a non-persistent buffer that forward uses; the graph holds only the
model."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "without"
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


class AlibiLMBuffered(AlibiLM):
    def __init__(self):
        super().__init__()
        self.register_buffer("alibi", alibi_bias(HEADS, T), persistent=False)

    def forward(self, idx):
        L = idx.shape[1]
        bias = self.alibi[:, :L, :L]
        x = self.emb(idx)
        for layer in self.layers:
            x = layer(x, bias)
        return self.out(self.norm(x))


torch.manual_seed(0)
model = AlibiLM() if MODE == "without" else AlibiLMBuffered()
model.compile()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
data = torch.randint(0, VOCAB, (STEPS, BATCH, T + 1))
t = time.perf_counter()
for i in range(STEPS):
    logits = model(data[i, :, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), data[i, :, 1:].reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
