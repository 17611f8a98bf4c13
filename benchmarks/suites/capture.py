"""Capture overhead and offline loading speed, measured side by side in one run.

    PYTHONPATH=ext:benchmarks python -m benchmarks run cpu-capture [--pairs N] [--loads N] [--before PATH]

Prints a Markdown section for benchmarks/RESULTS.md.
- capture overhead: the same workload (TinyMLP forward+backward, torch.compile/inductor, then
  the first run) in a fresh process each time with a fresh, empty Inductor cache directory
  (cold, torch's default cache settings), bare and under compilescope, alternating; the median of
  the per-pair ratios. Arms: bare `torch.compile`; `capturing()` (listening only);
  `capture(model, x)` (listening and timings, the default); with `--before PATH` also
  `capture(model, x, timings=True)` from the compilescope package at PATH (an older checkout's
  `ext/`), for before/after figures from one run. With `--warm-cache` every run shares one
  Inductor cache directory, warmed by an uncounted bare run (a machine where torch has
  compiled before), with the FX-graph and AOTAutograd caches off in every arm, so that each
  run compiles the graphs anew but reuses what torch keeps across graphs (the vector-ISA check).
- offline loading: `compilescope.load_trace` (lazy) and the same plus parsing every graph's
  nodes, against `tlparse` on the same multi-MB TORCH_TRACE log (the GPT-2 fixture), alternating.
"""

from __future__ import annotations

import argparse
import gzip
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import os, sys, time
sys.path.insert(0, {tests!r})
sys.path.insert(0, {ext!r})
import torch, compilescope
from workloads import TinyMLP, ConvBN
torch.manual_seed(0)
if {model!r} == "cnn":
    model, x = ConvBN(), torch.randn(4, 3, 16, 16)
elif {model!r} == "lm":
    from transformers import GPT2Config, GPT2Model

    class LM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            config = GPT2Config(n_layer=2, n_head=2, n_embd=64, vocab_size=256, n_positions=64)
            self.gpt = GPT2Model(config)

        def forward(self, ids):
            return self.gpt(input_ids=ids).last_hidden_state

    model, x = LM(), torch.randint(0, 256, (2, 32))
else:
    model, x = TinyMLP(), torch.randn(4, 16)
measure_s = 0.0
start = time.perf_counter()
if {arm!r} == "bare":
    torch.compile(model)(x).sum().backward()
elif {arm!r} == "listening":
    with compilescope.capturing() as cap:
        torch.compile(model)(x).sum().backward()
    assert len(cap) == 1
elif {arm!r} == "before":
    cap = compilescope.capture(model, x, timings=True)
    measure_s = cap.timings.measure_s
else:
    cap = compilescope.capture(model, x)
    measure_s = cap.timings.measure_s
