"""GPU run (H100, torch 2.11, Triton 3.6): capture and time real models, check Triton IR, cross-check
per-kernel medians against torch.profiler over a real training step.

    python benchmarks/gpu_timings.py OUTDIR

Writes OUTDIR/gpu_timings.md (tables for benchmarks/RESULTS.md) and OUTDIR/<model>_<dtype>.json
captures (trimmed: guards and graph texts of pre-grad stages dropped).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
os.environ.setdefault("TRITON_CACHE_DIR", str(out / "triton_cache"))

import compilescope  # noqa: E402
import torch  # noqa: E402
from gpu_models import Block, SmallCNN  # noqa: E402


def cache_roots() -> list[Path]:
    """Triton's cache: TRITON_CACHE_DIR, and Inductor's own (it may set its own per process)."""
    from torch._inductor.runtime.runtime_utils import cache_dir

    return [Path(os.environ["TRITON_CACHE_DIR"]), Path(cache_dir())]


def ir_stages(kernel: str) -> list[str]:
    found = {p.suffix.lstrip(".") for root in cache_roots() for p in root.rglob(f"{kernel}.*")}
    return sorted(found & {"ttir", "ttgir", "llir", "ptx", "cubin"})


def launch_meta(kernel: str) -> dict:
    for root in cache_roots():
        for path in root.rglob(f"{kernel}.json"):
            meta = json.loads(path.read_text())
            return {k: meta.get(k) for k in ("num_warps", "num_stages", "shared")}
    return {}


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
        timed = {k.kernel: k for k in cap.timings.kernels}
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
        with_ir = [k.name for k in triton if len(ir_stages(k.name)) >= 4]
        lines.append(
            f"- Triton kernels with TTIR/TTGIR/LLIR/PTX in the cache: {len(with_ir)} of {len(triton)}"
        )
        if triton:
            meta = launch_meta(triton[0].name)
            lines.append(
                f"- e.g. {triton[0].name}: stages {ir_stages(triton[0].name)}, launch {meta}"
            )
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
        trimmed = replace(
            cap,
            compiles=tuple(
                replace(
                    c, guards="", graphs={k: v for k, v in c.graphs.items() if "pre_grad" not in k}
                )
                for c in cap
            ),
        )
        (out / f"{tag}.json").write_text(trimmed.to_json())

text = "\n".join(lines)
(out / "gpu_timings.md").write_text(text + "\n")
print(text)
sys.exit(1 if failures else 0)
