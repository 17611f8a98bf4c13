"""GPU run for issue 12 (H100/H200, torch 2.11, Triton 3.6): per-kernel timings at realistic size,
forward and backward, against torch.profiler in real training steps; the capture's overhead on
the GPU (and whether the capture prints anything: the capture processes' stdout and stderr).
About 7 minutes.

    PYTHONPATH=ext:benchmarks python benchmarks/recorders/gpu_realistic.py OUTDIR [--pairs 3] [--tiny]

Writes OUTDIR/gpu_realistic.md (for benchmarks/RESULTS.md), OUTDIR/gpu_realistic.json (every
figure, per kernel), and OUTDIR/gpt2_6x768_bf16_train.json.gz (the realistic capture, pre-grad
graphs and guards left out, for the tutorials). `--tiny`: small models on whatever device there
is (a CPU check of the script itself; its figures mean nothing).

Accuracy: one compile per model (a GPT-2 LM, 6 layers x 768, 8 x 512 tokens, bf16, and a
ResNet-18 at batch 64, 224 x 224, bf16), inside a compilescope capture. With the capture still
open, 3 warm-up and 10 real training steps (forward + backward) run under torch.profiler: the
reference, per Triton kernel, is the median CUDA time of its calls. When the capture closes,
compilescope times every graph and kernel with both of its GPU clocks (GPU_CLOCK "events" and
"profiler", the default). Kernels are compared by name where the name
is unique in the capture (forward and backward modules may reuse one).

Overhead: fresh processes, each with fresh Inductor and Triton cache folders, alternating:
bare torch.compile + first training step vs compilescope.capture (timings on, the default), on a
4-layer GPT-2 (8 x 512, bf16); median of per-pair ratios.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LEAKS = ("Compiled module path", "USDT", "STAGE:", "profiler_start")
STARTED = time.perf_counter()


def lm(device: str, dtype, tiny: bool, layers: int = 6):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        n_layer=2 if tiny else layers,
        n_embd=64 if tiny else 768,
        n_head=4 if tiny else 12,
        vocab_size=1000 if tiny else 50257,
        n_positions=1024,
    )
    model = GPT2LMHeadModel(cfg).to(device=device, dtype=dtype).train()
    batch, seq = (2, 32) if tiny else (8, 512)
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), device=device)

    def step(ids):
        return model(ids, labels=ids).loss

    return model, step, (ids,), f"GPT-2 LM {cfg.n_layer} x {cfg.n_embd}, {batch} x {seq} tokens"


def cnn(device: str, dtype, tiny: bool):
    import torch
    from models import ResNet18

    model = ResNet18(width=8 if tiny else 64).to(device=device, dtype=dtype).train()
    batch, size = (2, 32) if tiny else (64, 224)
    x = torch.randn(batch, 3, size, size, device=device, dtype=dtype)
    target = torch.randint(0, 1000, (batch,), device=device)

    def step(x):
        return torch.nn.functional.cross_entropy(model(x).float(), target)

    return model, step, (x,), f"ResNet-18, batch {batch}, {size} x {size}"


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def accuracy(name: str, make, device: str, dtype, tiny: bool, steps: int = 10) -> dict:
    """Capture one model's training step, the profiler reference inside the same compile, and
    compilescope's per-kernel times by both GPU clocks."""
    import torch
    from compilescope.live.options import CompileOptions
    from compilescope.live.pipeline import capture_run
    from compilescope.live.timing import kernel_timer, profiler_times
    from compilescope.live.timing.measure import measure

    torch.manual_seed(0)
    model, step, inputs, label = make(device, dtype, tiny)
    how = CompileOptions(timings=20)  # record the graphs for timing
    started = time.perf_counter()
    with capture_run(how) as run:
        session = run.session
        compiled = run.compile(step)
        compiled(*inputs).backward()
        sync(device)
        first_step_s = time.perf_counter() - started
        for _ in range(3):
            model.zero_grad(set_to_none=True)
            compiled(*inputs).backward()
        sync(device)
        wall = []
        for _ in range(steps):
            model.zero_grad(set_to_none=True)
            sync(device)
            t = time.perf_counter()
            compiled(*inputs).backward()
            sync(device)
            wall.append(time.perf_counter() - t)
        activities = [torch.profiler.ProfilerActivity.CPU]
        if device.startswith("cuda"):
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=activities) as prof:
            for _ in range(steps):
                model.zero_grad(set_to_none=True)
                compiled(*inputs).backward()
            sync(device)
        recorded = dict(session.recorded)
        session.timings = False  # the capture is built on the way out; timed below
    cap = session.result
    reference: dict[str, list[float]] = {}
    for e in prof.events():
        if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA:
            reference.setdefault(e.name, []).append(e.device_time_total / 1e6)
    out = {"model": label, "dtype": str(dtype), "first_step_s": first_step_s}
    out["real_step_ms"] = statistics.median(wall) * 1e3
    clocks = ("events", "profiler") if device.startswith("cuda") else ("cpu",)
    default_clock = kernel_timer.GPU_CLOCK
    checks: list[dict] = []
    real_gpu_times = kernel_timer.gpu_times

    def checked_gpu_times(prof):
        """The raw-event reading, checked against the profiler's own FunctionEvent tree."""
        t = time.perf_counter()
        times, launches = real_gpu_times(prof)
        raw_s = time.perf_counter() - t
        t = time.perf_counter()
        tree = profiler_times.function_event_times(prof)
        tree_s = time.perf_counter() - t
        diffs = [
            abs(statistics.median(times[k]) / statistics.median(tree[k]) - 1)
            for k in times
            if times[k] and tree.get(k)
        ]
        same_count = sum(len(times[k]) == len(tree.get(k, ())) for k in times)
        checks.append(
            {
                "ranges": len(times),
                "same_count": same_count,
                "max_rel_diff": max(diffs, default=None),
                "raw_s": raw_s,
                "tree_s": tree_s,
                "launch_shapes": len(launches),
            }
        )
        return times, launches

    kernel_timer.gpu_times = checked_gpu_times
    for clock in clocks:
        kernel_timer.GPU_CLOCK = clock if clock != "cpu" else kernel_timer.GPU_CLOCK
        t = time.perf_counter()
        timings = measure(recorded, cap, repeats=20)
        out[f"measure_s_{clock}"] = time.perf_counter() - t
        if clock in (default_clock, "cpu"):
            cap = replace(cap, timings=timings)
        out[f"compare_{clock}"] = compare(cap, timings, reference, steps)
    kernel_timer.GPU_CLOCK = default_clock
    kernel_timer.gpu_times = real_gpu_times
    if checks:
        out["raw_vs_tree"] = {
            "graphs": len(checks),
            "ranges": sum(c["ranges"] for c in checks),
            "same_count": sum(c["same_count"] for c in checks),
            "max_rel_diff": max((c["max_rel_diff"] or 0) for c in checks),
            "raw_s": round(sum(c["raw_s"] for c in checks), 3),
            "tree_s": round(sum(c["tree_s"] for c in checks), 3),
            "launch_shapes": sum(c["launch_shapes"] for c in checks),
        }
    out["coverage"] = coverage(cap)
    out["graphs"] = [
        {
            "compile_id": g.compile_id,
            "forward_ms": [s and s.median_s * 1e3 for s in (g.eager, g.compiled)],
            "backward_ms": [
                s and s.median_s * 1e3 for s in (g.eager_backward, g.compiled_backward)
            ],
            "note": g.note,
        }
        for g in cap.timings.graphs
    ]
    out["step_sum_ms"] = sum(g.step_s() or 0 for g in cap.timings.graphs) * 1e3
    out["capture"] = cap
    return out


