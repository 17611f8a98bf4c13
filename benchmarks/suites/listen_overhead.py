"""Real-step timings on a GPU against stopwatches, autotune records, and the cost of listening (issue 24).

    PYTHONPATH=ext:benchmarks python -m benchmarks run gpu-listen-overhead --out OUT [--accuracy] [--overhead]
        [--models gpt2,llama,convnext] [--pairs 10] [--deadline SECONDS] [--size full] [--overhead-size small]

--accuracy: for each model (a `transformers` GPT-2, a Llama-style LM from `transformers` with
GQA, RMSNorm, rotary and a SiLU MLP, torchvision's ConvNeXt-T, and `resnet`, a ResNet-style CNN
with batch norm that needs no torchvision, for the CPU), one training loop under
`compilescope.capturing()` (AdamW, bf16 weights): compilescope's real-step figures (compiled and
eager wall per step, the split) against CUDA-event stopwatches around the same `step()` run
right after the capture (compiled, then with torch.compile's stance set to force_eager), and
the autotune records the capture kept. Writes OUT/accuracy.json.
--overhead: compile + first step in a fresh process with fresh Inductor and Triton caches,
bare `torch.compile` against `capturing(real_steps=0)` (listening only), alternating, as many
pairs per model as the deadline allows (models in rotation). Writes OUT/overhead.json after
every run, so a run cut short still returns what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cuda_median(fn, steps: int) -> tuple[float, list[float]]:
    """Median wall time of `fn` by CUDA events around each call (a user's stopwatch)."""
    import torch

    times = []
    for _ in range(steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    return statistics.median(times), times


def accuracy(name: str, size: str) -> dict:
    import compilescope
    import torch
    from models import build

    torch.manual_seed(0)
    model, inputs, loss_fn = build(name, size)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    compiled = torch.compile(model)

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(compiled, *inputs).backward()
        opt.step()

    # The user's own stopwatch: CUDA events around each step of the same loop (recorded, not
    # synchronized per step, as a training loop runs), read at the end.
    marks: list = []
    started = time.perf_counter()
    with compilescope.capturing() as cap:
        for _ in range(45):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            step()
            b.record()
            marks.append((a, b))
        torch.cuda.synchronize()
    capture_s = time.perf_counter() - started
    user = [a.elapsed_time(b) / 1e3 for a, b in marks]
    capture = cap.capture
    real = capture.timings.real_steps if capture.timings else None
    out: dict = {
        "model": name,
        "capture_s": capture_s,
        "compile_ids": len(capture),
        "user_steps": user,
    }
    if real is not None:
        first, eager_first = real.first_step, real.eager_first_step
        compiled_ref = statistics.median(user[first : first + real.compiled.repeats])
        eager_ref = (
            statistics.median(user[eager_first : eager_first + real.eager.repeats])
            if real.eager is not None and eager_first is not None
            else None
        )
        out["stopwatch"] = {
            "compiled_s": compiled_ref,
            "eager_s": eager_ref,
            "steps": [first, eager_first],
        }
        out["real_steps"] = {
            "compiled_s": real.compiled.median_s,
            "compiled_spread": [real.compiled.min_s, real.compiled.max_s],
            "eager_s": real.eager.median_s if real.eager else None,
            "split_wall_s": real.split_wall.median_s if real.split_wall else None,
            "busy_s": real.busy_s,
            "graphs": [[g.compile_id, g.role, g.seconds, g.kernels] for g in real.graphs],
            "outside_graphs_s": real.outside_graphs_s,
            "between_s": real.between_s,
            "kernels": len(real.kernels),
            "note": real.note,
        }
        out["agreement"] = {
            "compiled": real.compiled.median_s / compiled_ref,
            "eager": real.eager.median_s / eager_ref if real.eager and eager_ref else None,
        }
        # Step by step, the same steps: ours against the user's events. The last step of the
        # compiled window ends where the timer starts the profiler (inside optimizer.step(),
        # before the user's own end event): that one step of the user's log carries our cost.
        pairs = list(zip(real.step_walls, user[first : first + len(real.step_walls)], strict=False))
        epairs = list(zip(real.eager_walls, user[eager_first : eager_first + len(real.eager_walls)], strict=False)) if eager_first is not None else []  # fmt: skip
        out["per_step"] = {
            "compiled": [[a, b] for a, b in pairs],
            "eager": [[a, b] for a, b in epairs],
            "compiled_median_ratio_unperturbed": statistics.median(a / b for a, b in pairs[:-1]) if len(pairs) > 1 else None,
            "eager_median_ratio": statistics.median(a / b for a, b in epairs) if epairs else None,
            "compiled_medians_unperturbed": [statistics.median(a for a, _ in pairs[:-1]), statistics.median(b for _, b in pairs[:-1])] if len(pairs) > 1 else None,
        }  # fmt: skip
    tuned = [
        {"compile_id": str(c.id), "kernel": k.name,
         "choices": [[a.config, a.ms, a.registers, a.spills, a.chosen] for a in k.autotune]}
        for c in capture for k in c.kernels if k.autotune
    ]  # fmt: skip
    out["autotuned_kernels"] = len(tuned)
    out["triton_kernels"] = sum(1 for c in capture for k in c.kernels if k.language == "triton")
    out["autotune"] = tuned[:40]
    out["summary"] = capture.summary()
    return out


CHILD = """
import os, sys, time
sys.path.insert(0, {ext!r}); sys.path.insert(0, {bench!r})
import torch
from models import build
torch.manual_seed(0)
model, inputs, loss_fn = build({name!r}, {size!r}, {device!r})
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
sync = torch.cuda.synchronize if {device!r} == "cuda" else (lambda: None)
sync()
started = time.perf_counter()
def run():
    compiled = torch.compile(model)
    opt.zero_grad(set_to_none=True)
    loss_fn(compiled, *inputs).backward()
    opt.step()
    sync()
if {arm!r}.startswith("listen"):
    import compilescope
    from compilescope.live import torch_bridge
    drop = {{"listen-noprov": ("trace.provenance_tracking_level",),
             "listen-lazybwd": ("force_non_lazy_backward_lowering",),
             "listen-caches": ("fx_graph_cache", "enable_autograd_cache")}}.get({arm!r}, ())
    torch_bridge._CAPTURE_SETTINGS = tuple(s for s in torch_bridge._CAPTURE_SETTINGS if s[1] not in drop)
    if {arm!r} == "listen-nofresh":
        import contextlib
        torch_bridge._fresh_cache = contextlib.nullcontext
    if {arm!r} == "listen-noir":
        from compilescope.live import session
        session.with_triton_ir = lambda cap, since: cap
        session.with_autotune_choices = lambda cap: cap
    with compilescope.capturing(real_steps=0):
        run()
else:
    run()
print("WALL", time.perf_counter() - started)
"""


def _child(name: str, arm: str, size: str, cache: str, threads: int | None, device: str = "cuda"):
    """A fresh process that compiles and runs one first step (fresh caches under `cache`)."""
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": f"{cache}/inductor", "TRITON_CACHE_DIR": f"{cache}/triton"}  # fmt: skip
    if threads:
        env["TORCHINDUCTOR_COMPILE_THREADS"] = str(threads)
    code = CHILD.format(ext=str(ROOT / "ext"), bench=str(ROOT / "benchmarks"), name=name, size=size, arm=arm, device=device)  # fmt: skip
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def _wall(process) -> float:
    out, err = process.communicate(timeout=600)
    for line in out.splitlines():
        if line.startswith("WALL "):
            return float(line.split()[1])
    raise RuntimeError(err[-2000:])


def one_run(name: str, arm: str, size: str) -> float:
    with tempfile.TemporaryDirectory() as cache:
        return _wall(_child(name, arm, size, cache, None))


def bootstrap(ratios: list[float], n: int = 2000) -> tuple[float, float]:
    rng = random.Random(0)
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n)]


