"""Capture overhead and offline loading speed, measured side by side in one run.

    python benchmarks/bench_capture.py [--pairs N] [--loads N]

Prints a Markdown section for benchmarks/RESULTS.md.
- capture overhead: the same workload (TinyMLP forward+backward, torch.compile/inductor) in a
  fresh process each time (cold Dynamo, FX-graph and AOTAutograd caches off in both arms, since a
  capture turns them off), with and without `compilescope.capturing()`, alternating; median ratio.
- offline loading: `compilescope.load_trace` (lazy) and the same plus parsing every graph's
  nodes, against `tlparse` on the same multi-MB TORCH_TRACE log (the GPT-2 fixture), alternating.
"""

from __future__ import annotations

import argparse
import gzip
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import os, sys, time
sys.path.insert(0, {tests!r})
import torch, compilescope
from workloads import module_backward
start = time.perf_counter()
if {captured} == "timed":
    from workloads import TinyMLP
    torch.manual_seed(0)
    cap = compilescope.capture(TinyMLP(), torch.randn(4, 16), timings=True)
    print(cap.timings.measure_s)
elif {captured} == "untimed":
    from workloads import TinyMLP
    torch.manual_seed(0)
    cap = compilescope.capture(TinyMLP(), torch.randn(4, 16))
    print(0.0)
elif {captured}:
    with compilescope.capturing() as cap:
        module_backward()
    assert len(cap) == 1
else:
    module_backward()
print(time.perf_counter() - start)
"""


def timed_child(captured: bool | str) -> float:
    code = CHILD.format(tests=str(ROOT / "tests"), captured=repr(captured))
    env = {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return float(out.stdout.strip().splitlines()[-1])


def timed_child_with_measure(mode: str) -> tuple[float, float]:
    code = CHILD.format(tests=str(ROOT / "tests"), captured=repr(mode))
    env = {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    *_, measure_s, total_s = out.stdout.strip().splitlines()
    return float(total_s), float(measure_s)


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f}, n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--loads", type=int, default=9)
    args = parser.parse_args()

    import compilescope
    import torch

    plain, captured, ratios = [], [], []
    for i in range(args.pairs):
        # Alternate which arm goes first, so drift in machine load hits both alike.
        order = (False, True) if i % 2 == 0 else (True, False)
        result = {flag: timed_child(flag) for flag in order}
        plain.append(result[False])
        captured.append(result[True])
        ratios.append(result[True] / result[False])

    untimed, timed, measuring, timing_ratios = [], [], [], []
    for i in range(args.pairs):
        order = ("untimed", "timed") if i % 2 == 0 else ("timed", "untimed")
        result = {mode: timed_child_with_measure(mode) for mode in order}
        untimed.append(result["untimed"][0])
        timed.append(result["timed"][0])
        measuring.append(result["timed"][1])
        timing_ratios.append(result["timed"][0] / result["untimed"][0])

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
    print("### Capture overhead (TinyMLP forward+backward, inductor, cold, fresh process each)\n")
    print(f"- without capture: {spread(plain)}")
    print(f"- with capture:    {spread(captured)}")
    print(
        f"- ratio with/without, per alternating pair: median {statistics.median(ratios):.3f} "
        f"(min {min(ratios):.3f}, max {max(ratios):.3f}); target <= 1.05\n"
    )
    print("### Timings on vs off (capture(TinyMLP, x), inductor, fresh process each)\n")
    print(f"- timings off: {spread(untimed)}")
    print(f"- timings on:  {spread(timed)}")
    print(f"- of which measuring (Timings.measure_s): {spread(measuring)}")
    print(
        f"- ratio on/off per alternating pair: median {statistics.median(timing_ratios):.3f} "
        f"(min {min(timing_ratios):.3f}, max {max(timing_ratios):.3f})\n"
    )
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


if __name__ == "__main__":
    main()
