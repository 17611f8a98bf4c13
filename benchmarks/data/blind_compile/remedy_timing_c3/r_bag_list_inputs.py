"""Plain-torch timing of c3_bag_list_inputs.py: argv[1] in {orig, stack, stack_mark}.
orig: each bag is passed to the compiled model as a Python list of per-instance feature vectors (the
model stacks them inside forward), so every new bag length fails the list-length guard and
recompiles. stack: the bag is stacked into one (n, FEAT) tensor before the call, so the
bag size is a tensor dimension (automatic dynamic after the second size). stack_mark: the
same plus torch._dynamo.mark_dynamic(bag, 0) on the first bag."""

import sys
import time

import torch
import torch.nn as nn

MODE = sys.argv[1] if len(sys.argv) > 1 else "orig"
BAG_SIZES = (6, 9, 7, 12, 6, 9, 7, 12)
FEAT = 256


class AttentionMIL(nn.Module):
    """Gated-attention multiple-instance classifier (Ilse et al. 2018) over instance vectors."""

    def __init__(self, d_in=FEAT, d=64, n_cls=2):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(d_in, 128), nn.LayerNorm(128), nn.GELU(), nn.Linear(128, d), nn.GELU()
        )
        self.att_v = nn.Linear(d, 32)
        self.att_u = nn.Linear(d, 32)
        self.att_w = nn.Linear(32, 1)
        self.head = nn.Linear(d, n_cls)

    def forward(self, patches):
        x = torch.stack(patches) if isinstance(patches, (list, tuple)) else patches
        h = self.encoder(x)  # (n, d)
        a = self.att_w(torch.tanh(self.att_v(h)) * torch.sigmoid(self.att_u(h)))  # (n, 1)
        a = torch.softmax(a, dim=0)
        return self.head((a * h).sum(0, keepdim=True))


torch.manual_seed(0)
model = AttentionMIL().eval()
compiled = torch.compile(model)
bags = [[torch.randn(FEAT) for _ in range(n)] for n in BAG_SIZES]
t = time.perf_counter()
with torch.no_grad():
    for i, bag in enumerate(bags):
        if MODE != "orig":
            bag = torch.stack(bag)
            if MODE == "stack_mark" and i == 0:
                torch._dynamo.mark_dynamic(bag, 0)
        torch.softmax(compiled(bag), -1)
print(f"{MODE}: {time.perf_counter() - t:.1f} s")
from torch._dynamo.utils import counters  # noqa: E402

print(dict(counters["stats"]))