def coverage(cap) -> dict:
    """Item 1 at realistic size: every compile with kernels has a time for each of them."""
    missing = []
    kernels = 0
    for c in cap:
        for code in c.output_code:
            timed = {t.kernel for t in cap.timings.kernels_of(str(c.id), code.role or "forward")}
            for k in code.kernels:
                kernels += 1
                if k.name not in timed:
                    missing.append(f"{c.id} {code.role} {k.name}")
    graphs = [g for g in cap.timings.graphs if g.compiled is not None]
    return {
        "compile_ids": len(cap),
        "kernels": kernels,
        "kernels_without_time": missing,
        "graphs_timed": len(graphs),
        "graphs_with_backward": sum(g.compiled_backward is not None for g in graphs),
        "graph_notes": [f"{g.compile_id}: {g.note}" for g in cap.timings.graphs if g.note],
    }


def compare(cap, timings, reference: dict, steps: int) -> dict:
    names = Counter(k.name for c in cap for k in c.kernels if k.language == "triton")
    rows = []
    for t in timings.kernels:
        if names.get(t.kernel) != 1 or t.kernel not in reference:
            continue
        ref = statistics.median(reference[t.kernel])
        rows.append(
            {
                "kernel": t.kernel,
                "compile_id": t.compile_id,
                "role": t.role,
                "compilescope_us": t.time.median_s * 1e6,
                "profiler_us": ref * 1e6,
                "ratio": t.time.median_s / ref if ref > 0 else None,
                "calls": t.calls_per_run,
                "profiler_calls": len(reference[t.kernel]) / steps,
            }
        )
    ambiguous = sum(1 for n, c in names.items() if c > 1)
    return {"rows": rows, "ambiguous_names": ambiguous, "buckets": buckets(rows)}