print(measure_s)
print(time.perf_counter() - start)
"""
ARMS = {
    "bare": "bare torch.compile + first run (forward and backward)",
    "listening": "capturing() around it (listening only)",
    "after": "capture(model, x): listening and timings (the default)",
    "before": "capture(model, x, timings=True) from --before (the code before)",
}


def timed_child(
    arm: str, ext: str, threads: int | None, warm: str | None = None, model: str = "mlp"
) -> tuple[float, float, float]:
    """(wall seconds, of which measuring, CPU seconds) of one fresh process with a fresh cache
    directory (or the shared `warm` one). CPU seconds are user + system of the process and the
    compilers it ran (they are reaped children): steadier than wall time on a machine others
    are using."""
    code = CHILD.format(tests=str(ROOT / "tests"), ext=ext, arm=arm, model=model)
    with tempfile.TemporaryDirectory() as fresh:
        cache = warm or fresh
        env = {"TORCHINDUCTOR_CACHE_DIR": cache, "PATH": "/usr/bin:/bin", "HOME": cache}
        if warm:  # every graph compiled anew, as on a machine that has not seen this model
            env |= {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}
        if threads:
            env["OMP_NUM_THREADS"] = str(threads)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    *_, measure_s, total_s = out.stdout.strip().splitlines()
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return float(total_s), float(measure_s), cpu


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f}, n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--loads", type=int, default=9)
    parser.add_argument("--before", help="an older checkout's ext/ folder, for before figures")
    parser.add_argument(
        "--arms", default="bare,listening,after", help="which arms, comma-separated"
    )
    parser.add_argument("--threads", type=int, help="OMP_NUM_THREADS for every arm")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--warm-cache", action="store_true", help="one shared, warmed Inductor cache directory"
    )
    parser.add_argument(
        "--model",
        choices=("mlp", "cnn", "lm"),
        default="mlp",
        help="TinyMLP, a conv+batch-norm CNN, or a 2-layer GPT-2 (transformers)",
    )
    args = parser.parse_args()

    import compilescope
    import torch

    arms = args.arms.split(",") + (["before"] if args.before else [])
    ext = {arm: str(ROOT / "ext") for arm in arms}
    if args.before:
        ext["before"] = str(Path(args.before).resolve())
    totals: dict[str, list[float]] = {arm: [] for arm in arms}
    measuring: dict[str, list[float]] = {arm: [] for arm in arms}
    ratios: dict[str, list[float]] = {arm: [] for arm in arms if arm != "bare"}
    cpu: dict[str, list[float]] = {arm: [] for arm in arms}
    cpu_ratios: dict[str, list[float]] = {arm: [] for arm in arms if arm != "bare"}
    warm = tempfile.mkdtemp(prefix="cs-warm-cache-") if args.warm_cache else None
    if warm:
        timed_child("bare", str(ROOT / "ext"), args.threads, warm, args.model)
    for i in range(args.pairs):
        # Rotate which arm goes first, so drift in machine load hits every arm alike.
        order = arms[i % len(arms) :] + arms[: i % len(arms)]
        result = {arm: timed_child(arm, ext[arm], args.threads, warm, args.model) for arm in order}
        for arm in arms:
            totals[arm].append(result[arm][0])
            measuring[arm].append(result[arm][1])
            cpu[arm].append(result[arm][2])
            if arm != "bare":
                ratios[arm].append(result[arm][0] / result["bare"][0])
                cpu_ratios[arm].append(result[arm][2] / result["bare"][2])

    tmp = Path(tempfile.mkdtemp())
    log = tmp / "gpt2.log"
    with gzip.open(ROOT / "tests/fixtures/gpt2.log.gz", "rb") as src, open(log, "wb") as dst:
        shutil.copyfileobj(src, dst)
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).with_name("tlparse"))
    lazy, full, reference = [], [], []
    for i in range(args.loads):
        start = time.perf_counter()
        cap = compilescope.load_trace(log)
        lazy.append(time.perf_counter() - start)
        start = time.perf_counter()
        cap = compilescope.load_trace(log)
        nodes = sum(len(g.nodes) for c in cap for gs in c.graphs.values() for g in gs)
        full.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run(
            [tlparse, str(log), "-o", str(tmp / f"tl{i}"), "--no-browser", "--overwrite"],
            check=True,
            capture_output=True,
        )
        reference.append(time.perf_counter() - start)

    print(f"## Capture engine ({time.strftime('%Y-%m-%d')})\n")
    print(
        f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, "
        f"{__import__('os').cpu_count()} cores; Python {platform.python_version()}, "
        f"torch {torch.__version__}, compilescope {compilescope.__version__}.\n"
    )
    where = "one warmed Inductor cache dir" if warm else "fresh Inductor cache dir each run"
    name = {"mlp": "TinyMLP", "cnn": "a conv+batch-norm CNN", "lm": "a 2-layer GPT-2"}[args.model]
    print(f"### Capture overhead ({name} forward+backward, inductor, fresh process and {where})\n")
    if args.threads:
        print(f"OMP_NUM_THREADS={args.threads} in every arm.\n")
    for arm in arms:
        line = f"- {ARMS[arm]}: {spread(totals[arm])}; CPU {spread(cpu[arm])}"
        if arm in ("after", "before"):
            line += f"; of which measuring (Timings.measure_s) {spread(measuring[arm])}"
        print(line)
    print()
    for arm, values in ratios.items():
        print(
            f"- ratio {arm} / bare, per run of {len(arms)} alternating arms: wall median "
            f"{statistics.median(values):.3f} (min {min(values):.3f}, max {max(values):.3f}); "
            f"CPU time median {statistics.median(cpu_ratios[arm]):.3f} (min "
            f"{min(cpu_ratios[arm]):.3f}, max {max(cpu_ratios[arm]):.3f}); target <= 1.05"
        )
    print()
    size = log.stat().st_size / 1e6
    print(
        f"### Offline loading ({size:.1f} MB TORCH_TRACE of a 2-layer GPT-2 fwd+bwd, {nodes} graph nodes)\n"
    )
    print(f"- tlparse 0.4.3 (writes its HTML report): {spread(reference)}")
    print(f"- compilescope.load_trace (lazy graphs): {spread(lazy)}")
    print(f"- compilescope.load_trace + every graph's nodes parsed: {spread(full)}")
    print(
        f"- ratio load_trace / tlparse: lazy {statistics.median(lazy) / statistics.median(reference):.2f}, "
        f"full {statistics.median(full) / statistics.median(reference):.2f}; target < 1\n"
    )
    if args.json:
        import rows

        found = []
        for arm in arms:
            case = ARMS[arm] + (", warm cache dir" if warm else "")
            case += "" if args.model == "mlp" else f", {args.model}"
            found += [(case, "wall", "s", totals[arm]), (case, "CPU", "s", cpu[arm])]
            if arm != "bare":
                found += [(case, "wall / bare, per run", "x", ratios[arm])]
        for what, values in (("tlparse", reference), ("load_trace, lazy", lazy),
                             ("load_trace, every graph parsed", full)):  # fmt: skip
            found.append((f"GPT-2 log, {size:.1f} MB", what, "s", values))
        rows.save_figures(args.json, found)


SUITE = {
    "name": "cpu-capture",
    "device": "CPU",
    "measures": "what `capturing()` adds to a small model's compile and first step (TinyMLP, "
    "fresh processes, arms interleaved), and loading the GPT-2 log against tlparse",
}


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    return rows.convert_figures(SUITE["name"], path, prov, args)


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    return rows.run_figures(Path(__file__), SUITE["name"], args, out)


RECORDED = [
    ("raw/capture/capture_2026-11-27.json", {}, "--pairs 5 --loads 9"),
    (
        "raw/capture/capture_warm_2026-11-27.json",
        {},
        "--warm-cache --pairs 5 --loads 3 --arms bare,listening,after --before OLD/ext",
    ),
    *(
        (
            f"raw/capture/capture_warm_{model}_2026-11-27.json",
            {},
            f"--warm-cache --pairs 3 --loads 1 --arms bare,listening,after --before OLD/ext "
            f"--model {model}",
        )
        for model in ("cnn", "lm")
    ),
]


if __name__ == "__main__":
    main()
