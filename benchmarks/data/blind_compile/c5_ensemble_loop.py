"""A deep ensemble of 16 small MLP regressors (for uncertainty estimates) trained jointly with
model.compile(). The members live in an nn.ModuleList and forward runs them one after the
other in a Python loop, then stacks the predictions. Dynamo unrolls the loop into 16 copies of
every layer, forward and backward, so the compile grows with the ensemble size although all
members have the same architecture and could run as one batched computation.

User complaint: "compiling my ensemble takes far longer than compiling one member, and it gets
worse every time I add members. It compiles once, no recompiles."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "PyTorch tutorial 'Model ensembling' (intermediate/ensembling: combine same-architecture "
    "models with torch.func.stack_module_state + torch.vmap instead of a for-loop over the "
    "models); docs torch.func.stack_module_state; pytorch/pytorch issue #111441 (Dynamo unrolls "
    "Python loops, compile time grows with the loop)"
)
REMEDY = (
    "Run the members as one batched computation: stack their weights (torch.func."
    "stack_module_state + torch.vmap, or parameters of shape [members, in, out] with "
    "torch.bmm/baddbmm) instead of a Python loop over the ModuleList, so the graph has one copy "
    "of each layer."
)
REMEDY_WORDS = (
    "vmap",
    "stack_module_state",
    "functional_call",
    "bmm",
    "baddbmm",
    "einsum",
    "batched",
    "stack the weights",
    "stacked weights",
    "stack their weights",
    "vectoriz",
)
EXPECT = "remedy"
WRONG_WORDS = ("dynamic=true", "mark_dynamic")

N_MEMBERS, D_IN, H, B, STEPS = 16, 32, 64, 128, 4


class Ensemble(nn.Module):
    def __init__(self):
        super().__init__()
        self.members = nn.ModuleList(
            nn.Sequential(
                nn.Linear(D_IN, H), nn.ReLU(), nn.Linear(H, H), nn.ReLU(), nn.Linear(H, 1)
            )
            for _ in range(N_MEMBERS)
        )

    def forward(self, x):
        return torch.stack([m(x) for m in self.members]).squeeze(-1)


def run(fresh: bool):
    torch.manual_seed(0)
    model = Ensemble()
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    data = [(torch.randn(B, D_IN, generator=g), torch.randn(B, generator=g)) for _ in range(STEPS)]
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for x, y in data:
            F.mse_loss(model(x), y.expand(N_MEMBERS, -1)).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
