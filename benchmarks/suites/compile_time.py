"""Compile time on a transformers LM and a torchvision CNN: cold, warm, regional, under compilescope or not, and the pay-back (issue 43).

    PYTHONPATH=ext:benchmarks python -m benchmarks run gpu-compile-time --out OUT --model lm|cnn
        [--rounds 2] [--tiny]

Each arm is a fresh process with its own Inductor cache folder (TORCHINDUCTOR_CACHE_DIR and
TRITON_CACHE_DIR), timing one training step at a time with the device synchronized:
- `whole_cold`: `torch.compile(model)` with an empty cache; then `whole_warm` reruns it on the
  cache it left (no compilescope), `capture_warm` the same under `compilescope.capturing()`
  (caches left on, its default);
- `regional_cold`: each repeated block compiled on its own (`block.compile()`), empty cache;
- `capture_cold`: `capturing(fresh=True)` on an empty cache: its compile-time finding (does it
  name regional compilation or the cache?), its compile budget and pay-back sentence;
- `capture_user_cold`: `capturing()` (the user's caches, on) on an empty cache: a user's first
  run, whose pay-back is checked against `whole_cold`'s stopwatch.
Every arm times 5 eager steps first (the same process, before compiling), then the first
compiled step (the compile) and `--steps` more. The stopwatch's pay-back is
(first compiled step - eager step) / (eager step - compiled step). Rounds interleave the arms.
Writes OUT/compile_time_<model>.json after every process.
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

ARMS = (
    "whole_cold",
    "whole_warm",
    "capture_warm",
    "regional_cold",
    "capture_cold",
    "capture_user_cold",
)


# --lm-shape LAYERS,WIDTH,SEQ,BATCH overrides the LM's (a CPU run: 6,768,128,2).
LM_SHAPE = os.environ.get("LM_SHAPE", "")


def build(model: str, tiny: bool, device: str):
    """The model, its repeated blocks, a batch and its loss."""
    import torch

    torch.manual_seed(0)
    if model == "lm":
        from transformers import GPT2Config, GPT2LMHeadModel

        layers, width, seq, batch = (3, 64, 32, 2) if tiny else (12, 768, 512, 8)
        if LM_SHAPE:
            layers, width, seq, batch = map(int, LM_SHAPE.split(","))
        config = GPT2Config(n_layer=layers, n_embd=width, n_head=max(width // 64, 1),
                            n_positions=seq, vocab_size=50257 if not tiny else 512)  # fmt: skip
        config._attn_implementation = "sdpa"
        net = GPT2LMHeadModel(config).to(device)
        ids = torch.randint(0, config.vocab_size, (batch, seq), device=device)
        blocks = list(net.transformer.h)

        def loss():
            return net(input_ids=ids, labels=ids).loss

    else:
        import torchvision

        net = (torchvision.models.resnet18 if tiny else torchvision.models.resnet50)().to(device)
        size, batch = (64, 2) if tiny else (224, 64)
        x = torch.randn(batch, 3, size, size, device=device)
        y = torch.randint(0, 1000, (batch,), device=device)
        blocks = [b for stage in (net.layer1, net.layer2, net.layer3, net.layer4) for b in stage]

        def loss():
            return torch.nn.functional.cross_entropy(net(x), y)

    return net, blocks, loss


def arm(name: str, model: str, tiny: bool, steps: int) -> dict:
    """One arm in this process (called in a fresh one)."""
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    net, blocks, loss = build(model, tiny, device)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4, fused=device == "cuda")

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    def step():
        loss().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def timed(n):
        out = []
        for _ in range(n):
            sync()
            t = time.perf_counter()
            step()
            sync()
            out.append(time.perf_counter() - t)
        return out

    eager = timed(6)[1:]  # the first eager step warms cuBLAS and the allocator
    out: dict = {"arm": name, "eager_s": statistics.median(eager)}
    if name.startswith("regional"):
        for b in blocks:
            b.compile()
        run = net
    else:
        run = torch.compile(net)
    compiled_loss = _rebound(loss, net, run)

    def compiled_step():
        compiled_loss().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def timed_compiled(n):
        res = []
        for _ in range(n):
            sync()
            t = time.perf_counter()
            compiled_step()
            sync()
            res.append(time.perf_counter() - t)
        return res

    if name.startswith("capture"):
        import compilescope

        with compilescope.capturing(fresh=name == "capture_cold") as cap:
            walls = timed_compiled(1 + steps)
        c = cap.capture
        found = compilescope.findings(c)
        kinds = [f.kind for f in found]
        ct = next((f for f in found if f.kind == "compile_time"), None)
        table = compilescope.tables.compile_budget(c)
        out.update(
            capture_note=c.note,
            caches=c.caches,
            findings=[f"{f.kind}: {f.what[:300]}" for f in found[:6]],
            compile_time_rank=kinds.index("compile_time") + 1 if ct else None,
            compile_time_fixes=[x.title for x in ct.fixes] if ct else [],
            budget=[r for r in table if r["compile_id"] is None],
            summary_line=next((x for x in str(c).splitlines() if x.startswith("compile time")), ""),
        )
    else:
        walls = timed_compiled(1 + steps)
    out.update(first_step_s=walls[0], compiled_s=statistics.median(walls[1:]))
    saved = out["eager_s"] - out["compiled_s"]
    extra = out["first_step_s"] - out["eager_s"]
    out["stopwatch_payback_steps"] = extra / saved if saved > 0 else None
    return out


def _rebound(loss, net, run):
    """The loss closure with `net` replaced by the compiled module (its free variable)."""
    import types

    cells = tuple(
        types.CellType(run) if c.cell_contents is net else c for c in (loss.__closure__ or ())
    )
    return types.FunctionType(loss.__code__, loss.__globals__, loss.__name__, None, cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--model", choices=("lm", "cnn"), required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--tiny", action="store_true", help="small shapes, to try the script")
    parser.add_argument("--lm-shape", help="LAYERS,WIDTH,SEQ,BATCH of the LM (e.g. 6,768,128,2)")
    parser.add_argument("--arms", default=",".join(ARMS), help="which arms, in order")
    parser.add_argument("--arm", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.lm_shape:
        os.environ["LM_SHAPE"] = args.lm_shape  # the arms' processes read it
        global LM_SHAPE
        LM_SHAPE = args.lm_shape
    if args.arm:
        print("RESULT " + json.dumps(arm(args.arm, args.model, args.tiny, args.steps)))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: list[dict] = []
    import torch

    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name() if
            torch.cuda.is_available() else "cpu", "date": time.strftime("%Y-%m-%d")}  # fmt: skip
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory() as warm_dir:
            for name in args.arms.split(","):
                # whole_warm and capture_warm reuse whole_cold's cache; the others start empty.
                cache = warm_dir if name in ("whole_cold", "whole_warm", "capture_warm") else None
                with tempfile.TemporaryDirectory() as own:
                    folder = cache or own
                    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": folder,
                           "TRITON_CACHE_DIR": os.path.join(folder, "triton")}  # fmt: skip
                    cmd = [sys.executable, __file__, args.out, "--model", args.model,
                           "--arm", name, "--steps", str(args.steps)] + (["--tiny"] if args.tiny else [])  # fmt: skip
                    started = time.perf_counter()
                    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
                    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
                    row = (
                        json.loads(line[-1][7:])
                        if line
                        else {"arm": name, "error": proc.stderr[-3000:]}
                    )
                    row.update(round=r, process_s=time.perf_counter() - started)
                    results.append(row)
                    print(
                        json.dumps(
                            {
                                k: row.get(k)
                                for k in (
                                    "arm",
                                    "round",
                                    "first_step_s",
                                    "compiled_s",
                                    "eager_s",
                                    "compile_time_fixes",
                                    "error",
                                )
                            }
                        )[:600],
                        flush=True,
                    )
                    (out / f"compile_time_{args.model}.json").write_text(
                        json.dumps({"meta": meta, "rows": results}, indent=1)
                    )


SUITE = {
    "name": "gpu-compile-time",
    "device": "GPU (or CPU)",
    "measures": "a training step's first step (its compile): cold, warm, regional, under "
    "compilescope or not; the compiled step; when compiling pays back",
}
# Triton and Python are the run's report's (RESULTS.md of 87f12c2, "Compile time"); the CPU
# run's Python was not given.
_H100 = {"triton": "3.6", "python": "3.12"}
RECORDED = [
    ("raw/compile_time/lm_h100.json", _H100, "--model lm --rounds 2 --steps 30"),
    ("raw/compile_time/cnn_h100.json", _H100, "--model cnn --rounds 2 --steps 30"),
    ("raw/compile_time/cnn_h100_user_cold.json", _H100,
     "--model cnn --arms whole_cold,whole_warm,capture_warm,capture_user_cold --rounds 2"),
    ("raw/compile_time/lm6_cpu.json", {"machine": "x86_64, 2 cores"},
     "--model lm --lm-shape 6,768,128,2 --steps 2 --rounds 3 --arms whole_cold,whole_warm,capture_warm"),
]  # fmt: skip


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    record = json.loads(path.read_text())
    meta = record["meta"]
    given = {"machine": meta.get("device"), "torch": meta.get("torch"), "date": meta.get("date"), **prov}  # fmt: skip
    given = {k: prov.get(k) or given.get(k) for k in rows.PROVENANCE}
    model = args.split("--model ")[1].split()[0] if "--model " in args else "model"
    cmd = rows.command(SUITE["name"], args.split())
    out = []
    results = [r for r in record["rows"] if "error" not in r]
    for arm in dict.fromkeys(r["arm"] for r in results):
        mine = [r for r in results if r["arm"] == arm]
        # A capture's process times its steps with its own windows open: its compiled step
        # and pay-back are the finding's business, not the stopwatch's.
        plain = [] if arm.startswith("capture") else mine
        for metric, values, unit in (
            ("first step", [r.get("first_step_s") for r in mine], "s"),
            ("compiled step", [r.get("compiled_s") and 1e3 * r["compiled_s"] for r in plain], "ms"),
            ("pays back after, stopwatch", [r.get("stopwatch_payback_steps") for r in plain], "steps"),
        ):  # fmt: skip
            values = rows.spread(values)
            if values["n"]:
                out.append(rows.row(SUITE["name"], f"{model}: {arm}", metric,
                                    values.pop("median"), unit=unit, prov=given, cmd=cmd,
                                    **values))  # fmt: skip
    return out


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    rows.run_script(Path(__file__), [str(out), *args])
    return [r for p in sorted(out.glob("compile_time_*.json"))
            for r in convert(p, {}, " ".join(args))]  # fmt: skip


if __name__ == "__main__":
    main()
