"""A tabular + multimodal fusion regressor (recommendation-style) trained with model.compile().
Each batch is a dict: the tabular features are always there, but the optional modalities
("img" embedding, "txt" embedding, "meta" features) are only put in the dict when the rows of
that batch have them, so the key set changes from batch to batch. forward checks
`if k in batch:` for every optional encoder. Dynamo guards on the dict's key set, so every new
combination of keys traces and compiles the whole forward and backward again.

User complaint: "TORCH_LOGS=recompiles keeps printing guard failures on `len(L['batch'])` and on
`'img' in L['batch']`; I have five kinds of batch and I pay five compiles. The model is tiny,
why is the first epoch all compile?"
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "xdit-project/xDiT PR #781 'Fix recompiles' (a kwargs dict whose key set changed between "
    "forwards made Dynamo recompile; fix: keep all keys always present so the key set is "
    "invariant); pytorch/pytorch issue #143670 (recompiles on `len(dict)` / key membership "
    "guards); pytorch/pytorch issue #175858 (DICT_KEYS_MATCH guard: every change of the key "
    "set invalidates the compiled frame); docs 'Dealing with Recompilations'"
)
REMEDY = (
    "Give every batch the same dict keys: always include every optional modality, filling a "
    "missing one with zeros plus a 0/1 presence-mask tensor that gates its encoder output, so "
    "the key-set guard always passes and the model compiles once."
)
REMEDY_WORDS = (
    "same keys",
    "same set of keys",
    "all keys",
    "every key",
    "fixed keys",
    "fixed set of keys",
    "key set",
    "keys fixed",
    "keys constant",
    "constant keys",
    "consistent keys",
    "missing key",
    "missing modalit",
    "absent key",
    "presence mask",
    "fill missing",
    "placeholder",
    "always include",
    "always present",
    "always pass",
)
EXPECT = "remedy"
WRONG_WORDS = ("dynamic=true", "mark_dynamic")

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
            if k in batch:  # "only encode what this batch has"
                h = h + enc(batch[k])
        return self.head(h).squeeze(-1)


def batches():
    g = torch.Generator().manual_seed(0)
    out = []
    for _epoch in range(2):
        for ks in KEYSETS:
            b = {"tab": torch.randn(B, D_TAB, generator=g)}
            for k in ks:
                b[k] = torch.randn(B, OPTIONAL[k], generator=g)
            out.append((b, torch.randn(B, generator=g)))
    return out


def run(fresh: bool):
    torch.manual_seed(0)
    model = FusionNet()
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = batches()
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for b, y in data:
            loss = F.mse_loss(model(b), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
