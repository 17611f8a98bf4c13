"""A 2-rank DDP job under compilescope: is a compiled step slower than eager said first, and does the budget show the communication (issue 42).

    PYTHONPATH=ext:benchmarks python -m benchmarks run gpu-ddp-verdict --out OUT [--device cuda] [--steps 40]

Two loops, each in a fresh 2-process job (NCCL on GPUs, gloo on a CPU):
- `mlp8`: 8 residual MLP blocks in DDP, the model compiled (`torch.compile(DDP(model))`), the
  loop of issue 42 (compiled 12.2-14.4 ms against eager DDP 9.0 ms on an H100 pair);
- `no_sync`: the blind set's gradient accumulation without `no_sync` (benchmarks/data/blind_set/
  ddp_grad_accum_no_sync.py), as written.
Each rank runs the loop under `compilescope.capturing()`; rank 0 writes the step budget, the
top findings and the stopwatch of 20 more steps to OUT/ddp_<loop>.json. Then the same loops
run without compilescope, eager and compiled (mlp8) or as written and with `no_sync`
(no_sync), 30 timed steps after 10, for the verdict's truth.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

SET = Path(__file__).resolve().parents[1] / "data" / "blind_set"


def _mlp8(device, compiled: bool, rank: int):
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    width, batch = (1024, 64) if device.type == "cuda" else (32, 4)

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(width)
            self.up = torch.nn.Linear(width, 4 * width)
            self.down = torch.nn.Linear(4 * width, width)

        def forward(self, x):
            return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))

    model = torch.nn.Sequential(*[Block() for _ in range(8)]).to(device)
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    run = torch.compile(ddp) if compiled else ddp
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    x = torch.randn(batch, width, device=device)

    def step():
        loss = run(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def _no_sync(device, remedy: bool, rank: int):
    sys.path.insert(0, str(SET))
    import ddp_grad_accum_no_sync as loop

    step, _sync = loop.build(str(device), remedy, rank, 2)
    return step


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _walls(step, device, steps: int) -> list[float]:
    out = []
    for _ in range(steps):
        _sync(device)
        t = time.perf_counter()
        step()
        _sync(device)
        out.append(time.perf_counter() - t)
    return out


def rank_main(rank: int, loop: str, mode: str, out: str, steps: int, device_kind: str) -> None:
    import torch
    import torch.distributed as dist

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    cuda = device_kind == "cuda"
    dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=2)
    device = torch.device(f"cuda:{rank}") if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    try:
        if mode == "capture":
            import compilescope
            from compilescope.model.measured.step_budget import step_budget

            step = _mlp8(device, True, rank) if loop == "mlp8" else _no_sync(device, False, rank)
            with compilescope.capturing() as cap:
                for _ in range(steps):
                    step()
            walls = _walls(step, device, 20)
            real = cap.capture.timings.real_steps if cap.capture.timings else None
            found = compilescope.findings(cap.capture)
            record = {
                "loop": loop,
                "rank": rank,
                "torch": torch.__version__,
                "device": torch.cuda.get_device_name(device) if cuda else "cpu",
                "compiled_s": real.compiled.median_s if real else None,
                "eager_s": real.eager.median_s if real and real.eager else None,
                "stopwatch_s": statistics.median(walls),
                "note": real.note if real else cap.capture.timings.real_steps_note,
                "budget": [
                    {"kind": p.kind, "name": p.name, "s": p.seconds, "share": p.share}
                    for p in (step_budget(real) if real else ())
                ],
                "findings": [
                    {
                        "kind": f.kind,
                        "what": f.what,
                        "share": f.cost.share,
                        "fixes": [x.title + ": " + (x.python() or x.change) for x in f.fixes],
                    }
                    for f in found[:5]
                ],  # fmt: skip
            }
        else:  # plain: eager / compiled (mlp8), base / fix (no_sync)
            if loop == "mlp8":
                step = _mlp8(device, mode == "compiled", rank)
            else:
                step = _no_sync(device, mode == "fix", rank)
            for _ in range(10):
                step()
            walls = _walls(step, device, 30)
            record = {"loop": loop, "mode": mode, "rank": rank, "median_s": statistics.median(walls),
                      "min_s": min(walls), "max_s": max(walls)}  # fmt: skip
        if rank == 0:
            Path(out).write_text(json.dumps(record, indent=1))
        dist.barrier()
    finally:
        dist.destroy_process_group()


def main() -> None:
    import torch.multiprocessing as mp

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--loops", default="mlp8,no_sync")
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict[str, object] = {}
    port = 29533
    for loop in args.loops.split(","):
        modes = ["capture"]
        plain = ("eager", "compiled") if loop == "mlp8" else ("base", "fix")
        for pair in range(args.pairs):
            modes += list(plain if pair % 2 == 0 else reversed(plain))
        for i, mode in enumerate(modes):
            file = args.out / f"ddp_{loop}_{mode}_{i}.json"
            port += 1
            os.environ["MASTER_PORT"] = str(port)
            started = time.time()
            try:
                mp.spawn(rank_main, args=(loop, mode, str(file), args.steps, args.device),
                         nprocs=2, join=True)  # fmt: skip
            except Exception as error:  # one failed job: the others still run
                results[f"{loop}/{mode}/{i}"] = {
                    "error": f"{type(error).__name__}: {error}"[-3000:]
                }
                continue
            results[f"{loop}/{mode}/{i}"] = json.loads(file.read_text())
            file.unlink()
            print(loop, mode, f"{time.time() - started:.0f}s", flush=True)
            (args.out / "ddp_verdict.json").write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1)[-6000:])


SUITE = {
    "name": "gpu-ddp-verdict",
    "device": "2 GPUs",
    "measures": "a 2-rank DDP job under compilescope: is 'compiled slower than eager' said "
    "first, does the budget show the all-reduce; the remedy's speedup without compilescope",
}
# The date is the runs' report's (RESULTS.md of 87f12c2, "Blind set"); it gives no Triton or
# Python for the 2-GPU machines.
_RUN = {"date": "2026-11-27"}
RECORDED = [
    # Today's code (a GPU's profiled window of 3 steps), with the plain processes' truth.
    (
        "raw/step_budget_2/ddp_verdict_h200x2_split3.json",
        {"date": "2026-11-27", "triton": "3.6", "python": "3.12"},
        "--pairs 2 --loops mlp8",
    ),  # fmt: skip
    ("raw/blind_set/final_ddp_h200x2.json", _RUN, "--pairs 0 --loops no_sync,mlp8"),
    ("raw/blind_set/ddp_verdict_h100x2.json", _RUN, "--pairs 2"),
    ("raw/blind_set/ddp_no_sync_h100x2.json", _RUN, "--pairs 1 --loops no_sync"),
]


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    record = json.loads(path.read_text())
    first = next((r for r in record.values() if "device" in r), {})
    given = {"machine": f"2 x {first.get('device')}", "torch": first.get("torch"), **prov}
    given = {k: prov.get(k) or given.get(k) for k in rows.PROVENANCE}
    cmd = rows.command(SUITE["name"], args.split())
    out = []

    def add(loop, metric, value, unit, **more):
        if value is not None:
            out.append(rows.row(SUITE["name"], loop, metric, value, unit=unit, prov=given,
                                cmd=cmd, **more))  # fmt: skip

    plain: dict[tuple[str, str], list[float]] = {}
    for key, r in record.items():
        loop, mode, _ = key.split("/")
        if "error" in r:
            continue
        if mode == "capture":
            add(loop, "compilescope's compiled step", 1e3 * r["compiled_s"], "ms")
            add(loop, "compilescope's eager step", r["eager_s"] and 1e3 * r["eager_s"], "ms")
            kinds = ", ".join(f["kind"] for f in r.get("findings", [])[:3])
            add(loop, "top 3 findings", kinds, "text")
        else:
            plain.setdefault((loop, mode), []).append(1e3 * r["median_s"])
    for (loop, mode), medians in plain.items():
        values = rows.spread(medians)
        add(loop, f"{mode} step, plain processes", values.pop("median"), "ms", **values)
    return out


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    rows.run_script(Path(__file__), [str(out), *args])
    return convert(out / "ddp_verdict.json", rows.here(gpu=True), " ".join(args))


if __name__ == "__main__":
    main()
