"""Where the end of the split window spends its time (the step that ends it pays for it).

    PYTHONPATH=ext:benchmarks python benchmarks/suites/split_cost.py OUT LOOP[:nostack][,...]

Runs each loop (gpu_step_budget's names) under capturing() with the parts of the real-step
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


if __name__ == "__main__":
    main()
