"""Findings that claim the same milliseconds of the step, folded onto their cause: one cause, one finding."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..capture import Capture
from .break_helpers import breaks_in_one_helper
from .catalog import remedy
from .idle_time import IDLE_SHARE
from .parts import Finding, Fix
from .perf import SHOWN_SHARE
from .places import in_function_of
from .torch_optimizer import in_torch_optim
from .uncompiled_code import eager_launches_to_their_cause, limit_below_an_eager_frame

if TYPE_CHECKING:
    from ..measured.timing import RealSteps

_BREAKS = ("graph_break", "data_dependent")


def onto_their_causes(found: list[Finding], capture: Capture) -> list[Finding]:
    """The findings with each measured cost claimed once, by the finding whose fix removes it:
    a cause's consequences are folded into it or lose the time it claims."""
    if any(f.kind == "compiled_fused_optimizer" for f in found):
        # Its cost holds every compile of torch.optim's frames, their recompiles included, and
        # its fix (stop compiling the step) removes them: one cause, one finding.
        found = [f for f in found if not (f.kind == "recompile" and in_torch_optim(f.at))]
    if any(f.kind == "fp32_matmul" for f in found):
        # The same matmuls' time, and the cheaper remedy first: TF32 is one setting, no compile
        # cost; max-autotune is worth measuring after it (a ViT on an H100: 1.8x from TF32).
        found = [f for f in found if f.kind != "library_matmul"]
    if any(f.kind == "cudnn_benchmark" for f in found):
        # The same convolutions' time, and the one setting that acts on it first: the library
        # fallback finding says only that no generated code replaces cuDNN.
        found = [
            f for f in found if not (f.kind == "fallback_op" and "convolution_backward" in f.key)
        ]
    found = limit_below_an_eager_frame(found, capture)
    found = breaks_in_one_helper(found, capture)
    found = eager_ops_to_their_cause(found)
    if any(f.kind == "not_compiled" for f in found):
        # Nothing compiled ran: the idle device is the eager code's launches, and the remedy
        # is to compile it (not_compiled's), not CUDA graphs of graphs that never ran.
        found = [f for f in found if f.kind != "launch_bound"]
    if any(f.kind == "debug_mode" and "anomaly detection" in f.what for f in found):
        # Anomaly detection's NaN checks are host syncs, a wait per backward op: its waits.
        found = [_with_syncs(f, found) if f.kind == "debug_mode" else f for f in found]
        found = [f for f in found if f.kind != "host_sync"]
    real = capture.timings.real_steps if capture.timings is not None else None
    if real is not None:
        found = syncs_to_their_break(found, real)
        found = claimed_out_of_idle_time(found, real)
        found = eager_launches_to_their_cause(found, real)
        found = launches_to_their_cause(found, real)
    return found


def _with_syncs(debug: Finding, found: list[Finding]) -> Finding:
    """The debugging finding, with the host-sync finding's waits said in it."""
    syncs = [f for f in found if f.kind == "host_sync"]
    if not syncs:
        return debug
    return replace(debug, what=f"{debug.what} Its waits: {syncs[0].what}")


def eager_ops_to_their_cause(found: list[Finding]) -> list[Finding]:
    """Eager ops outside the graphs where a frame runs uncompiled (past the recompile limit, or
    a frame that failed) are that frame's cost: one cause, one finding, with their time."""
    causes = [f for f in found if f.kind in ("recompile_limit", "eager_frame")]
    ops = [f for f in found if f.kind == "eager_ops_outside"]
    if len(causes) != 1 or not ops:
        return found
    cause = causes[0]
    seconds = sum(f.cost.step_s or 0.0 for f in ops)
    share = sum(f.cost.share or 0.0 for f in ops)
    names = ", ".join(f.key.split(":", 1)[1] for f in ops)
    merged = replace(
        cause,
        what=f"{cause.what} The eager ops it leaves ({names}) take {seconds * 1e3:.3f} ms per "
        f"step ({share:.0%}).",
        cost=replace(cause.cost, step_s=seconds, share=share),
    )
    return [merged if f is cause else f for f in found if f.kind != "eager_ops_outside"]


def syncs_to_their_break(found: list[Finding], real: RealSteps) -> list[Finding]:
    """Host syncs whose reads are in the function of a graph break are that break's: Dynamo
    runs the code at a break eagerly, and an `if` on a tensor's value there reads it on the
    host, waiting for the GPU (the second blind round: 12 blocks' `if amax > limit`, a sync
    each, ranked as syncs and launch-bound above the break that makes them)."""
    syncs = [f for f in found if f.kind == "host_sync"]
    breaks = [f for f in found if f.kind in _BREAKS and f.user is not None]
    reads = real.scalar_reads_per_step or 0.0
    if len(syncs) != 1 or not breaks or not reads or not real.read_places:
        return found
    (sync,) = syncs
    at_break: dict[str, float] = {}  # break key -> reads a step in its function
    for p in real.read_places:
        for b in breaks:
            if b.user is not None and in_function_of(p.where, b.user):
                at_break[b.key] = at_break.get(b.key, 0.0) + p.per_step
                break
    if not at_break:
        return found
    wall = real.compiled.median_s
    idle = sync.cost.step_s or 0.0
    folded: dict[str, Finding] = {}
    for b in breaks:
        n = at_break.get(b.key, 0.0)
        if not n:
            continue
        waited = idle * min(n / reads, 1.0)
        folded[b.key] = replace(
            b,
            what=f"{b.what} The code at the break reads a tensor's value on the host "
            f"({n:.0f} time{'' if round(n) == 1 else 's'} a step): each read waits for the GPU, "
            f"idle {waited * 1e3:.3f} ms a step ({waited / wall:.0%}) until the next kernel is "
            "launched. Removing the break removes the waits.",
            cost=replace(b.cost, waited_s=waited),
        )
    left = idle * max(1.0 - sum(at_break.values()) / reads, 0.0)
    out = [folded.get(f.key, f) for f in found if f is not sync]
    if left / wall >= SHOWN_SHARE:  # the waits elsewhere stay a finding of their own
        out.append(replace(sync, cost=replace(sync.cost, step_s=left, share=left / wall)))
    return [_syncs_fixed_at(f, folded) if f.kind == "launch_bound" else f for f in out]


