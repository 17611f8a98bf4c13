"""GPU timing check for the b5_ loops (helper, not a loop).

Usage (device machine, repository root):
    python benchmarks/data/blind_set/_b5_gpu_check.py [loop ...]

For every loop it runs 2 interleaved pairs (False, True, False, True), each
variant in a fresh subprocess (jobs are queued pair-major: first pair of every
loop, then the second pair, which then reuses the inductor cache): build, 10 warm-up steps, then 30 timed steps.
Per-step times are taken with torch.cuda.synchronize() before and after each
step (median reported); the same 30 steps are also timed as one block with a
sync only at both ends (mean reported).  To fit the time limit, up to
``--jobs`` subprocesses compile at once, but only one at a time runs its
warm-up and timed steps (a file lock), so timings never overlap on the GPU.
Results go to $OUT/b5_gpu_check.json (or ./b5_gpu_check.json); every finished
run is also appended at once to $OUT/b5_gpu_runs.jsonl (kept if the command is
cut off).
"""

from __future__ import annotations

import argparse
import fcntl
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_LOOPS = [
    "b5_dataloader_gpu_tensordataset",
    "b5_resnet_float64_autocast_ignored",
    "b5_bert_multitask_two_backward",
    "b5_vit_manual_l2_penalty",
    "b5_dlrm_dense_embedding_grads",
    "b5_ensemble_python_loop",
]
LOCK = "/tmp/b5_gpu_timing.lock"


