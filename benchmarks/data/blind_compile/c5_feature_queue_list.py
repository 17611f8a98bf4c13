"""A MoCo-style contrastive encoder trained with model.compile(). The memory bank of negative
keys is kept as a plain Python list on the module: forward does `bank = torch.cat(self.queue)`
and then `self.queue.append(k)` (dropping the oldest entry once the list is full). Dynamo
guards on the length of the list (and on the bank's first dimension), so every step while the
bank fills up traces and compiles the whole forward and backward again.

User complaint: "the first epoch of my contrastive run is almost all compile. TORCH_LOGS
shows `len(self.queue) == 3`, then `== 4`, ... as guard failures; nothing in the data changes
shape."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issue #93724 'Don't over-specialize on list append/clear' (appending to a "
    "Python list in a compiled function guards on the list length and recompiles on every "
    "call); facebookresearch/moco moco/builder.py (the queue is a preallocated "
    "register_buffer('queue', ...) plus a queue_ptr buffer, overwritten in place); docs "
    "'Dealing with Recompilations'"
)
REMEDY = (
    "Keep the memory bank in a preallocated tensor buffer (register_buffer('queue', ...) of the "
    "full size plus a tensor pointer) and overwrite a slice of it in place each step, instead of "
    "a Python list that grows, so the graph sees the same shapes and guards every step and "
    "compiles once."
)
REMEDY_WORDS = (
    "register_buffer",
    "tensor buffer",
    "preallocated buffer",
    "queue_ptr",
    "preallocat",
    "pre-allocat",
    "fixed-size tensor",
    "fixed size tensor",
    "ring buffer",
    "circular",
    "python list",
    "list length",
    "len(self.queue)",
)
EXPECT = "remedy"
WRONG_WORDS = ("dynamic=true", "mark_dynamic")

B, D_IN, D, K_BATCHES, STEPS, TAU = 32, 64, 64, 6, 8, 0.07


class MoCoLite(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(D_IN, 256), nn.GELU(), nn.Linear(256, D))
        self.queue = [F.normalize(torch.randn(B, D), dim=1)]  # memory bank of past keys

    def forward(self, q_in, k_in):
        q = F.normalize(self.enc(q_in), dim=1)
        with torch.no_grad():
            k = F.normalize(self.enc(k_in), dim=1)
        bank = torch.cat(self.queue)
        logits = torch.cat([(q * k).sum(1, keepdim=True), q @ bank.t()], dim=1) / TAU
        self.queue.append(k)
        if len(self.queue) > K_BATCHES:
            self.queue.pop(0)
        return F.cross_entropy(logits, torch.zeros(B, dtype=torch.long))


def run(fresh: bool):
    torch.manual_seed(0)
    model = MoCoLite()
    model.compile()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(0)
    data = [
        (torch.randn(B, D_IN, generator=g), torch.randn(B, D_IN, generator=g)) for _ in range(STEPS)
    ]
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for a, b in data:
            model(a, b).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
