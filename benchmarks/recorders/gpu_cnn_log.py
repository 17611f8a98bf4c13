"""A TORCH_TRACE log of a torchvision ResNet-18 training loop on a GPU: a CNN's log for the report
timings of issue 34 (the GPT-2 logs were the only family measured).

    python benchmarks/recorders/gpu_cnn_log.py OUT      # on the GPU machine; writes OUT/resnet18.log.gz

The loop as a user writes it, compilescope not involved: `torch.compile(model)`, cross-entropy,
backward, a fused SGD step, 3 steps at batch 16 of 64 px images; the log is what torch wrote.
Time `report` on it against tlparse: `benchmarks/suites/report.py --log OUT/resnet18.log.gz` (the
log of the run recorded in RESULTS.md is `benchmarks/raw/resnet18_h200.log.gz`).
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
from pathlib import Path


def main() -> None:
    out = Path(sys.argv[1])
    trace = out / "trace"
    trace.mkdir(parents=True, exist_ok=True)
    # TORCH_TRACE is read when torch configures its logging, at import: set it first.
    os.environ["TORCH_TRACE"] = str(trace)
    import torch
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, fused=True)
    compiled = torch.compile(model)
    x = torch.randn(16, 3, 64, 64, device="cuda")
    y = torch.randint(0, 10, (16,), device="cuda")
    for _ in range(3):
        loss = torch.nn.functional.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    torch.cuda.synchronize()
    (log,) = trace.glob("*.log")
    size = log.stat().st_size
    with log.open("rb") as src, gzip.open(out / "resnet18.log.gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    shutil.rmtree(trace)
    print(f"{size} bytes of log -> {out / 'resnet18.log.gz'}")


if __name__ == "__main__":
    main()