def buckets(rows: list[dict]) -> dict:
    out = {}
    for label, low, high in (
        ("> 20 us", 20, 1e12),
        ("5 to 20 us", 5, 20),
        ("< 5 us", 0, 5),
        ("all", 0, 1e12),
    ):
        errs = [abs(r["ratio"] - 1) for r in rows if r["ratio"] and low <= r["profiler_us"] < high]
        ratios = [r["ratio"] for r in rows if r["ratio"] and low <= r["profiler_us"] < high]
        if not errs:
            out[label] = {"n": 0}
            continue
        errs.sort()
        out[label] = {
            "n": len(errs),
            "within_5pct": sum(e <= 0.05 for e in errs),
            "within_10pct": sum(e <= 0.10 for e in errs),
            "median_abs_err": statistics.median(errs),
            "p90_abs_err": errs[min(len(errs) - 1, int(0.9 * len(errs)))],
            "min_ratio": min(ratios),
            "max_ratio": max(ratios),
            "median_ratio": statistics.median(ratios),
        }
    return out


CHILD = """
import os, sys, time
sys.path[:0] = [{ext!r}, {bench!r}]
import torch
from recorders.gpu_realistic import lm
dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
device = "cuda" if torch.cuda.is_available() else "cpu"
model, step, inputs, label = lm(device, dtype, {tiny!r}, layers=4)
if device == "cuda":
    torch.cuda.synchronize()
start = time.perf_counter()
if {arm!r} == "bare":
    torch.compile(step)(*inputs).backward()
elif {arm!r} == "listen":
    import compilescope
    cap = compilescope.capture(step, *inputs, timings=False)
else:
    import json
    import compilescope
    from compilescope.live import phases
    cap = compilescope.capture(step, *inputs)
    assert cap.timings is not None and cap.timings.kernels
    print("measure_s", cap.timings.measure_s)
    print("phases", json.dumps(phases.SECONDS))
if device == "cuda":
    torch.cuda.synchronize()
print(time.perf_counter() - start)
"""


