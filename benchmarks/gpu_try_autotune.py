"""The max-autotune finding followed as a user would, on a GPU (issue 31 d): a training loop
under `compilescope.capturing()`, its `library_matmul` finding, the same loop again under
`compilescope.applying(fix)`, and `compilescope.diff(before, after)`.

    PYTHONPATH=ext python benchmarks/gpu_try_autotune.py OUT

Writes OUT/try_autotune.txt: the findings, the diff's real-step line (speedup, and after how
many steps the longer compile pays back), each capture's compile time, and the setting after.
Inductor's and Triton's caches go to empty folders, so that both captures compile from scratch.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def loop(steps: int = 30):
    import torch

    torch.manual_seed(0)
    blocks = [
        torch.nn.Sequential(
            torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)
        )
        for _ in range(8)
    ]
    model = torch.nn.Sequential(*blocks).to("cuda", dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(8192, 1024, device="cuda", dtype=torch.bfloat16)
    compiled = torch.compile(model)
    for _ in range(steps):
        compiled(x).float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp()
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    import compilescope
    import torch
    import torch._inductor.config as inductor_config
    from compilescope.model.compile import compile_seconds

    with compilescope.capturing() as before:
        loop()
    found = compilescope.findings(before.capture)
    lines = ["findings:"] + [f"  {i}. [{f.kind}] {f.what}" for i, f in enumerate(found, 1)]
    finding = next(f for f in found if f.kind == "library_matmul")
    lines.append(f"fix: {finding.fix.title}: {finding.fix.python()}")
    torch._dynamo.reset()
    with compilescope.applying(finding.fix), compilescope.capturing() as after:
        loop()
    d = compilescope.diff(before.capture, after.capture)
    lines += [
        f"compile before {compile_seconds(before.capture):.1f} s, "
        f"after {compile_seconds(after.capture):.1f} s",
        f"real steps: {d.step_speedup.text() if d.step_speedup else 'not measured'}",
        f"max_autotune_gemm after the block: {inductor_config.max_autotune_gemm}",
        "findings after:",
        *[f"  {i}. [{f.kind}] {f.what}" for i, f in enumerate(compilescope.findings(after.capture), 1)],
    ]  # fmt: skip
    (out / "try_autotune.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
