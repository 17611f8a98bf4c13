"""Where the end of the split window spends its time (the step that ends it pays for it).

    PYTHONPATH=ext:benchmarks python -m benchmarks run gpu-split-cost --out OUT LOOP[:nostack][,...]

Runs each loop (the step budget's names) under capturing() with the parts of the real-step
timer's end of window timed (the profiler's stop, its events, each analysis); writes
OUT/split_cost.json.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    out, names = Path(sys.argv[1]), sys.argv[2].split(",")
    out.mkdir(parents=True, exist_ok=True)
    import compilescope
    import torch
    from compilescope.live.timing import profiler_times, real_steps, step_split

    from suites.step_budget import REAL, _loop

    took: dict[str, list[float]] = {}

    def timing(module, name):
        original = getattr(module, name)

        def timed(*a, _o=original, _n=f"{module.__name__}.{name}", **k):
            t = time.perf_counter()
            try:
                return _o(*a, **k)
            finally:
                took.setdefault(_n, []).append(time.perf_counter() - t)

        setattr(module, name, timed)

    for module, name in [(real_steps.RealStepTimer, "_finish_compiled"),
                         (torch.profiler.profile, "stop"),
                         (real_steps, "kernel_figures"), (real_steps, "device_split"),
                         (step_split, "outside_work"), (step_split, "gpu_times"),
                         (step_split, "device_totals"), (step_split, "host_syncs"),
                         (step_split, "device_kernels_by_name"), (step_split, "launch_shapes"),
                         (profiler_times, "user_functions"),
                         (profiler_times, "chrome_trace_events")]:  # fmt: skip
        if hasattr(module, name):
            timing(module, name)
    results = {}
    with_stacks = real_steps.profile_with_stacks
    for label in names:
        took.clear()
        name, _, variant = label.partition(":")
        if variant == "nostack":  # the split's profile without Python stacks, to compare
            activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            real_steps.profile_with_stacks = lambda a=activities: torch.profiler.profile(
                activities=a
            )
        else:
            real_steps.profile_with_stacks = with_stacks
        step, _ = _loop("real" if name in REAL else "blind", name)
        with compilescope.capturing():
            for _ in range(25):
                step()
            torch.cuda.synchronize()
        results[label] = dict(took)
        print(label, json.dumps(took), flush=True)
        (out / "split_cost.json").write_text(json.dumps(results, indent=1))


SUITE = {
    "name": "gpu-split-cost",
    "device": "GPU",
    "measures": "what the step that ends compilescope's profiled window pays: the profiler's "
    "stop and the analysis, whole and by part",
}
# Neither record holds its machine or versions: they are the step budget's run (same H100,
# same session; RESULTS.md of 87f12c2).
_H100 = {"machine": "NVIDIA H100 80GB HBM3", "torch": "2.11.0+cu130", "triton": "3.6",
         "python": "3.12", "date": "2026-11-27"}  # fmt: skip
RECORDED = [
    ("raw/step_budget/split_cost_resnet50_h100.json", _H100, "resnet50_bf16"),
    ("raw/step_budget/split_cost_per_param_h100.json", _H100, "per_param_optimizer:nostack,per_param_optimizer"),
]  # fmt: skip
PARTS = {
    "RealStepTimer._finish_compiled": "end of the window, whole",
    "profile.stop": "profiler's stop",
    "compilescope.live.timing.real_steps.device_split": "device split",
    "compilescope.live.timing.real_steps.kernel_figures": "kernel figures",
}


def convert(path: Path, prov: dict, args: str) -> list[dict]:
    import rows

    cmd = rows.command(SUITE["name"], args.split())
    out = []
    for label, took in json.loads(path.read_text()).items():
        case = label.replace(":nostack", " (no Python stacks)")
        for key, metric in PARTS.items():
            if took.get(key):
                values = rows.spread(took[key])
                out.append(rows.row(SUITE["name"], case, metric, values.pop("median"),
                                    unit="s", prov=prov, cmd=cmd, **values))  # fmt: skip
    return out


def run(args: list[str], out: Path) -> list[dict]:
    import rows

    rows.run_script(Path(__file__), [str(out), *args])
    return convert(out / "split_cost.json", rows.here(gpu=True), " ".join(args))


if __name__ == "__main__":
    main()