def child(arm: str, tiny: bool) -> tuple[float, str, float, dict]:
    code = CHILD.format(ext=str(ROOT / "ext"), bench=str(ROOT / "benchmarks"), tiny=tiny, arm=arm)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ)
        env.update(TORCHINDUCTOR_CACHE_DIR=f"{cache}/inductor", TRITON_CACHE_DIR=f"{cache}/triton")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    lines = (out.stdout + out.stderr).splitlines()
    leaked = [line for line in lines if any(x in line for x in LEAKS)]
    measure_s = sum(float(line.split()[1]) for line in lines if line.startswith("measure_s "))
    phases = [json.loads(line.split(" ", 1)[1]) for line in lines if line.startswith("phases ")]
    wall = float(out.stdout.strip().splitlines()[-1])
    return wall, "\n".join(leaked), measure_s, (phases[0] if phases else {})


def overhead(pairs: int, tiny: bool, deadline_s: float, listen: bool) -> dict:
    """Arms in rotation (bare, capture[, listen]), one fresh process each; ratios per rotation."""
    arms = ("bare", "capture", "listen") if listen else ("bare", "capture")
    runs: dict[str, list[float]] = {arm: [] for arm in arms}
    leaks, measuring, phases = [], [], []
    for i in range(pairs):
        if time.perf_counter() - STARTED > deadline_s:
            break
        order = arms[i % len(arms) :] + arms[: i % len(arms)]
        result = {arm: child(arm, tiny) for arm in order}
        for arm in arms:
            runs[arm].append(result[arm][0])
        measuring.append(result["capture"][2])
        phases.append(result["capture"][3])
        if result["capture"][1]:
            leaks.append(result["capture"][1])
    out = {
        "bare_s": runs["bare"],
        "capture_s": runs["capture"],
        "measure_s": measuring,
        "phases": phases,
        "ratios": [c / b for c, b in zip(runs["capture"], runs["bare"], strict=True)],
        "leaked_lines": leaks,
    }
    if listen:
        out["listen_s"] = runs["listen"]
        out["listen_ratios"] = [c / b for c, b in zip(runs["listen"], runs["bare"], strict=True)]
    return out


