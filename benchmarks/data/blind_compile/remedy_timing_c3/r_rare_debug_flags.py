"""Plain-torch timing of c3_rare_debug_flags.py: argv[1] in {orig, eager_on_recompile, uncompiled}.
orig: a compiled text-classifier service; a few requests ask for debug outputs
(return_attn / return_hidden bool kwargs), and each new flag combination recompiles the whole
model for a request or two. eager_on_recompile: after the warm-up call the service sets
torch.compiler.set_stance("eager_on_recompile"), so those rare combinations run eagerly and
the common path keeps its compiled graph. uncompiled: the rare debug requests are routed to the
uncompiled module."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "orig"
VOCAB, D, HEADS, LAYERS, SEQ, BATCH, N_CLS = 2000, 64, 4, 1, 32, 8, 5


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-1, -2) / (D // HEADS) ** 0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)))), att


class TextClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.pos = nn.Parameter(torch.zeros(1, SEQ, D))
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.head = nn.Linear(D, N_CLS)

    def forward(self, ids, return_attn=False, return_hidden=False):
        x = self.emb(ids) + self.pos
        attns, hidden = [], []
        for layer in self.layers:
            x, att = layer(x)
            if return_attn:
                attns.append(att)
            if return_hidden:
                hidden.append(x)
        out = {"probs": torch.softmax(self.head(x.mean(1)), -1)}
        if return_attn:
            out["attn"] = torch.stack(attns, 1)
        if return_hidden:
            out["hidden"] = torch.stack(hidden, 1)
        return out


torch.manual_seed(0)
model = TextClassifier().eval()
compiled = torch.compile(model)
requests = torch.randint(0, VOCAB, (24, BATCH, SEQ))
DEBUG = {
    7: dict(return_attn=True),
    13: dict(return_hidden=True),
    19: dict(return_attn=True, return_hidden=True),
}
t = time.perf_counter()
with torch.no_grad():
    for i, ids in enumerate(requests):
        flags = DEBUG.get(i, {})
        if MODE == "uncompiled" and flags:
            out = model(ids, **flags)
        else:
            out = compiled(ids, **flags)
        if MODE == "eager_on_recompile" and i == 0:
            torch.compiler.set_stance("eager_on_recompile")
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