def overhead(
    models: list[str], pairs: int, deadline: float, size: str, out: Path, side: int = 1,
    device: str = "cuda",
) -> dict:  # fmt: skip
    """`pairs` pairs per model, `side` pairs at once: each pair's bare and listening processes
    start together (which one first alternates), so both see the same machine and the same
    neighbours; the compile workers are shared out evenly (TORCHINDUCTOR_COMPILE_THREADS)."""
    results: dict = {m: {"bare": [], "listen": [], "ratios": []} for m in models}
    results["protocol"] = {"side_by_side_pairs": side, "size": size, "device": device,
                           "compile_threads": max((os.cpu_count() or 2) // (2 * side), 1)}  # fmt: skip
    threads = results["protocol"]["compile_threads"] if side > 1 else None
    for name in models:
        done = 0
        while done < pairs:
            if time.monotonic() > deadline:
                return results
            group = min(side, pairs - done)
            with tempfile.TemporaryDirectory() as cache:
                running = []
                for j in range(group):
                    arms = ["bare", "listen"] if (done + j) % 2 == 0 else ["listen", "bare"]
                    running.append({arm: _child(name, arm, size, f"{cache}/{j}{arm}", threads, device) for arm in arms})  # fmt: skip
                try:
                    walls = [{arm: _wall(p) for arm, p in procs.items()} for procs in running]
                except Exception as error:  # keep what was measured; say what failed
                    results.setdefault("errors", []).append(f"{name}: {error}"[-3000:])
                    (out / "overhead.json").write_text(json.dumps(results, indent=1))
                    break
            r = results[name]
            for w in walls:
                r["bare"].append(w["bare"])
                r["listen"].append(w["listen"])
                r["ratios"].append(w["listen"] / w["bare"])
            done += group
            r["median_ratio"] = statistics.median(r["ratios"])
            if len(r["ratios"]) >= 3:
                r["interval95"] = bootstrap(r["ratios"])
            (out / "overhead.json").write_text(json.dumps(results, indent=1))
            print(name, done, walls, flush=True)
    return results


def diagnose(name: str, arms: list[str], size: str, out: Path) -> dict:
    """One run per arm, in order: which capture setting costs what (one model)."""
    results: dict = {}
    for arm in arms:
        results.setdefault(arm, []).append(one_run(name, arm, size))
        (out / "diagnose.json").write_text(json.dumps(results, indent=1))
        print("diagnose", name, arm, results[arm][-1], flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--accuracy", action="store_true")
    parser.add_argument("--overhead", action="store_true")
    parser.add_argument("--models", default="gpt2,llama,convnext")
    parser.add_argument("--overhead-models", default="gpt2,llama,convnext")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--side", type=int, default=1, help="overhead pairs run at once")
    parser.add_argument("--device", default="cuda", help="overhead runs on cuda or cpu")
    parser.add_argument("--deadline", type=float, default=540.0)
    parser.add_argument("--diagnose", default="", help="MODEL:arm,arm,...: one run per arm")
    parser.add_argument("--size", default="full", help="accuracy models: tiny, small or full")
    parser.add_argument(
        "--overhead-size", default="small", help="overhead models: tiny, small, full"
    )
    args = parser.parse_args()
    deadline = time.monotonic() + args.deadline
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import torch

    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu", "date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count()}  # fmt: skip
    (out / "meta.json").write_text(json.dumps(meta))
    if args.accuracy:
        results = []
        for name in args.models.split(","):
            try:
                results.append(accuracy(name, args.size))
            except Exception as error:  # one model's failure must not lose the others
                results.append({"model": name, "error": f"{type(error).__name__}: {error}"})
            (out / "accuracy.json").write_text(
                json.dumps({"meta": meta, "results": results}, indent=1, default=str)
            )
            print(json.dumps({k: v for k, v in results[-1].items() if k not in ("autotune", "summary")}, default=str), flush=True)  # fmt: skip
    if args.diagnose:
        name, _, arms = args.diagnose.partition(":")
        diagnose(name, arms.split(","), args.overhead_size, out)
    if args.overhead:
        overhead(
            args.overhead_models.split(","),
            args.pairs,
            deadline,
            args.overhead_size,
            out,
            args.side,
            args.device,
        )
    return 0


SUITE = {
    "name": "gpu-listen-overhead",
    "device": "GPU (or CPU)",
    "measures": "what listening costs a compile and first training step: bare `torch.compile` "
    "against the same under `capturing(real_steps=0)`, pairs of fresh processes",
}
# Each GPU record's machine, torch and date are in its meta file; Triton is the runs' report's
# (RESULTS.md of 87f12c2, "What listening costs on a GPU"); the CPU runs' from the same report.
_CPU = {"machine": "x86_64, 2 cores", "torch": "2.13.0+cpu", "python": "3.11.7"}
RECORDED = [
    ("raw/gpu_listen_overhead_h100_run4.json", {"triton": "3.6.0"},
     "--overhead --overhead-models gpt2,llama --overhead-size full --pairs 10 --side 2"),
    ("raw/gpu_listen_overhead_h100_run5.json", {"triton": "3.6.0"},
     "--overhead --overhead-models gpt2 --overhead-size full --pairs 20 --side 2 --deadline 390"),
    ("raw/gpu_listen_overhead_h100_run6.json", {"triton": "3.6.0"},
     "--overhead --overhead-models convnext --overhead-size full --pairs 12 --side 2 --deadline 500"),
    ("raw/cpu_listen_overhead.json", {**_CPU, "date": "2026-11-23"},
     "--overhead --overhead-models llama --overhead-size tiny --pairs 10 --side 1 --device cpu"),
    ("raw/cpu_listen_overhead_gpt2_resnet.json", {**_CPU, "date": "2026-11-24"},
     "--overhead --overhead-models resnet,gpt2 --overhead-size tiny --pairs 10 --side 1 --device cpu"),
]  # fmt: skip


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    """Rows of an overhead.json, its meta from the record, its _meta.json or meta.json beside."""
    import rows

    record = json.loads(path.read_text())
    beside = [path.with_name(path.stem + "_meta.json"), path.with_name("meta.json")]
    meta = record.get("meta") or next((json.loads(p.read_text()) for p in beside if p.exists()), {})  # fmt: skip
    given = {"machine": meta.get("device"), "torch": meta.get("torch"), "date": meta.get("date"), **prov}  # fmt: skip
    given = {k: prov.get(k) or given.get(k) for k in rows.PROVENANCE}
    cmd = rows.command(SUITE["name"], args.split())
    size = record.get("protocol", {}).get("size", "")
    out = []
    for model, r in record.items():
        if not isinstance(r, dict) or not r.get("ratios"):
            continue
        case = f"{model} ({size})" if size else model
        for metric, values, unit in (
            ("listening / bare", r["ratios"], "ratio"),
            ("bare", r["bare"], "s"),
            ("listening", r["listen"], "s"),
        ):
            values = rows.spread(values)
            out.append(rows.row(SUITE["name"], case, metric, values.pop("median"), unit=unit,
                                prov=given, cmd=cmd, **values))  # fmt: skip
        if r.get("interval95"):  # of the ratio's median, bootstrap
            low, high = r["interval95"]
            out.append(rows.row(SUITE["name"], case, "95% interval of the ratio's median",
                                f"{low:.3f}-{high:.3f}", unit="text", prov=given, cmd=cmd))  # fmt: skip
    return out


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    if not {"--overhead", "--accuracy", "--diagnose"} & set(args):
        args = ["--overhead", *args]  # the suite's figure; --accuracy is the older check
    rows.run_script(Path(__file__), [str(out), *args])
    found = out / "overhead.json"
    return convert(found, {}, " ".join(args)) if found.exists() else []


if __name__ == "__main__":
    sys.exit(main())