def _syncs_fixed_at(launch_bound: Finding, folded: dict[str, Finding]) -> Finding:
    """Launch-bound's "remove the syncs first" points at the break that makes them."""
    if not folded:
        return launch_bound
    cause = max(folded.values(), key=lambda f: f.cost.waited_s or 0.0)
    at = Fix(
        "code",
        "remove the graph break that reads a tensor's value",
        change=cause.fixes[0].change
        if cause.fixes
        else "keep the branch on the device "
        "(`torch.where`, `torch.cond`) instead of an `if` on a tensor's value",
        where=cause.user,
        tradeoff="both branches' work runs on the device (`torch.where`)",
        source="torch.compile docs: common graph breaks (data-dependent control flow)",
    )
    fixes = tuple(f for f in launch_bound.fixes if f.title != remedy("avoid_syncs").title)
    return replace(launch_bound, fixes=(at, *fixes))


def claimed_out_of_idle_time(found: list[Finding], real: RealSteps) -> list[Finding]:
    """The time between the graphs a break splits is the break's, and on a GPU mostly idle
    time, as is the host's time making tensors for the device: launch- and host-bound keep
    only the idle time outside those, and say so; below their own threshold they are no
    finding."""
    breaks = [f for f in found if f.kind in _BREAKS and f.cost.step_s]
    made = sum(f.cost.step_s or 0.0 for f in found if f.kind == "host_tensors")
    wall = real.compiled.median_s
    if not (breaks or made) or wall <= 0:
        return found
    # Their idle time has every sync's waits taken out already: the gaps claim at least what
    # is left of them without any (a lower bound: the waits need not all be in the gaps). The
    # host's time making tensors for the device is idle time too, the GPU waiting for them.
    gaps = sum(f.cost.step_s or 0.0 for f in breaks)
    claimed = max(gaps - (real.sync_idle_s or 0.0), 0.0) + made
    out = []
    for f in found:
        if f.kind not in ("launch_bound", "host_bound") or not f.cost.step_s:
            out.append(f)
            continue
        rest = max(f.cost.step_s - claimed, 0.0)
        if rest / wall < IDLE_SHARE:
            continue  # the findings that cause it account for it
        out.append(
            replace(
                f,
                what=f"{f.what} Of the idle time, {min(claimed, f.cost.step_s) * 1e3:.3f} ms "
                "is counted with the findings that cause it (the graphs that breaks split, "
                "tensors made on the host).",
                cost=replace(f.cost, step_s=rest, share=rest / wall),
            )
        )
    return out


def launches_to_their_cause(found: list[Finding], real: RealSteps) -> list[Finding]:
    """On a launch-bound GPU step the idle time is shared by the kernels launched: a finding
    whose fix removes launches (`Cost.launches`: a backward's gradients nobody steps, a loop
    unrolled into copies of a cell, the eager code a break leaves) takes their share of it (the fourth blind round's unfrozen
    ResNet-50 backbone and LSTMCell loop ranked below launch-bound, CUDA graphs first)."""
    bound = next((f for f in found if f.kind == "launch_bound" and f.cost.step_s), None)
    # Every launch of the step, compiled and eager, shares the idle time.
    launches = sum(k.calls_per_run for k in real.kernels)
    launches += sum(w.calls for w in real.outside if w.kind == "eager_op")
    wall = real.compiled.median_s
    causes = [f for f in found if f.cost.launches and f is not bound]
    if bound is None or not causes or not launches or wall <= 0:
        return found
    idle = bound.cost.step_s or 0.0
    claimed = {f.key: idle * min((f.cost.launches or 0.0) / launches, 1.0) for f in causes}
    total = min(sum(claimed.values()), idle)
    out = []
    for f in found:
        if f.key in claimed:
            more = claimed[f.key]
            cost = (f.cost.step_s or 0.0) + more
            f = replace(
                f,
                what=f"{f.what} Its launches also keep the GPU waiting: {more * 1e3:.3f} ms of "
                "the step's idle time, by their share of the launches.",
                cost=replace(f.cost, step_s=cost, share=min(cost / wall, 1.0)),
            )
        elif f is bound:
            rest = idle - total
            if rest / wall < IDLE_SHARE:
                continue
            f = replace(
                f,
                what=f"{f.what} Of the idle time, {total * 1e3:.3f} ms is the launches of work "
                "that findings above remove (counted with them).",
                cost=replace(f.cost, step_s=rest, share=rest / wall),
            )
        out.append(f)
    return out
