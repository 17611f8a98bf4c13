"""A two-layer MLP regression trained for a few dozen steps with torch.compile.

User question: "the first step took a few seconds; is something wrong with my compile?"
(Nothing is: one graph, no recompiles, a few seconds of expected JIT cost.)
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "PyTorch docs 'torch.compile Troubleshooting' - Setting Expectations / Compile times "
    "('the initial one or two runs of the compiled function are expected to be "
    "significantly slower'; cold-start compile 'typically ranges from seconds to minutes')"
)
REMEDY = (
    "Nothing to change: a single small graph compiled once with no recompiles is the "
    "expected one-off JIT cost."
)
REMEDY_WORDS = ("nothing to change", "expected", "no change")
EXPECT = "nothing"


def run(fresh: bool):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    w = torch.randn(16, 1)
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for _step in range(40):
            x = torch.randn(64, 16)
            loss = F.mse_loss(compiled(x), x @ w)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
