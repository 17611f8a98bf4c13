"""Measure eager vs compiled step time for every blind-verdict loop.

For each loop file named in ``LOOPS`` (an explicit list: other files in this
folder are not loops) it runs fresh child processes of the same Python,
interleaved ``compiled, eager, compiled, eager, ...`` (``--pairs``, default 3).
Each child:

* sets ``torch.set_num_threads(1)`` (and ``OMP_NUM_THREADS=1``,
  ``TORCHINDUCTOR_COMPILE_THREADS=1``: the machine has 2 shared cores),
* calls the loop's ``build()`` once,
* runs ``--warmup`` (10) steps, then times ``--steps`` (20) steps one by one
  with ``time.perf_counter`` and reports the median.

The eager variant runs exactly the same code, with every step (warm-up and
timed) inside ``torch.compiler.set_stance("force_eager")``: the
``torch.compile``'d callables then run their original Python eagerly, so the
only difference between the two variants is compilation.

Result: ``measured.json`` next to this file, with per loop the compiled and
eager medians per pair, the per-pair ratio eager/compiled, the median ratio and
its range, the verdict the measurement gives (``faster`` if the median ratio is
>= 1.05, else ``not_faster``), whether every pair gives the same verdict, and
whether it agrees with the loop's ``EXPECT``.

Usage::

    python measure.py                    # all loops
    python measure.py --only tiny_mlp_overhead graph_break_item
    python measure.py --child FILE --mode compiled   # (internal) one child run
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOOPS = [
    "tiny_mlp_overhead.py",
    "graph_break_item.py",
    "recompile_limit_varlen.py",
    "backend_eager_debug.py",
    "transcendental_cpu.py",
    "fused_elementwise_chain.py",
    "manual_norm_mlp.py",
]
THRESHOLD = 1.05  # compiled must be at least 5% faster to count as "faster"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def child(path: Path, mode: str, warmup: int, steps: int) -> dict:
    import contextlib

    import torch

    torch.set_num_threads(1)
    mod = _load(path)
    t0 = time.perf_counter()
    step = mod.build()
    ctx = torch.compiler.set_stance("force_eager") if mode == "eager" else contextlib.nullcontext()
    times: list[float] = []
    with ctx:
        for _ in range(warmup):
            step()
        t_warm = time.perf_counter() - t0
        for _ in range(steps):
            s = time.perf_counter()
            step()
            times.append(time.perf_counter() - s)
    out = {
        "mode": mode,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "warmup_total_s": t_warm,
        "times_s": times,
    }
    try:
        from torch._dynamo.utils import counters

        out["dynamo"] = {
            "unique_graphs": counters["stats"].get("unique_graphs", 0),
            "calls_captured": counters["stats"].get("calls_captured", 0),
            "graph_breaks": sum(counters["graph_break"].values()),
            "frames": {str(k): v for k, v in counters["frames"].items()},
        }
    except Exception as e:  # noqa: BLE001 - diagnostics only
        out["dynamo"] = {"error": repr(e)}
    return out


def run_child(path: Path, mode: str, args, env: dict) -> dict:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        str(path),
        "--mode",
        mode,
        "--warmup",
        str(args.warmup),
        "--steps",
        str(args.steps),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{path.name} {mode} failed (rc={p.returncode}):\n{p.stderr[-3000:]}")
    last = [ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1]
    return json.loads(last)


def verdict(ratio: float) -> str:
    return "faster" if ratio >= THRESHOLD else "not_faster"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--mode", choices=["compiled", "eager"])
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--out", default=str(HERE / "measured.json"))
    args = ap.parse_args()

    if args.child:
        print(json.dumps(child(Path(args.child), args.mode, args.warmup, args.steps)))
        return

    files = [HERE / name for name in LOOPS]
    if args.only:
        files = [p for p in files if p.stem in set(args.only)]
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TORCHINDUCTOR_COMPILE_THREADS="1")
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="blind_verdict_inductor_"))

    import torch

    results: dict = {
        "python": sys.executable,
        "torch": torch.__version__,
        "threads_per_child": 1,
        "warmup_steps": args.warmup,
        "timed_steps": args.steps,
        "pairs": args.pairs,
        "eager_switch": 'torch.compiler.set_stance("force_eager") around every step of the eager child',
        "ratio": "eager_median / compiled_median (>1 means compiled is faster)",
        "verdict_rule": f"faster if median ratio >= {THRESHOLD}, else not_faster",
        "loops": {},
    }
    for path in files:
        mod = _load(path)
        pairs = []
        for i in range(args.pairs):
            c = run_child(path, "compiled", args, env)
            e = run_child(path, "eager", args, env)
            ratio = e["median_s"] / c["median_s"]
            pairs.append(
                {
                    "compiled_median_ms": c["median_s"] * 1e3,
                    "eager_median_ms": e["median_s"] * 1e3,
                    "ratio_eager_over_compiled": ratio,
                    "compiled_warmup_total_s": c["warmup_total_s"],
                    "eager_warmup_total_s": e["warmup_total_s"],
                    "compiled_dynamo": c.get("dynamo"),
                }
            )
            print(
                f"{path.stem:28s} pair {i}: compiled {c['median_s'] * 1e3:8.3f} ms  eager {e['median_s'] * 1e3:8.3f} ms"
                f"  ratio {ratio:5.2f}  (compiled warm-up {c['warmup_total_s']:.1f}s)",
                flush=True,
            )
        ratios = [p["ratio_eager_over_compiled"] for p in pairs]
        med = statistics.median(ratios)
        v = verdict(med)
        results["loops"][path.name] = {
            "source": mod.SOURCE,
            "expect": mod.EXPECT,
            "pairs": pairs,
            "median_ratio": med,
            "ratio_range": [min(ratios), max(ratios)],
            "measured_verdict": v,
            "all_pairs_same_verdict": all(verdict(r) == v for r in ratios),
            "agrees_with_expect": v == mod.EXPECT,
        }
        print(
            f"{path.stem:28s} median ratio {med:.2f} [{min(ratios):.2f}, {max(ratios):.2f}] -> {v}"
            f" (EXPECT {mod.EXPECT}: {'agrees' if v == mod.EXPECT else 'DISAGREES'})",
            flush=True,
        )
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
