"""A classifier whose forward reads an int step counter kept on the module (a warm-up gate).

User complaint: "my compiled model keeps recompiling on every training step and the first
steps take forever; TORCH_LOGS=recompiles shows ___check_obj_id / self.step changes."
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issue #115711 '[torch.compile] nn.Module int/float attributes caused "
    "re-compile' (https://github.com/pytorch/pytorch/issues/115711); docs 'Dealing with "
    "Recompilations' (Wrapping Constants with Tensors); torch.compiler.config."
    "allow_unspec_int_on_nn_module"
)
REMEDY = (
    "Stop guarding on the changing int: keep the step counter in a tensor (a buffer) "
    "instead of a Python int attribute, or set torch.compiler.config."
    "allow_unspec_int_on_nn_module = True so it is treated as dynamic."
)
REMEDY_WORDS = ("allow_unspec_int_on_nn_module", "buffer", "torch.tensor", "as a tensor")
EXPECT = "remedy"


class WarmupGatedMLP(nn.Module):
    def __init__(self, d_in=32, d_hidden=128, n_cls=10, warmup=1000):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_hidden)
        self.gate = nn.Linear(d_hidden, d_hidden)
        self.head = nn.Linear(d_hidden, n_cls)
        self.warmup = warmup
        self.step = 0  # plain Python int, bumped every forward

    def forward(self, x):
        if self.training:
            self.step += 1
        alpha = min(1.0, self.step / self.warmup)  # gate ramps in during warm-up
        h = F.relu(self.fc1(x))
        h = h + alpha * torch.sigmoid(self.gate(h)) * F.relu(self.fc2(h))
        return self.head(h)


def run(fresh: bool):
    torch.manual_seed(0)
    model = WarmupGatedMLP()
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    xs, ys = torch.randn(12, 64, 32), torch.randint(0, 10, (12, 64))
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for step in range(12):
            loss = F.cross_entropy(compiled(xs[step]), ys[step])
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
