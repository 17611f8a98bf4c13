"""A multiple-instance-learning (MIL) service: each request is a bag of instance feature
vectors (one per patch/sentence), sent to a compiled gated-attention MIL classifier as a
Python list that the model stacks inside forward. Bags hold a varying number of instances.
Dynamo guards on the length of a list input, and automatic dynamic shapes only make tensor
sizes dynamic, so every new bag length recompiles the whole model.

User complaint: "compile keeps happening during serving - the log says `len(patches) == 6`
failed - even though the feature size never changes. Isn't dynamic shapes supposed to
handle this?"
"""

import compilescope
import torch
import torch.nn as nn

SOURCE = (
    "pytorch/pytorch issue #93724 'Don't over-specialize on list append/clear' (guards on list "
    "length, one recompile per length); pytorch/tensordict issue #1606 (recompiles when an "
    "internal container's length changes); chengzeyi/stable-fast issue #131 (recompiles when "
    "the number of regional prompts changes; maintainer: 'use a tensor to contain your "
    "regional prompt. That should not trigger recompilation'); docs 'Dealing with "
    "Recompilations' - 'Is Dynamic Shapes Enabled?' (dynamic shapes cover tensor sizes)"
)
REMEDY = (
    "Stack the bag into one (n, FEAT) tensor before calling the compiled model (pass a "
    "tensor, not a list), so the bag size becomes a tensor dimension that automatic dynamic "
    "shapes (or mark_dynamic on dim 0) handle; the model then compiles at most twice."
)
REMEDY_WORDS = (
    "torch.stack",
    "stack the",
    "stack them",
    "stack each",
    "single tensor",
    "one tensor",
    "tensor instead of a list",
    "instead of a list",
    "pad the bag",
    "pad bags",
)
WRONG_WORDS = ("dynamic=true",)
EXPECT = "remedy"

BAG_SIZES = (6, 9, 7, 12, 6, 9, 7, 12)
FEAT = 256


class AttentionMIL(nn.Module):
    """Gated-attention multiple-instance classifier (Ilse et al. 2018)."""

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


def run(fresh: bool):
    torch.manual_seed(0)
    model = AttentionMIL().eval()
    compiled = torch.compile(model)
    bags = [[torch.randn(FEAT) for _ in range(n)] for n in BAG_SIZES]
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        with torch.no_grad():
            for bag in bags:
                torch.softmax(compiled(bag), -1)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
