"""CPU smoke test for the blind-set loops (not the benchmark itself).

Usage: python _smoke_cpu.py <module_name> [steps]
Builds the loop with device='cpu' for remedy=False and remedy=True and runs a
few steps of each; prints wall time and the inductor/dynamo counters.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    name = sys.argv[1].removesuffix(".py")
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    mod = importlib.import_module(name)
    for attr in ("SOURCE", "SOURCE_SAYS", "REMEDY", "REMEDY_WORDS", "build"):
        assert hasattr(mod, attr), f"{name} lacks {attr}"
    assert all(w == w.lower() for w in mod.REMEDY_WORDS), "REMEDY_WORDS must be lower-case"
    from torch._dynamo.utils import counters

    for remedy in (False, True):
        torch._dynamo.reset()
        counters.clear()
        t0 = time.time()
        step, sync = mod.build("cpu", remedy)
        for _ in range(steps):
            step()
        sync()
        dt = time.time() - t0
        stats = dict(counters["stats"])
        fa = dict(counters["inductor"]).get("fuse_attention", 0)
        print(
            f"{name} remedy={remedy}: {steps} steps OK in {dt:.1f}s  dynamo={stats} fuse_attention={fa}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
