"""GPU check: after the one-pass Triton IR search, every Triton kernel of a real training loop
(forward and lazily lowered backward) carries its IR stages; saves the captures for the browser.

    PYTHONPATH=ext:benchmarks python benchmarks/gpu_ir_realistic.py OUT [--models llama,convnext]

For each model (sizes from gpu_real_steps.build, "small"), a few AdamW steps under
`compilescope.capturing()`; per compile id and graph kind, how many Triton kernels carry all four
IR stages (ttir, ttgir, llir, ptx). Writes OUT/ir_realistic.json and OUT/<model>.json.gz.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

STAGES = {"ttir", "ttgir", "llir", "ptx"}


def check(name: str, out: Path) -> dict:
    import compilescope
    import torch
    from gpu_real_steps import build

    torch.manual_seed(0)
    model, inputs, loss_fn = build(name, "small")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    compiled = torch.compile(model)
    started = time.perf_counter()
    with compilescope.capturing() as cap:
        for _ in range(4):
            opt.zero_grad(set_to_none=True)
            loss_fn(compiled, *inputs).backward()
            opt.step()
        torch.cuda.synchronize()
    capture = cap.capture
    rows = []
    for c in capture:
        kinds: dict[str, list[int]] = {}
        for code in c.output_code:
            for k in code.kernels:
                if k.language == "triton":
                    got = kinds.setdefault(code.role or "other", [0, 0])
                    got[1] += 1
                    got[0] += STAGES <= set(k.ir)
        if kinds:
            rows.append({"compile": str(c.id), "with_ir_of_triton": kinds})
    text = capture.to_json()
    (out / f"{name}.json.gz").write_bytes(gzip.compress(text.encode()))
    total = [sum(r["with_ir_of_triton"][s][i] for r in rows for s in r["with_ir_of_triton"]) for i in (0, 1)]  # fmt: skip
    return {"model": name, "seconds": time.perf_counter() - started, "compiles": rows,
            "triton_with_ir": total[0], "triton": total[1], "json_mb": len(text) / 1e6}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--models", default="llama,convnext")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import torch

    results: dict = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d"), "models": []}  # fmt: skip
    ok = True
    for name in args.models.split(","):
        try:
            r = check(name, out)
        except Exception as error:  # one model's failure must not lose the others
            r = {"model": name, "error": f"{type(error).__name__}: {error}"}
        results["models"].append(r)
        ok = ok and r.get("triton", 0) > 0 and r.get("triton_with_ir") == r.get("triton")
        (out / "ir_realistic.json").write_text(json.dumps(results, indent=1))
        print(json.dumps(r), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
