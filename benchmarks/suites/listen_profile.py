"""Where listening's cost goes on a GPU: one bare and one listening compile per model, profiled.

    PYTHONPATH=ext:benchmarks python benchmarks/suites/listen_profile.py OUT [--models gpt2,llama,convnext]
        [--size small] [--deadline SECONDS] [--plain tiny]

Each run is a fresh process with fresh Inductor and Triton caches (as gpu_real_steps.py
--overhead): compile + first training step, bare `torch.compile` or inside
`capturing(real_steps=0)`, under cProfile. Writes OUT/<model>_<arm>.prof, and OUT/profile.json
with the wall times and torch's own phase times (`compilation_time_metrics`). `--plain SIZE`
adds one unprofiled bare run per model at that size, to plan how many pairs fit a call.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import cProfile, json, sys, time
sys.path.insert(0, {ext!r}); sys.path.insert(0, {bench!r})
import torch
from models import build
torch.manual_seed(0)
model, inputs, loss_fn = build({name!r}, {size!r})
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
torch.cuda.synchronize()
def run():
    compiled = torch.compile(model)
    opt.zero_grad(set_to_none=True)
    loss_fn(compiled, *inputs).backward()
    opt.step()
    torch.cuda.synchronize()
prof = cProfile.Profile() if {profile!r} else None
started = time.perf_counter()
if prof: prof.enable()
if {arm!r} == "listen":
    import compilescope
    with compilescope.capturing(real_steps=0):
        run()
else:
    run()
if prof: prof.disable()
wall = time.perf_counter() - started
if prof: prof.dump_stats({prof_path!r})
from torch._dynamo.utils import compilation_time_metrics
print("RESULT", json.dumps({{"wall": wall, "phases": {{k: sum(v) for k, v in compilation_time_metrics.items()}}}}))
"""


def one_run(name: str, arm: str, size: str, prof_path: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": f"{cache}/inductor", "TRITON_CACHE_DIR": f"{cache}/triton"}  # fmt: skip
        code = CHILD.format(ext=str(ROOT / "ext"), bench=str(ROOT / "benchmarks"), name=name, size=size, arm=arm, profile=bool(prof_path), prof_path=prof_path)  # fmt: skip
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)  # fmt: skip
        for line in done.stdout.splitlines():
            if line.startswith("RESULT "):
                return json.loads(line[len("RESULT ") :])
        return {"error": done.stderr[-3000:]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--models", default="gpt2,llama,convnext")
    parser.add_argument("--size", default="small")
    parser.add_argument("--plain", default="")
    parser.add_argument("--deadline", type=float, default=540.0)
    args = parser.parse_args()
    deadline = time.monotonic() + args.deadline
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import torch

    results: dict = {"meta": {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d"), "size": args.size}}  # fmt: skip
    for name in args.models.split(","):
        for arm in ("bare", "listen"):
            if time.monotonic() > deadline:
                break
            results[f"{name}_{arm}"] = one_run(
                name, arm, args.size, str(out / f"{name}_{arm}.prof")
            )
            (out / "profile.json").write_text(json.dumps(results, indent=1))
            print(name, arm, results[f"{name}_{arm}"].get("wall"), flush=True)
    if args.plain:
        for name in args.models.split(","):
            if time.monotonic() > deadline:
                break
            results[f"{name}_plain_{args.plain}"] = one_run(name, "bare", args.plain, "")
            (out / "profile.json").write_text(json.dumps(results, indent=1))
            print(name, "plain", results[f"{name}_plain_{args.plain}"].get("wall"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
