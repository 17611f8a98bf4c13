"""GPU run: peak memory and saved-for-backward bytes (eager vs compiled), and each Triton
kernel's achieved bandwidth against the device's measured copy bandwidth.

    PYTHONPATH=ext python benchmarks/gpu_memory_bandwidth.py OUTDIR

Writes OUTDIR/gpu_memory_bandwidth.md (for benchmarks/RESULTS.md). Exit 1 if a check fails.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import compilescope
import torch
from gpu_models import Block, SmallCNN

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)


def copy_bandwidth() -> tuple[float, float, float]:
    """Device-to-device copy of 1 GiB: bytes read + written over the time (median, min, max)."""
    from triton.testing import do_bench

    src = torch.empty(2**28, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    moved = 2 * src.numel() * src.element_size()
    runs = [do_bench(lambda: dst.copy_(src), warmup=25, rep=100) / 1e3 for _ in range(5)]
    return moved / statistics.median(runs), moved / max(runs), moved / min(runs)


def eager_saved_bytes(model, x) -> int:
    """Bytes autograd saves for backward in eager mode (saved-tensor hooks count each once)."""
    seen: dict[int, int] = {}

    def pack(t):
        seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x)
    return sum(seen.values())


def mib(n) -> str:
    return "n/a" if n is None else f"{n / 2**20:.2f} MiB"


lines = [f"torch {torch.__version__}, {torch.cuda.get_device_name()}", ""]
failures = []
bw, bw_lo, bw_hi = copy_bandwidth()
lines.append(
    f"Device copy bandwidth (1 GiB device-to-device copy, do_bench median of 5): "
    f"{bw / 1e9:.0f} GB/s (range {bw_lo / 1e9:.0f} to {bw_hi / 1e9:.0f})"
)
lines.append("")
mem_rows, bw_rows = [], []
for model_name, make, shape in (
    ("block", Block, (8, 128, 256)),
    ("cnn", SmallCNN, (32, 3, 32, 32)),
):
    for dtype in (torch.float32, torch.bfloat16):
        tag = f"{model_name}_{str(dtype).split('.')[-1]}"
        torch.manual_seed(0)
        model = make().cuda().to(dtype)
        x = torch.randn(*shape, device="cuda", dtype=dtype)
        cap = compilescope.capture(model, x, timings=True)
        compiled_saved = sum(c.partition.saved_bytes for c in cap if c.partition)
        eager_saved = eager_saved_bytes(make().cuda().to(dtype), x)
        for g in cap.timings.graphs:
            if g.eager_peak_bytes is None or g.compiled_peak_bytes is None:
                failures.append(f"{tag} {g.compile_id}: no peak memory ({g.note})")
                continue
            mem_rows.append(
                f"| {tag} | {g.compile_id} | {mib(g.eager_peak_bytes)} | {mib(g.compiled_peak_bytes)}"
                f" | {mib(eager_saved)} | {mib(compiled_saved)} |"
            )
        times = {k.kernel: k for k in cap.timings.kernels if k.role != "backward"}
        for c in cap:
            for o in c.output_code:
                for k in o.kernels:
                    if k.language != "triton" or o.role not in ("forward", "inference"):
                        continue
                    t = times.get(k.name)
                    # Inductor's estimate where it wrote one (benchmark_kernel), else the bytes
                    # of the tensors the call was passed (timings no longer set benchmark_kernel).
                    nbytes = k.bytes_moved or (t.bytes_per_call if t else None)
                    if nbytes is None or t is None:
                        failures.append(f"{tag} {k.name}: bytes {nbytes}, time {t}")
                        continue
                    achieved = nbytes / t.time.median_s
                    bw_rows.append((tag, k.name, nbytes, t.time.median_s, achieved, achieved / bw))

lines.append("### Peak memory of one forward run, and bytes saved for backward")
lines.append("")
lines.append(
    "| model | compile id | eager peak | compiled peak | eager saved for backward"
    " | compiled saved for backward |"
)
lines.append("|---|---|---|---|---|---|")
lines.extend(mem_rows)
lines.append("")
lines.append("### Achieved bandwidth of forward Triton kernels")
lines.append("")
lines.append("| model | kernel | MB moved (Inductor's estimate) | median (us) | GB/s | of copy |")
lines.append("|---|---|---|---|---|---|")
for tag, name, moved, median, achieved, frac in bw_rows:
    lines.append(
        f"| {tag} | {name} | {moved / 1e6:.3f} | {median * 1e6:.2f} | {achieved / 1e9:.0f}"
        f" | {frac:.0%} |"
    )
if bw_rows:
    fracs = sorted(r[-1] for r in bw_rows)
    lines.append("")
    lines.append(
        f"{len(bw_rows)} kernels: median {statistics.median(fracs):.0%} of copy bandwidth,"
        f" best {fracs[-1]:.0%}. Small kernels are launch-bound at these sizes."
    )
if failures:
    lines.append("")
    lines.append("FAILED: " + "; ".join(failures))
text = "\n".join(lines)
(out / "gpu_memory_bandwidth.md").write_text(text + "\n")
print(text)
sys.exit(1 if failures else 0)
