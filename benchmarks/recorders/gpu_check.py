"""GPU check (run on the lent H100, torch 2.11): capture real Triton kernels and record the log.

    python benchmarks/recorders/gpu_check.py OUTDIR

Writes OUTDIR/gpu_module_backward.log (TORCH_TRACE of the run), OUTDIR/gpu_check.txt (summary
and checks). Exits non-zero if a check fails.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

out = Path(sys.argv[1])
os.environ["TORCH_TRACE"] = str(out / "trace")

import compilescope  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from workloads import TinyMLP  # noqa: E402

lines: list[str] = [f"torch {torch.__version__}, device {torch.cuda.get_device_name()}"]
failures: list[str] = []


def check(ok: bool, what: str) -> None:
    lines.append(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


model = TinyMLP().cuda()
x = torch.randn(64, 16, device="cuda")
cap = compilescope.capture(model, x)
lines.append(str(cap))
c = cap[0]
triton = [k for k in c.kernels if k.language == "triton"]
check(bool(triton), "Triton kernels captured")
check(all("@triton.jit" in k.source for k in triton), "each Triton kernel carries its source")
check(any(k.fused_nodes for k in triton), "provenance names fused post-grad nodes")
check(any(k.source_lines for k in triton), "provenance names user source lines")
check(any(k.origin_nodes for k in triton), "origin comments read")
check(bool(c.partition and c.partition.saved_bytes > 0), "saved-for-backward bytes")
for k in c.kernels:
    lines.append(f"  {k.language:6} {k.name} calls={k.calls} fused={list(k.fused_nodes)}")
again = compilescope.capture(model, x)
check(
    sorted(again[0].graphs) == sorted(c.graphs) and len(again[0].kernels) == len(c.kernels),
    "a second capture of the same model gives the same stages",
)
(out / "capture.json").write_text(cap.to_json())
check(compilescope.Capture.from_json(cap.to_json()) == cap, "JSON round trip")
text = "\n".join(lines)
(out / "gpu_check.txt").write_text(text + "\n")
print(text)
sys.exit(1 if failures else 0)