def child(name: str, remedy: bool, warmup: int, timed: int) -> None:
    import torch
    from torch._dynamo.utils import counters

    sys.path.insert(0, str(HERE))
    mod = importlib.import_module(name)
    t0 = time.perf_counter()
    step, sync = mod.build("cuda", remedy)
    step()  # first step: compile (runs concurrently with other children's compiles)
    sync()
    t_first = time.perf_counter() - t0
    with open(LOCK, "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        t_lock = time.perf_counter()
        for _ in range(warmup - 1):
            step()
        sync()
        t_warm = time.perf_counter() - t0
        per_step = []
        for _ in range(timed):
            sync()
            a = time.perf_counter()
            step()
            sync()
            per_step.append((time.perf_counter() - a) * 1e3)
        sync()
        a = time.perf_counter()
        for _ in range(timed):
            step()
        sync()
        block_ms = (time.perf_counter() - a) * 1e3 / timed
        fcntl.flock(lk, fcntl.LOCK_UN)
    res = {
        "loop": name,
        "remedy": remedy,
        "median_ms": statistics.median(per_step),
        "min_ms": min(per_step),
        "block_mean_ms": block_ms,
        "first_step_s": t_first,
        "build_plus_warmup_s": t_warm,
        "waited_for_lock_s": t_lock - t0 - t_first,
        "unique_graphs": int(counters["stats"].get("unique_graphs", 0)),
        "graph_breaks": int(sum(counters["graph_break"].values())),
        "max_mem_gb": torch.cuda.max_memory_allocated() / 2**30,
        "torch": torch.__version__,
    }
    print("B5RESULT " + json.dumps(res), flush=True)


def run_job(name: str, remedy: bool, pair: int, args: argparse.Namespace, t_start: float) -> dict:
    if time.time() - t_start > args.budget - 40:
        return {"loop": name, "remedy": remedy, "pair": pair, "error": "skipped (time budget)"}
    env = dict(os.environ)
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", "/tmp/b5_inductor_cache")
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "4")
    cmd = [
        sys.executable,
        __file__,
        "--child",
        name,
        str(int(remedy)),
        str(args.warmup),
        str(args.timed),
    ]
    left = max(30.0, args.budget - (time.time() - t_start) - 5)
    try:
        p = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=min(args.job_timeout, left)
        )
    except subprocess.TimeoutExpired:
        return {"loop": name, "remedy": remedy, "pair": pair, "error": "timeout"}
    for line in p.stdout.splitlines():
        if line.startswith("B5RESULT "):
            r = json.loads(line[len("B5RESULT ") :])
            r["pair"] = pair
            r["wall_s"] = round(time.time() - t_start, 1)
            with open(Path(os.environ.get("OUT", ".")) / "b5_gpu_runs.jsonl", "a") as fh:
                fh.write(json.dumps(r) + "\n")
            print(
                f"[{r['wall_s']:6.1f}s] {name} remedy={remedy} pair={pair}: median {r['median_ms']:.2f} ms, "
                f"block {r['block_mean_ms']:.2f} ms, first step {r['first_step_s']:.1f}s, graphs {r['unique_graphs']}",
                flush=True,
            )
            return r
    tail = (p.stdout[-1500:] + "\n" + p.stderr[-3000:]).strip()
    print(f"FAILED {name} remedy={remedy} pair={pair} rc={p.returncode}\n{tail}", flush=True)
    return {
        "loop": name,
        "remedy": remedy,
        "pair": pair,
        "error": f"rc={p.returncode}",
        "tail": tail[-2000:],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("loops", nargs="*")
    ap.add_argument("--child", nargs=4)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--timed", type=int, default=30)
    ap.add_argument("--budget", type=float, default=400.0)
    ap.add_argument("--job-timeout", type=float, default=200.0)
    args = ap.parse_args()
    if args.child:
        name, remedy, warmup, timed = args.child
        child(name, bool(int(remedy)), int(warmup), int(timed))
        return 0

    loops = args.loops or DEFAULT_LOOPS
    t_start = time.time()
    try:
        import torch

        info = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}
        try:
            import transformers

            info["transformers"] = transformers.__version__
        except Exception as e:  # noqa: BLE001
            info["transformers"] = repr(e)
        try:
            import torchvision

            info["torchvision"] = torchvision.__version__
        except Exception as e:  # noqa: BLE001
            info["torchvision"] = repr(e)
    except Exception as e:  # noqa: BLE001
        info = {"error": repr(e)}
    print(json.dumps(info), flush=True)
    jobs = [(n, rem, pair) for pair in (0, 1) for n in loops for rem in (False, True)]
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        futs = [ex.submit(run_job, n, rem, pair, args, t_start) for n, rem, pair in jobs]
        results = [f.result() for f in futs]

    summary = {}
    for n in loops:
        rs = [r for r in results if r["loop"] == n and "median_ms" in r]
        f = [r["median_ms"] for r in rs if not r["remedy"]]
        t = [r["median_ms"] for r in rs if r["remedy"]]
        fb = [r["block_mean_ms"] for r in rs if not r["remedy"]]
        tb = [r["block_mean_ms"] for r in rs if r["remedy"]]
        s = {"false_median_ms": f, "true_median_ms": t, "false_block_ms": fb, "true_block_ms": tb}
        if f and t:
            s["ratio_median"] = statistics.median(f) / statistics.median(t)
        if fb and tb:
            s["ratio_block"] = statistics.median(fb) / statistics.median(tb)
        summary[n] = s
    out = {
        "info": info,
        "summary": summary,
        "runs": results,
        "total_s": round(time.time() - t_start, 1),
    }
    out_dir = Path(os.environ.get("OUT", "."))
    (out_dir / "b5_gpu_check.json").write_text(json.dumps(out, indent=1))
    print("\nSUMMARY (median of per-pair medians; ratio = False / True)")
    for n, s in summary.items():
        rm, rb = s.get("ratio_median"), s.get("ratio_block")
        f, t = s["false_median_ms"], s["true_median_ms"]
        print(
            f"{n:40s} False {[f'{v:.2f}' for v in f]} True {[f'{v:.2f}' for v in t]} "
            f"ratio_med {rm if rm is None else round(rm, 2)} ratio_block {rb if rb is None else round(rb, 2)}"
        )
    print(f"total {out['total_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