def markdown(results: dict) -> str:
    import torch

    lines = [f"torch {torch.__version__}, {results['device']}", ""]
    for key in ("lm", "cnn"):
        r = results.get(key)
        if not r:
            continue
        cov = r["coverage"]
        lines += [
            f"### {r['model']} ({r['dtype']}), one training step",
            "",
            f"- compile + first step: {r['first_step_s']:.1f} s; a real step (median of 10, "
            f"synchronized): {r['real_step_ms']:.2f} ms; compilescope's graphs, forward + "
            f"backward summed: {r['step_sum_ms']:.2f} ms",
            f"- {cov['compile_ids']} compile ids, {cov['graphs_timed']} graphs timed "
            f"({cov['graphs_with_backward']} with their backward), {cov['kernels']} kernels, "
            f"{len(cov['kernels_without_time'])} without a time"
            + (
                f": {', '.join(cov['kernels_without_time'][:8])}"
                if cov["kernels_without_time"]
                else ""
            ),
        ]
        if cov["graph_notes"]:
            lines.append(f"- notes: {'; '.join(cov['graph_notes'][:5])}")
        for g in r["graphs"]:
            f, b = g["forward_ms"], g["backward_ms"]
            if f[1] is None:
                continue
            lines.append(
                f"- {g['compile_id']}: forward eager {f[0]:.3f} / compiled {f[1]:.3f} ms"
                + (f"; backward eager {b[0]:.3f} / compiled {b[1]:.3f} ms" if b[1] else "")
            )
        if r.get("raw_vs_tree"):
            lines.append(
                f"- kernel times from raw profiler events vs its event tree: {r['raw_vs_tree']}"
            )
        for clock in ("events", "profiler", "cpu"):
            cmp_ = r.get(f"compare_{clock}")
            if not cmp_:
                continue
            lines += [
                "",
                f"Per-kernel medians, compilescope (GPU_CLOCK={clock}, measuring took "
                f"{r[f'measure_s_{clock}']:.1f} s) / torch.profiler in 10 real steps; "
                f"{len(cmp_['rows'])} Triton kernels compared ({cmp_['ambiguous_names']} names "
                "left out: used by more than one module):",
                "",
                "| reference time | kernels | within 5% | within 10% | median abs. error | p90 | ratio range |",
                "|---|---|---|---|---|---|---|",
            ]
            for label, b in cmp_["buckets"].items():
                if not b["n"]:
                    lines.append(f"| {label} | 0 | | | | | |")
                    continue
                lines.append(
                    f"| {label} | {b['n']} | {b['within_5pct']} ({b['within_5pct'] / b['n']:.0%}) "
                    f"| {b['within_10pct']} | {b['median_abs_err']:.1%} | {b['p90_abs_err']:.1%} "
                    f"| {b['min_ratio']:.3f} to {b['max_ratio']:.3f} |"
                )
        lines.append("")
    o = results.get("overhead")
    if o and o["ratios"]:
        lines += [
            "### Overhead: compile + first training step, GPT-2 4 x 768, 8 x 512, bf16 "
            "(fresh process and caches each run, alternating)",
            "",
            f"- bare torch.compile: {', '.join(f'{v:.1f}' for v in o['bare_s'])} s",
            f"- compilescope.capture (timings on): {', '.join(f'{v:.1f}' for v in o['capture_s'])} s"
            f" (of which measuring: {', '.join(f'{v:.2f}' for v in o['measure_s'])} s)",
            f"- ratio per pair: {', '.join(f'{v:.3f}' for v in o['ratios'])}; median "
            f"{statistics.median(o['ratios']):.3f}; target <= 1.05",
            f"- lines leaked to stdout/stderr by the capture: {len(o['leaked_lines'])}",
        ]
        if o.get("listen_s"):
            lines += [
                f"- compilescope.capture, timings=False: "
                f"{', '.join(f'{v:.1f}' for v in o['listen_s'])} s; ratio per rotation: "
                f"{', '.join(f'{v:.3f}' for v in o['listen_ratios'])}; median "
                f"{statistics.median(o['listen_ratios']):.3f}",
            ]
        names = sorted({k for p in o.get("phases", []) for k in p})
        if names:
            lines.append(
                "- measuring, by phase (median over runs, s): "
                + ", ".join(
                    f"{k} {statistics.median(p.get(k, 0.0) for p in o['phases']):.3f}"
                    for k in names
                )
            )
    lines.append(f"total {time.perf_counter() - STARTED:.0f} s")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--listen", action="store_true", help="a third arm: capture, no timings")
    parser.add_argument("--deadline", type=float, default=400, help="no new pair after this")
    parser.add_argument("--skip-accuracy", action="store_true")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # Triton's cache outside OUTDIR: everything under OUTDIR is copied back from the GPU machine.
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="triton_"))

    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    results: dict = {"device": torch.cuda.get_device_name() if device == "cuda" else "cpu"}
    if not args.skip_accuracy:
        results["lm"] = accuracy("lm", lm, device, dtype, args.tiny)
        results["cnn"] = accuracy("cnn", cnn, device, dtype, args.tiny)
        from models import trimmed

        cap = results["lm"].pop("capture")
        results["cnn"].pop("capture")
        with gzip.open(out / "gpt2_6x768_bf16_train.json.gz", "wt", encoding="utf-8") as f:
            f.write(trimmed(cap).to_json())
    results["overhead"] = overhead(args.pairs, args.tiny, args.deadline, args.listen)
    text = markdown(results)
    (out / "gpu_realistic.md").write_text(text)
    (out / "gpu_realistic.json").write_text(json.dumps(results, indent=1, default=str))
    print(text)


if __name__ == "__main__":
    main()
