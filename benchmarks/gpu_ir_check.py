"""GPU check: a live capture carries each Triton kernel's IR stages and launch settings.

PYTHONPATH=ext:benchmarks python benchmarks/gpu_ir_check.py
"""

from __future__ import annotations

import sys

import compilescope
import torch
from gpu_models import Block

torch.manual_seed(0)
cap = compilescope.capture(Block().cuda(), torch.randn(8, 128, 256, device="cuda"))
triton = [k for c in cap for k in c.kernels if k.language == "triton"]
complete = [k for k in triton if set(k.ir) == {"ttir", "ttgir", "llir", "ptx"} and k.launch]
print(f"torch {torch.__version__}: {len(complete)} of {len(triton)} Triton kernels carry all four")
print("IR stages and launch settings in the capture")
if triton:
    k = triton[0]
    sizes = {s: len(t.splitlines()) for s, t in k.ir.items()}
    print(f"e.g. {k.name}: launch {k.launch}, IR lines {sizes}")
sys.exit(0 if triton and len(complete) == len(triton) else 1)
