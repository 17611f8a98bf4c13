"""Judge compilescope's verdict on the blind verdict set (issue 42): for each loop, in a fresh
process, run it under `compilescope.capturing()` for 40 steps and record the top 3 findings;
the verdict is right where finding #1 is `compiled_slower` / `compiled_not_faster` exactly for
the loops whose measurement (measured.json, taken without compilescope) says not faster.

    python benchmarks/data/blind_verdict/judge.py   (writes benchmarks/data/blind_verdict/judged.json)
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERDICTS = ("compiled_slower", "compiled_not_faster")


def child(path: Path) -> None:
    import compilescope
    import torch

    torch.set_num_threads(1)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    step = module.build()
    with compilescope.capturing() as cap:
        for _ in range(40):
            step()
    real = cap.capture.timings.real_steps if cap.capture.timings else None
    found = compilescope.findings(cap.capture)
    print(
        json.dumps(
            {
                "compiled_s": real.compiled.median_s if real else None,
                "eager_s": real.eager.median_s if real and real.eager else None,
                "note": cap.capture.timings.real_steps_note if cap.capture.timings else "",
                "top3": [{"kind": f.kind, "what": f.what[:400]} for f in found[:3]],
            }
        )
    )


def main() -> None:
    measured = json.loads((HERE / "measured.json").read_text())
    loops = sorted(p for p in HERE.glob("*.py") if p.stem not in ("measure", "judge"))
    out = {}
    for path in loops:
        done = subprocess.run([sys.executable, __file__, "--child", str(path)],
                              capture_output=True, text=True, timeout=600)  # fmt: skip
        if done.returncode != 0:
            out[path.stem] = {"error": done.stderr[-2000:]}
            continue
        got = json.loads(done.stdout.strip().splitlines()[-1])
        m = measured["loops"].get(path.name, {})
        got["measured"] = m
        said = bool(got["top3"]) and got["top3"][0]["kind"] in VERDICTS
        got["verdict_said"] = said
        out[path.stem] = got
        print(path.stem, "verdict" if said else "no verdict", [f["kind"] for f in got["top3"]],
              got["compiled_s"], got["eager_s"], flush=True)  # fmt: skip
    (HERE / "judged.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]))
    else:
        main()
