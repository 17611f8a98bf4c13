"""GPU run (H100, torch 2.11, Triton 3.6): capture and time real models, check Triton IR, cross-check
per-kernel medians against torch.profiler over a real training step.

    PYTHONPATH=ext:benchmarks python benchmarks/recorders/gpu_timings.py OUTDIR

Writes OUTDIR/gpu_timings.md (tables for benchmarks/RESULTS.md) and OUTDIR/<model>_<dtype>.json
captures (trimmed: guards and graph texts of pre-grad stages dropped).
"""

from __future__ import annotations

import os
import re
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
os.environ.setdefault("TRITON_CACHE_DIR", str(out / "triton_cache"))

import compilescope  # noqa: E402
import torch  # noqa: E402
from compilescope.live.timing import kernel_timer  # noqa: E402

# The launch checks read grid and block from the profiler's kernel records: time with it.
kernel_timer.GPU_CLOCK = "profiler"
from models import Block, SmallCNN, trimmed  # noqa: E402


def launch_agreement(cap) -> list[str]:
    """How each timed Triton kernel launched (profiler) against what Inductor chose (config):
    block = 32 x num_warps, and for a 1-D grid, grid x = ceil(xnumel / XBLOCK)."""
    kernels = {(str(c.id), k.name): k for c in cap for k in c.kernels if k.language == "triton"}
    block_ok = grid_ok = grid_checked = with_config = 0
    timed = [t for t in cap.timings.kernels if (t.compile_id, t.kernel) in kernels]
    example = ""
    for t in timed:
        k = kernels[(t.compile_id, t.kernel)]
        with_config += "XBLOCK" in k.launch
        if t.block and k.launch.get("num_warps"):
            block_ok += t.block[0] == 32 * k.launch["num_warps"]
        numel = re.search(r"^\s*xnumel = (\d+)$", k.source, re.M)
        if numel and "XBLOCK" in k.launch and "YBLOCK" not in k.launch and t.grid:
            grid_checked += 1
            grid_ok += t.grid[0] == -(-int(numel.group(1)) // k.launch["XBLOCK"])
        if not example and t.grid:
            example = f"e.g. {t.kernel}: grid {t.grid}, block {t.block}, launch {k.launch}"
    return [
        f"- launch: {with_config} of {len(timed)} timed Triton kernels carry the config they run with;"
        f" block = 32 x num_warps for {block_ok}; grid x = ceil(xnumel / XBLOCK) for {grid_ok}"
        f" of {grid_checked} 1-D grids with a static xnumel",
        f"- {example}",
    ]


def profiler_kernel_times(model, x, names: set[str], steps=10) -> dict[str, float]:
    """Median CUDA time per call of each named kernel over real training steps (forward+backward)."""
    compiled = torch.compile(model)
    for _ in range(3):
        compiled(x).float().sum().backward()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            compiled(x).float().sum().backward()
        torch.cuda.synchronize()
    times: dict[str, list[float]] = {}
    for e in prof.events():
        if e.name in names:
            times.setdefault(e.name, []).append(e.device_time_total / 1e6)
    return {k: statistics.median(v) for k, v in times.items()}


lines = [f"torch {torch.__version__}, {torch.cuda.get_device_name()}", ""]
failures = []
for model_name, make, shape in (
    ("block", Block, (8, 128, 256)),
    ("cnn", SmallCNN, (32, 3, 32, 32)),
):
    for dtype in (torch.float32, torch.bfloat16):
        torch.manual_seed(0)
        model = make().cuda().to(dtype)
        x = torch.randn(*shape, device="cuda", dtype=dtype)
        cap = compilescope.capture(model, x, timings=True)
        tag = f"{model_name}_{str(dtype).split('.')[-1]}"
        triton = [k for c in cap for k in c.kernels if k.language == "triton"]
        timed = {k.kernel: k for k in cap.timings.kernels if k.role != "backward"}
        ok = bool(triton) and all(g.compiled for g in cap.timings.graphs)
        lines.append(
            f"### {tag}: {len(cap)} compile ids, {len(triton)} Triton kernels, {len(timed)} kernel times"
        )
        for g in cap.timings.graphs:
            if g.compiled:
                lines.append(
                    f"- {g.compile_id} forward: eager {g.eager.median_s * 1e3:.3f} ms "
                    f"(min {g.eager.min_s * 1e3:.3f}, max {g.eager.max_s * 1e3:.3f}), compiled "
                    f"{g.compiled.median_s * 1e3:.3f} ms (min {g.compiled.min_s * 1e3:.3f}, max "
                    f"{g.compiled.max_s * 1e3:.3f}), n={g.compiled.repeats}; kernels sum "
                    f"{cap.timings.kernel_sum_s(g.compile_id) * 1e3:.3f} ms"
                )
            else:
                lines.append(f"- {g.compile_id}: not measured: {g.note}")
        with_ir = [k.name for k in triton if {"ttir", "ttgir", "llir", "ptx"} <= set(k.ir)]
        lines.append(
            f"- Triton kernels with TTIR/TTGIR/LLIR/PTX in the capture: {len(with_ir)} of {len(triton)}"
        )
        lines.extend(launch_agreement(cap))
        reference = profiler_kernel_times(make().cuda().to(dtype), x, set(timed))
        rows = []
        for name, kt in sorted(timed.items()):
            if name in reference and kt.time.median_s > 0:
                ratio = kt.time.median_s / reference[name]
                rows.append((name, kt.time.median_s, reference[name], ratio))
        if rows:
            lines.append("")
            lines.append(
                "| kernel | compilescope median (us) | profiler in a training step (us) | ratio |"
            )
            lines.append("|---|---|---|---|")
            for name, a, b, r in rows:
                lines.append(f"| {name} | {a * 1e6:.2f} | {b * 1e6:.2f} | {r:.3f} |")
            within = sum(abs(r - 1) <= 0.05 for *_, r in rows)
            lines.append(f"\n{within} of {len(rows)} kernels within 5%.")
        lines.append("")
        if not ok:
            failures.append(tag)
        (out / f"{tag}.json").write_text(trimmed(cap).to_json())

text = "\n".join(lines)
(out / "gpu_timings.md").write_text(text + "\n")
print(text)
sys.exit(1 if failures else 0)
