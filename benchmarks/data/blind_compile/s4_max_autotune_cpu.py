"""A CPU scoring service that follows the 'max-autotune on CPU' tutorial: freezing on,
mode="max-autotune", a small MLP, then a handful of requests.

User complaint: "the service now takes twice as long to become ready and requests are not
any faster".
"""

import compilescope
import torch
import torch.nn as nn

SOURCE = (
    "PyTorch tutorial 'Use max-autotune compilation on CPU to gain further performance "
    "boost' (max-autotune 'trades longer compilation times for improved runtime "
    "performance'); torch.compile docs on mode; pytorch/torchdynamo issue #1807 "
    "'[inductor] Triton Auto Tuning - Long Compilation Time'"
)
REMEDY = (
    "Compile with the default mode (drop mode='max-autotune') unless the tuned kernels "
    "make the steps measurably faster; autotuning benchmarks every GEMM choice at compile "
    "time."
)
REMEDY_WORDS = ("max-autotune", "default mode", "autotun", "mode=none")
EXPECT = "remedy"


def build():
    return nn.Sequential(
        nn.Linear(256, 512),
        nn.GELU(),
        nn.Linear(512, 512),
        nn.GELU(),
        nn.Linear(512, 256),
        nn.GELU(),
        nn.Linear(256, 10),
    ).eval()


def run(fresh: bool):
    torch.manual_seed(0)
    model = build()
    requests = torch.randn(16, 128, 256)
    # The tutorial runs with TORCHINDUCTOR_FREEZING=1; set it in-process the same way.
    with torch._inductor.config.patch(freezing=True), torch.no_grad():
        compiled = torch.compile(model, mode="max-autotune")
        with compilescope.capturing(fresh=fresh, real_steps=0, eager_steps=0) as cap:
            for x in requests:
                compiled(x).argmax(dim=-1)
    return cap.capture


if __name__ == "__main__":
    import time

    t = time.perf_counter()
    cap = run(fresh=True)
    print(f"run took {time.perf_counter() - t:.1f} s")
