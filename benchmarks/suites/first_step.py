"""A compiled optimizer step on a GPU: its first step eagerly or not; its learning rate a tensor or not.

    PYTHONPATH=ext:benchmarks python -m benchmarks run gpu-first-step --out OUT [--pairs 2] [--study lr]

What the `recompile` finding's fix "take the first step eagerly" saves, measured: torch.optim
makes SGD's momentum buffers at the first step, so `torch.compile(opt.step)` compiles the step
without them and again with them. Two loops, SGD(momentum=0.9, foreach=True) with the step
compiled and the model compiled: a torchvision ResNet-18 (batch 16 at 64 px) and a GPT-2 (4 x
512, bf16, batch 8 x 256). Arms, in fresh processes with empty Inductor and Triton caches each,
alternating: "compiled_first" (every step through the compiled step) and "eager_first"
(`opt.step()` for the first step, then the compiled step). Each runs 40 steps under
`compilescope.capturing()` and records the compile ids of torch.optim's frames with their
compile time, every compile's time, the wall of the first two steps, the real steps' compiled
median and the findings. Writes OUT/first_step.json.

`--study lr`: what the LR recompile finding's fix, "keep the learning rate in a tensor", saves.
The same two loops with AdamW and a warm-up scheduler (LambdaLR, 10 steps) stepped after each
optimizer step; arms "float_lr" (`lr=3e-4`) and "tensor_lr" (`lr=torch.tensor(3e-4)`), the
first step compiled in both. Writes OUT/lr.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = 40
LOOPS = ("resnet18", "gpt2")
ARMS = ("compiled_first", "eager_first")
LR_ARMS = ("float_lr", "tensor_lr")


def worker(loop: str, arm: str, out: Path) -> None:
    import compilescope
    import torch
    from compilescope.model.findings.places import compile_seconds
    from compilescope.model.findings.torch_optimizer import in_torch_optim
    from models import gpt2 as _gpt2
    from models import resnet18_sgd as _resnet18_sgd

    torch.manual_seed(0)
    if loop == "resnet18":
        model, _, x, y = _resnet18_sgd("cuda", foreach=True)
        compiled = torch.compile(model)

        def loss():
            return torch.nn.functional.cross_entropy(compiled(x), y)

    else:
        model = _gpt2(4, 512, 256, "cuda")
        ids = torch.randint(0, 50257, (8, 256), device="cuda")
        compiled = torch.compile(model)

        def loss():
            return compiled(input_ids=ids, labels=ids).loss

    schedule = None
    if arm in LR_ARMS:
        lr = torch.tensor(3e-4) if arm == "tensor_lr" else 3e-4
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))
    else:
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, foreach=True)
    opt_step = torch.compile(opt.step)
    walls = []
    with compilescope.capturing() as cap:
        for i in range(STEPS):
            start = time.perf_counter()
            loss().backward()
            (opt.step if arm == "eager_first" and i == 0 else opt_step)()
            if schedule is not None:
                schedule.step()
            opt.zero_grad(set_to_none=True)
            if i < 2:
                torch.cuda.synchronize()
                walls.append(time.perf_counter() - start)
    capture = cap.capture
    real = capture.timings.real_steps if capture.timings else None
    optim = [c for c in capture if in_torch_optim(c.frame.place)]
    found = compilescope.findings(capture)
    record = {
        "loop": loop,
        "arm": arm,
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "first_steps_s": walls,
        "optim_compiles": [
            {
                "id": str(c.id),
                "function": c.frame.function,
                "s": compile_seconds(c),
                "recompile": list(c.recompile_reasons[:1]),
            }
            for c in optim
        ],  # fmt: skip
        "optim_compile_s": sum(compile_seconds(c) for c in optim),
        "recompiles": [str(c.id) for c in capture if c.recompile_reasons],
        "eager_frames": [str(c.id) for c in capture if c.failure or "eager" in c.status],
        "compile_total_s": sum(compile_seconds(c) for c in capture),
        "compiled_s": real.compiled.median_s if real else None,
        "findings": [
            {
                "kind": f.kind,
                "what": f.what,
                "compile_s": f.cost.compile_s,
                "fixes": [fx.title for fx in f.fixes],
            }
            for f in found[:6]
        ],  # fmt: skip
    }
    out.write_text(json.dumps(record, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--deadline", type=float, default=520.0)
    parser.add_argument("--worker", nargs=3, metavar=("LOOP", "ARM", "FILE"))
    parser.add_argument("--study", choices=("first_step", "lr"), default="first_step")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], Path(args.worker[2]))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp())
    arms = LR_ARMS if args.study == "lr" else ARMS
    name = "lr.json" if args.study == "lr" else "first_step.json"
    start, runs, errors = time.time(), [], []
    for pair in range(args.pairs):
        for loop in LOOPS:
            for arm in arms if pair % 2 == 0 else arms[::-1]:
                if time.time() - start > args.deadline:
                    break
                file = scratch / f"{loop}_{arm}_{pair}.json"
                env = dict(os.environ)
                env["TORCHINDUCTOR_CACHE_DIR"] = str(scratch / f"{file.stem}_inductor")
                env["TRITON_CACHE_DIR"] = str(scratch / f"{file.stem}_triton")
                command = [
                    sys.executable,
                    __file__,
                    str(args.out),
                    "--worker",
                    loop,
                    arm,
                    str(file),
                ]
                done = subprocess.run(command, capture_output=True, text=True, env=env)
                if done.returncode != 0 or not file.exists():
                    errors.append(f"== {loop} {arm} {pair}\n{done.stderr[-6000:]}")
                    (args.out / "errors.txt").write_text("\n".join(errors))
                    continue
                runs.append(json.loads(file.read_text()))
                (args.out / name).write_text(json.dumps({"runs": runs}, indent=1))
                r = runs[-1]
                print(loop, arm, pair, f"optim {r['optim_compile_s']:.1f} s", flush=True)
    for loop in LOOPS:
        for arm in arms:
            got = [r for r in runs if r["loop"] == loop and r["arm"] == arm]
            if got:
                optim = statistics.median(r["optim_compile_s"] for r in got)
                count = [len(r["optim_compiles"]) for r in got]
                print(f"{loop} {arm}: optim compile {optim:.1f} s, compiles {count}")


SUITE = {
    "name": "gpu-first-step",
    "device": "GPU",
    "measures": "a compiled optimizer step: what taking its first step eagerly saves, and what "
    "a learning rate in a tensor saves, in compile time and step time",
}
# Triton and the date are the runs' reports' (RESULTS.md of 87f12c2); Python's was not given.
_H200 = {"triton": "3.6", "date": "2026-11-26"}
RECORDED = [
    ("raw/gpu_first_step_h200.json", _H200, "--pairs 2"),
    ("raw/gpu_lr_tensor_h200.json", _H200, "--pairs 2 --study lr"),
]


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    runs = [r for r in json.loads(path.read_text())["runs"] if "error" not in r]
    first = runs[0] if runs else {}
    given = {"machine": first.get("device"), "torch": first.get("torch"), **prov}
    given = {k: prov.get(k) or given.get(k) for k in rows.PROVENANCE}
    cmd = rows.command(SUITE["name"], args.split())
    out = []
    for case in dict.fromkeys((r["loop"], r["arm"]) for r in runs):
        mine = [r for r in runs if (r["loop"], r["arm"]) == case]
        for metric, values, unit in (
            ("torch.optim frames' compile time", [r["optim_compile_s"] for r in mine], "s"),
            ("every compile", [r["compile_total_s"] for r in mine], "s"),
            ("first step", [r["first_steps_s"][0] for r in mine], "s"),
            ("compiled step", [r["compiled_s"] and 1e3 * r["compiled_s"] for r in mine], "ms"),
        ):
            values = rows.spread(values)
            if values["n"]:
                out.append(rows.row(SUITE["name"], f"{case[0]}: {case[1]}", metric,
                                    values.pop("median"), unit=unit, prov=given, cmd=cmd,
                                    **values))  # fmt: skip
    return out


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    rows.run_script(Path(__file__), [str(out), *args])
    return [r for p in sorted(out.glob("*.json")) if p.name != "errors.txt"
            for r in convert(p, rows.here(gpu=True), " ".join(args))]  # fmt: skip


if __name__ == "__main__":
    main()
