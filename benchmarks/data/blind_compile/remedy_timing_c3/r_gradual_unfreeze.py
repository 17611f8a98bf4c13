"""Plain-torch timing of c3_gradual_unfreeze.py: argv[1] in {orig, keep_grad}.
orig: fine-tuning with gradual unfreezing (head first, then one more block per epoch) by
flipping requires_grad on the compiled model's parameters; each stage changes the backward
graph, so every stage recompiles forward+backward. keep_grad: every parameter keeps
requires_grad=True; a block is 'frozen' by leaving it out of the optimizer until its stage
(its gradient is computed and dropped), so the model compiles once."""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

MODE = sys.argv[1] if len(sys.argv) > 1 else "orig"
N_FEAT, N_CLS, BATCH, H = 64, 8, 128, 256


def block(i, o):
    return nn.Sequential(nn.Linear(i, o), nn.LayerNorm(o), nn.GELU())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([block(N_FEAT, H), block(H, H), block(H, H)])
        self.head = nn.Linear(H, N_CLS)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


torch.manual_seed(0)
model = Net()  # stands for a pretrained backbone
compiled = torch.compile(model)
stages = [model.head, model.blocks[2], model.blocks[1], model.blocks[0]]
if MODE == "orig":
    for p in model.parameters():
        p.requires_grad_(False)
X = torch.randn(len(stages), 2, BATCH, N_FEAT)
Y = torch.randint(0, N_CLS, (len(stages), 2, BATCH))
opt = None
t = time.perf_counter()
for epoch, part in enumerate(stages):
    if MODE == "orig":
        for p in part.parameters():
            p.requires_grad_(True)
    if opt is None:
        opt = torch.optim.AdamW(part.parameters(), lr=1e-3)
    else:
        opt.add_param_group({"params": list(part.parameters())})
    for i in range(2):
        loss = F.cross_entropy(compiled(X[epoch, i]), Y[epoch, i])
        loss.backward()
        opt.step()
        model.zero_grad(set_to_none=True)
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
