"""A sensor-fusion regressor (1-D conv stem + MLP head) trained with model.compile(). Its
training batches come from three data sources that were written at different times: cached
float32 tensors, float64 arrays straight out of numpy/pandas (`torch.from_numpy`), and float16
shards kept to save disk. forward begins with `x = x.float()`, so eager mode never complains,
but Dynamo guards on each input tensor's dtype: every new input dtype traces and compiles the
whole forward and backward again (there is no automatic-dynamic fallback for dtypes).

User complaint: "the recompile log says `tensor 'x' dtype mismatch. expected Float, actual
Double` and then `... actual Half`; the model converts the input itself in its first line.
Why do I pay three compiles?"
"""

import compilescope
import torch
import torch.nn as nn
import torch.nn.functional as F

SOURCE = (
    "pytorch/pytorch issue #128134 'AMP guards recompilation: dtype mismatch. expected Half, "
    "actual Float' (a compiled forward recompiles for each input dtype); docs 'Dealing with "
    "Recompilations' (guards on tensor dtype; make inputs consistent to avoid recompiles); "
    "docs torch.compiler troubleshooting (TORCH_LOGS=recompiles shows dtype-mismatch guard "
    "failures)"
)
REMEDY = (
    "Give the compiled model one input dtype: convert every batch to float32 in the data "
    "pipeline (Dataset / collate_fn, or `x.float()` before the call) instead of inside the "
    "compiled forward, so the dtype guard always passes and the model compiles once."
)
REMEDY_WORDS = (
    "to float32",
    "as float32",
    "same dtype",
    "one dtype",
    "single dtype",
    "consistent dtype",
    "dtype consistent",
    "cast the input",
    "cast inputs",
    "cast the batch",
    "convert the input",
    "convert inputs",
    ".float() before",
    "before the call",
    "in the data pipeline",
    "collate",
    "in the dataset",
    "in the dataloader",
)
EXPECT = "remedy"
WRONG_WORDS = ("dynamic=true", "mark_dynamic")

CH, LEN, N_OUT, BATCH = 8, 128, 4, 32
SOURCES = (torch.float32, torch.float64, torch.float16)  # cached / numpy / fp16 shards


class SensorNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv1d(CH, 32, 5, padding=2),
            nn.GELU(),
            nn.Conv1d(32, 64, 5, stride=2, padding=2),
            nn.GELU(),
            nn.Conv1d(64, 64, 3, stride=2, padding=1),
            nn.GELU(),
        )
        self.head = nn.Sequential(
            nn.Flatten(),
            nn.LayerNorm(64 * LEN // 4),
            nn.Linear(64 * LEN // 4, 256),
            nn.GELU(),
            nn.Linear(256, N_OUT),
        )

    def forward(self, x):
        x = x.float()  # "the model handles any input dtype"
        return self.head(self.stem(x))


def batches():
    g = torch.Generator().manual_seed(0)
    out = []
    for _epoch in range(2):
        for dt in SOURCES:
            x = torch.randn(BATCH, CH, LEN, generator=g).to(dt)
            y = torch.randn(BATCH, N_OUT, generator=g)
            out.append((x, y))
    return out


def run(fresh: bool):
    torch.manual_seed(0)
    model = SensorNet()
    model.compile()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = batches()
    with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
        for x, y in data:
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
