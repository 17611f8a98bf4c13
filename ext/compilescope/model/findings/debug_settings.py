"""Debugging settings left on in a timed step (anomaly detection, CUDA_LAUNCH_BLOCKING, a profiler): said first, since they slow every op and buy nothing there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .catalog import remedy
from .parts import Cost, Finding

if TYPE_CHECKING:
    from ..measured.timing import RealSteps


def debug_findings(real: RealSteps) -> list[Finding]:
    """One finding for the debugging settings that were on while the steps were timed."""
    s = real.settings
    if s is None:
        return []
    on = []
    if s.anomaly_detection:
        on.append(
            "autograd's anomaly detection (`torch.autograd.set_detect_anomaly(True)` or "
            "`with torch.autograd.detect_anomaly():`): each forward op records its Python stack, "
            "each backward op's outputs are checked for NaN on the host, a wait for the device "
            "each"
        )
    if s.launch_blocking:
        on.append("`CUDA_LAUNCH_BLOCKING=1`: every kernel launch waits until its kernel ends")
    if s.profiler:
        on.append(
            "a profiler recording every op (`torch.profiler.profile`, `torch.autograd.profiler."
            "profile` or `emit_nvtx` left around the training loop): each op records an event "
            "on the host"
        )
    if not on:
        return []
    wall = real.compiled.median_s
    what = "A debugging setting is on while you train: " + "; and ".join(on) + "."
    step_s = share = None
    if real.busy_s is not None and wall > 0:
        # What it costs is not measured apart: the GPU's idle time holds it (trying the fix
        # measures it), and the findings on that idle time wait for this one.
        step_s = max(wall - real.busy_s, 0.0)
        share = step_s / wall
        what += (
            f" The GPU is idle {step_s * 1e3:.3f} ms of the {wall * 1e3:.3f} ms step "
            f"({share:.0%}), part of it this setting's doing: turn it off before judging the rest."
        )
    return [
        Finding(
            kind="debug_mode",
            what=what,
            key="debug_mode",
            cost=Cost(
                step_s=step_s,
                share=share,
                note="the GPU's idle time per step, which the setting adds to (not measured apart)",
            ),
            fixes=(remedy("debugging_off").fix(),),
        )
    ]
