"""A GPT-2 training loop as many scripts write it, on a GPU: what compilescope's findings say.

    PYTHONPATH=ext:benchmarks python benchmarks/gpu_amp_loop.py OUT

A GPT-2 (4 x 512) in fp32 weights under `torch.autocast(bfloat16)`, a GradScaler (as fp16 code
has it; with bf16 it only adds its checks), gradient clipping after `scaler.unscale_`, AdamW
(torch's defaults) and a warm-up LambdaLR; the model compiled, 40 steps under `capturing()`.
Writes OUT/amp_loop.json: the real steps' split and the top findings with their fixes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    import compilescope
    import torch
    from compilescope.model.findings.ranked import text
    from gpu_speed_zoo import _gpt2

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = _gpt2(4, 512, 256, "cuda").float()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))
    scaler = torch.amp.GradScaler("cuda")
    compiled = torch.compile(model)
    ids = torch.randint(0, 50257, (8, 256), device="cuda")
    with compilescope.capturing() as cap:
        for _ in range(40):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = compiled(input_ids=ids, labels=ids).loss
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            schedule.step()
            opt.zero_grad(set_to_none=True)
    real = cap.timings.real_steps
    found = compilescope.findings(cap.capture)
    record = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "compiled_s": real.compiled.median_s if real else None,
        "outside_s": real.outside_graphs_s if real else None,
        "optimizer_s": real.optimizer_s if real else None,
        "syncs_per_step": real.syncs_per_step if real else None,
        "note": real.note if real else cap.timings.real_steps_note,
        "findings": [
            {
                "kind": f.kind,
                "what": f.what,
                "step_s": f.cost.step_s,
                "share": f.cost.share,
                "fixes": [fx.title + ": " + (fx.python() or fx.change) for fx in f.fixes],
            }
            for f in found[:8]
        ],  # fmt: skip
    }
    (out / "amp_loop.json").write_text(json.dumps(record, indent=1))
    print(text(found, 8))


if __name__ == "__main__":
    main()
