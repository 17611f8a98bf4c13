"""Real steps on a CPU against the user's own stopwatch, on two model families, one run each.

    PYTHONPATH=ext python benchmarks/cpu_real_steps.py OUT [--models gpt2,cnn]

For each model (a 2-layer `transformers` GPT-2, 128 wide, 4 x 64 tokens, AdamW; a ResNet-style
CNN of two residual blocks with batch norm, 16 x 3 x 32^2, SGD with momentum), 40 training
steps under `compilescope.capturing()` with `time.perf_counter()` around each step: the median
of compilescope's compiled window against the median of the stopwatch over the same steps.
Writes OUT/cpu_real_steps.json and OUT/<model>.html (the report, to look at in a browser).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def build(name: str):
    import torch

    torch.manual_seed(0)
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(n_layer=2, n_embd=128, n_head=2, n_positions=64, vocab_size=2048)
        model = GPT2LMHeadModel(config)
        ids = torch.randint(0, 2048, (4, 64))
        return model, torch.optim.AdamW(model.parameters(), lr=1e-4), lambda m: m(input_ids=ids, labels=ids).loss  # fmt: skip

    def block(c: int) -> torch.nn.Module:
        return torch.nn.Sequential(
            torch.nn.Conv2d(c, c, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c), torch.nn.ReLU(),
            torch.nn.Conv2d(c, c, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c),
        )  # fmt: skip

    class Residual(torch.nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.body = block(c)

        def forward(self, x):
            return torch.relu(x + self.body(x))

    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), Residual(32), Residual(32),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10),
    )  # fmt: skip
    x, y = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, opt, lambda m: torch.nn.functional.cross_entropy(m(x), y)


def one(name: str, out: Path) -> dict:
    import compilescope
    import torch

    model, opt, loss_of = build(name)
    compiled = torch.compile(model)
    stopwatch = []
    with compilescope.capturing() as cap:
        for _ in range(40):
            started = time.perf_counter()
            loss_of(compiled).backward()
            opt.step()
            opt.zero_grad()
            stopwatch.append(time.perf_counter() - started)
    real = cap.timings.real_steps
    window = stopwatch[real.first_step : real.first_step + real.compiled.repeats]
    compilescope.to_html(cap.capture, out / f"{name}.html")
    return {
        "model": name,
        "compile_ids": len(cap.capture),
        "ours_s": real.compiled.median_s,
        "stopwatch_s": statistics.median(window),
        "ratio": real.compiled.median_s / statistics.median(window),
        "eager_s": real.eager.median_s if real.eager else None,
        "graphs": [[g.compile_id, g.role, g.seconds, g.kernels] for g in real.graphs],
        "outside_graphs_s": real.outside_graphs_s,
        "note": real.note,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--models", default="gpt2,cnn")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import torch

    results = {"torch": torch.__version__, "date": time.strftime("%Y-%m-%d"), "runs": []}
    for name in args.models.split(","):
        results["runs"].append(one(name, out))
        print(json.dumps(results["runs"][-1]), flush=True)
    (out / "cpu_real_steps.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
