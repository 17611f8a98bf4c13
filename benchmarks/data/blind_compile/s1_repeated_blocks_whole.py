"""A small GPT whose 6 identical transformer blocks are compiled as one whole model.

User complaint: "torch.compile(model) takes ages before the first training step, and it
gets worse every time I add layers."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "PyTorch recipe 'Reducing torch.compile cold start compilation time with regional "
    "compilation' (https://docs.pytorch.org/tutorials/recipes/regional_compilation.html); "
    "docs 'Reducing Compile Time' (programming_model.reducing_compile_time) and "
    "torch.compiler.nested_compile_region"
)
REMEDY = (
    "Compile the repeated transformer block instead of the whole model (regional "
    "compilation: layer.compile() / torch.compile on each block) or mark the block with "
    "torch.compiler.nested_compile_region, so the block is compiled once and reused."
)
REMEDY_WORDS = ("regional", "nested_compile_region", "block.compile", "each block")
EXPECT = "remedy"

VOCAB, D, HEADS, LAYERS, SEQ, BATCH = 256, 64, 4, 6, 32, 4


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.ln2 = nn.LayerNorm(D)
        self.fc = nn.Linear(D, 4 * D)
        self.out = nn.Linear(4 * D, D)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q, k, v = (z.view(b, t, HEADS, D // HEADS).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, D))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.pos = nn.Embedding(SEQ, D)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def run(fresh: bool):
    torch.manual_seed(0)
    model = TinyGPT()
    compiled = torch.compile(model)  # the whole model, as most tutorials show
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    data = torch.randint(0, VOCAB, (8, BATCH, SEQ + 1))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for step in range(4):
            x, y = data[step, :, :-1], data[step, :, 1:]
            logits = compiled(x)
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
