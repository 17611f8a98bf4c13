"""Plain-torch timing of c3_droppath_regional.py: argv[1] in {orig, buffer}.
orig: timm-style DropPath keeps its rate as a Python float, a different one per block
(linspace stochastic depth); each block is compiled on its own (regional compilation).
buffer: the same rate kept in a per-block tensor buffer (keep probability), mask drawn with
torch.rand(...) < keep, so every block reuses one compiled graph."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "orig"
DIM, HEADS, DEPTH, PATCH, IMG, N_CLS = 96, 4, 8, 4, 32, 10


class DropPath(nn.Module):
    def __init__(self, drop_prob):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        if self.drop_prob == 0.0 or not self.training:
            return x
        keep = 1.0 - self.drop_prob
        mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
        return x * mask / keep


class DropPathBuffer(nn.Module):
    def __init__(self, drop_prob):
        super().__init__()
        self.register_buffer("keep", torch.tensor(1.0 - drop_prob), persistent=False)

    def forward(self, x):
        if not self.training:
            return x
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        mask = (torch.rand(shape, dtype=x.dtype) < self.keep).to(x.dtype)
        return x * mask / self.keep


DP = DropPathBuffer if MODE == "buffer" else DropPath


class Block(nn.Module):
    def __init__(self, dim, heads, drop_prob):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.dp1 = DP(drop_prob)
        self.dp2 = DP(drop_prob)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        x = x + self.dp1(self.proj(a.transpose(1, 2).reshape(b, t, d)))
        return x + self.dp2(self.fc2(F.gelu(self.fc1(self.ln2(x)))))


class TinyViT(nn.Module):
    def __init__(self, drop_path_rate=0.1):
        super().__init__()
        self.embed = nn.Conv2d(3, DIM, PATCH, stride=PATCH)
        self.pos = nn.Parameter(torch.zeros(1, (IMG // PATCH) ** 2, DIM))
        rates = torch.linspace(0, drop_path_rate, DEPTH).tolist()
        self.blocks = nn.ModuleList(Block(DIM, HEADS, r) for r in rates)
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, N_CLS)

    def forward(self, img):
        x = self.embed(img).flatten(2).transpose(1, 2) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x).mean(1))


torch.manual_seed(0)
model = TinyViT()
for blk in model.blocks:
    blk.compile()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
xs, ys = torch.randn(3, 16, 3, IMG, IMG), torch.randint(0, N_CLS, (3, 16))
t = time.perf_counter()
for step in range(3):
    loss = F.cross_entropy(model(xs[step]), ys[step])
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
