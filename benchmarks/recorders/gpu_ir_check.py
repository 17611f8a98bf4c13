"""GPU check: a live capture carries each Triton kernel's IR stages, launch settings and the
config autotuning chose; also saves a trimmed profiler chrome trace for the CPU tests.

PYTHONPATH=ext:benchmarks python benchmarks/recorders/gpu_ir_check.py [OUTDIR]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import compilescope
import torch
from models import Block

out = Path(sys.argv[1]) if len(sys.argv) > 1 else None
torch.manual_seed(0)
model, x = Block().cuda(), torch.randn(8, 128, 256, device="cuda")
cap = compilescope.capture(model, x)
triton = [k for c in cap for k in c.kernels if k.language == "triton"]
complete = [k for k in triton if set(k.ir) == {"ttir", "ttgir", "llir", "ptx"} and k.launch]
tuned = [k for k in triton if "registers" in k.launch and "XBLOCK" in k.launch]
print(f"torch {torch.__version__}: {len(complete)} of {len(triton)} Triton kernels carry all four")
print("IR stages and launch settings in the capture;")
print(f"{len(tuned)} of {len(triton)} carry the config they run with (forward and backward);")
print(f"{sum('autotune_us' in k.launch for k in tuned)} of them were chosen by benchmarking")
if triton:
    k = triton[0]
    sizes = {s: len(t.splitlines()) for s, t in k.ir.items()}
    print(f"e.g. {k.name}: launch {k.launch}, IR lines {sizes}")

if out is not None:  # a real chrome trace, trimmed, for tests/live/test_launch_shapes.py
    compiled = torch.compile(model)
    compiled(x).sum().backward()
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    ) as prof:
        compiled(x).sum().backward()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.json"
        prof.export_chrome_trace(str(path))
        events = json.loads(path.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"][:12]
    others = [e for e in events if e.get("cat") in ("cpu_op", "cuda_runtime")][:6]
    out.mkdir(parents=True, exist_ok=True)
    (out / "kernel_trace_events.json").write_text(json.dumps(others + kernels, indent=1))
    print(f"saved {len(kernels)} kernel events and {len(others)} others")
sys.exit(0 if triton and len(complete) == len(tuned) == len(triton) else 1)
