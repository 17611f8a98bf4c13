"""A custom GRU cell stepped by a Python loop over the time steps inside forward; the
whole model is compiled, so Dynamo unrolls the loop into one long graph (one copy of the
cell per time step).

User complaint: "compile time explodes with sequence length; at seq_len 1500 fusion alone
takes an hour".
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issue #154652 '[compile time][inductor] Quadratic compile time "
    "observed in Inductor fusion' (unrolled custom GRU loop; 'better ways to resolve the "
    "compile time problem like hierarchical compilation or regional compilation'); "
    "torch.compiler.nested_compile_region docs"
)
REMEDY = (
    "Do not unroll the repeated cell into one graph: mark the cell with "
    "torch.compiler.nested_compile_region (hierarchical compilation) or compile the cell "
    "alone (regional compilation) so it is compiled once and reused for every step."
)
REMEDY_WORDS = ("nested_compile_region", "regional", "hierarchical")
EXPECT = "remedy"

SEQ, IN, HID, BATCH = 24, 16, 32, 8


class CustomGRUCell(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.xz, self.hz = nn.Linear(input_size, hidden_size), nn.Linear(hidden_size, hidden_size)
        self.xr, self.hr = nn.Linear(input_size, hidden_size), nn.Linear(hidden_size, hidden_size)
        self.xn, self.hn = nn.Linear(input_size, hidden_size), nn.Linear(hidden_size, hidden_size)

    def forward(self, x, h):
        z = torch.sigmoid(self.xz(x) + self.hz(h))
        r = torch.sigmoid(self.xr(x) + self.hr(h))
        n = torch.tanh(self.xn(x) + r * self.hn(h))
        return (1 - z) * n + z * h


class SeqModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = CustomGRUCell(IN, HID)
        self.head = nn.Linear(HID, 1)

    def forward(self, xs):
        h = xs.new_zeros(xs.shape[0], HID)
        for t in range(xs.shape[1]):  # unrolled by Dynamo
            h = self.cell(xs[:, t], h)
        return self.head(h)


def run(fresh: bool):
    torch.manual_seed(0)
    model = SeqModel()
    compiled = torch.compile(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xs, ys = torch.randn(4, BATCH, SEQ, IN), torch.randn(4, BATCH, 1)
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for step in range(4):
            loss = F.mse_loss(compiled(xs[step]), ys[step])
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
