"""Twin of c5_optional_dict_keys: batch dict whose optional keys come and go.

without: each batch carries only the modalities it has (key set changes).
with:    every batch carries every key; a missing modality is zeros plus a 0/1 mask tensor.
"""

import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.utils import counters

B, D_TAB, D_IMG, D_TXT, D_META, H = 32, 24, 64, 48, 8, 128
OPTIONAL = {"img": D_IMG, "txt": D_TXT, "meta": D_META}
KEYSETS = ((), ("img",), ("img", "txt"), ("txt", "meta"), ("img", "txt", "meta"))


class FusionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.tab = nn.Sequential(nn.Linear(D_TAB, H), nn.GELU(), nn.Linear(H, H))
        self.enc = nn.ModuleDict(
            {
                k: nn.Sequential(nn.Linear(d, H), nn.GELU(), nn.Linear(H, H))
                for k, d in OPTIONAL.items()
            }
        )
        self.head = nn.Sequential(nn.LayerNorm(H), nn.Linear(H, H), nn.GELU(), nn.Linear(H, 1))

    def forward(self, batch):
        h = self.tab(batch["tab"])
        for k, enc in self.enc.items():
            if k in batch:
                e = enc(batch[k])
                m = batch.get(k + "_mask")
                h = h + (e * m if m is not None else e)
        return self.head(h).squeeze(-1)


def make_batches(fixed_keys):
    g = torch.Generator().manual_seed(0)
    out = []
    for _epoch in range(2):
        for ks in KEYSETS:
            b = {"tab": torch.randn(B, D_TAB, generator=g)}
            for k, d in OPTIONAL.items():
                if k in ks:
                    b[k] = torch.randn(B, d, generator=g)
                    if fixed_keys:
                        b[k + "_mask"] = torch.ones(B, 1)
                elif fixed_keys:
                    b[k] = torch.zeros(B, d)
                    b[k + "_mask"] = torch.zeros(B, 1)
            out.append((b, torch.randn(B, generator=g)))
    return out


def main(mode):
    torch.manual_seed(0)
    model = FusionNet()
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = make_batches(fixed_keys=(mode == "with"))
    t = time.perf_counter()
    for b, y in data:
        loss = F.mse_loss(model(b), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    wall = time.perf_counter() - t
    print(f"{mode} wall_s={wall:.1f} unique_graphs={counters['stats']['unique_graphs']}")


if __name__ == "__main__":
    main(sys.argv[1])
