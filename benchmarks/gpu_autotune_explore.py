"""Where does max-autotune beat cuBLAS on a training step? A search over a few MLP shapes.

    PYTHONPATH=ext python benchmarks/gpu_autotune_explore.py OUT

One process (Inductor's and Triton's caches in an empty folder): for each shape, the step
compiled as is, then again with `torch._inductor.config.max_autotune_gemm = True`; the first
step's wall time (compiling) and the CUDA-event median of 30 steps after 5 to settle, both
variants alternated twice. Writes OUT/autotune_explore.json. A search, not a proof: the loop it
finds goes into gpu_speed_zoo.py, where fresh processes in pairs measure it.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

SHAPES = {  # name: (tokens, width, hidden, blocks, dtype)
    "small_tokens_bf16": (512, 1024, 4096, 4, "bfloat16"),
    "odd_bf16": (6000, 1000, 3000, 4, "bfloat16"),
    "tf32_high": (4096, 1024, 4096, 4, "float32"),
    "narrow_bf16": (16384, 256, 1024, 6, "bfloat16"),
}


def run(name: str, autotune: bool) -> dict:
    import torch
    import torch._inductor.config as inductor_config

    tokens, width, hidden, blocks, dtype = SHAPES[name]
    torch._dynamo.reset()
    torch.manual_seed(0)
    dt = getattr(torch, dtype)
    model = torch.nn.Sequential(*[
        torch.nn.Sequential(torch.nn.Linear(width, hidden), torch.nn.GELU(),
                            torch.nn.Linear(hidden, width))
        for _ in range(blocks)
    ]).to("cuda", dtype=dt)  # fmt: skip
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(tokens, width, device="cuda", dtype=dt)
    with inductor_config.patch(max_autotune_gemm=autotune):
        compiled = torch.compile(model)

        def step():
            compiled(x).float().pow(2).mean().backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        started = time.perf_counter()
        step()
        torch.cuda.synchronize()
        first = time.perf_counter() - started
        for _ in range(5):
            step()
        marks = [torch.cuda.Event(enable_timing=True) for _ in range(31)]
        for i in range(30):
            marks[i].record()
            step()
        marks[30].record()
        torch.cuda.synchronize()
    times = [a.elapsed_time(b) for a, b in zip(marks, marks[1:], strict=False)]
    return {"shape": name, "autotune": autotune, "first_step_s": first,
            "median_ms": statistics.median(times)}  # fmt: skip


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp()
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    import torch

    torch.set_float32_matmul_precision("high")  # tf32_high: TF32 on, as a user after fp32_matmul
    records = []
    for name in SHAPES:
        for autotune in (False, True, False, True):
            try:
                records.append(run(name, autotune))
            except Exception as error:  # one shape's failure is its record
                records.append({"shape": name, "autotune": autotune, "error": repr(error)[:500]})
            (out / "autotune_explore.json").write_text(json.dumps(records, indent=1))
            print(records[-1], flush=True)


if __name__ == "__main__":
    main()
