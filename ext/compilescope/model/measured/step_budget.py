"""The step budget: the real steps' median step split into named parts that add up to it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a log's report (no measured times) does not import the timing model
    from .timing import OutsideWork, RealSteps

# Above this share of the step, what the parts cannot place is named as a finding of its own
# (issue 42: "unexplained under 10% of the step").
UNEXPLAINED_SHARE = 0.10


@dataclass(frozen=True)
class BudgetPart:
    """One part of the median step: what it is, its time per step and share of the step."""

    kind: str  # graph, optimizer, outside, sync, gaps, unexplained
    name: str  # in words: "compiled graph 0/0 (forward)", "optimizer steps (eager)", ...
    seconds: float  # per step; only `unexplained` may be negative (parts measured over the step)
    share: float  # of the compiled step's median
    compile_id: str = ""  # the graph's, for kind "graph"
    detail: str = ""  # what is inside, and how it was measured


def device_scale(real: RealSteps) -> float:
    """What the budget multiplies the split's device times by: 1, or the stopwatch's step over
    the device time of the split's parts where they add up past it (a device-bound step whose
    kernels' medians outrun it: clocks, the profiler). A finding that quotes kernels' time per
    step uses it too, so that no part of the step is more than the step (an fp32 matmul loop
    on an H200 read "109% of the step")."""
    step = real.compiled.median_s
    if real.split_wall is None and not real.graphs:
        return 1.0
    device = sum(g.seconds for g in real.graphs if g.seconds > 0)
    device += sum(w.seconds for w in real.outside if w.seconds > 0)
    return step / device if device > step > 0 else 1.0


def step_budget(real: RealSteps) -> tuple[BudgetPart, ...]:
    """The compiled step's median as parts: each compiled graph's kernels, then what ran outside
    the graphs (the eager optimizer first, then other eager ops), the device's idle time around
    host syncs (GPU), the launch and Python gaps, and what is left unexplained (shown, signed).

    The parts come from the split window (every kernel timed) and the step from the stopwatch
    window before it; where the split's parts add up to more than the step (a noisy machine),
    `unexplained` is negative and says so. No part is invented: a step timed whole (a short
    loop) is one `unexplained` part of 100%.
    """
    step = real.compiled.median_s
    if step <= 0:
        return ()
    gpu = real.device.startswith("cuda")
    parts: list[BudgetPart] = []

    def add(kind: str, name: str, seconds: float, detail: str = "", cid: str = "") -> None:
        if seconds > 0:
            parts.append(BudgetPart(kind, name, seconds, seconds / step, cid, detail))

    for g in sorted(real.graphs, key=lambda g: -g.seconds):
        add(
            "graph",
            f"compiled graph {g.compile_id} ({g.role})",
            g.seconds,
            f"{g.kernels} kernel{'s' if g.kernels != 1 else ''}, "
            + ("device time" if gpu else "wall time of their calls"),
            g.compile_id,
        )
    # The split's steps ran (every kernel wrapped): its parts are measured, even where no
    # compiled graph ran in them (a frame past the recompile limit runs eagerly).
    split = real.split_wall is not None or bool(real.graphs)
    outside = max(real.outside_graphs_s, 0.0) if split else 0.0
    between = max(real.between_s, 0.0) if split else 0.0
    works = _grouped([w for w in real.outside if w.seconds > 0], step) if split else []
    for w in works:  # GPU: what ran outside the graphs, by what it is (its device time)
        add(w.kind, _work_name(w), w.seconds, _work_detail(w))
    device = sum(p.seconds for p in parts)
    scale = device_scale(real)
    if scale < 1.0:
        # The split's steps ran longer than the stopwatch's: the device parts are that step's
        # shares of the stopwatch's, said in each part; nothing is left for gaps.
        parts[:] = [
            replace(
                p,
                seconds=p.seconds * scale,
                share=p.share * scale,
                detail=f"{p.detail}; scaled by {scale:.3f}: the split's kernels took "
                f"{device * 1e3:.3f} ms of device time a step, the stopwatch's step "
                f"{step * 1e3:.3f} ms",
            )  # fmt: skip
            for p in parts
        ]
        outside = between = 0.0
    if works:
        # The eager optimizer's kernels are among them (torch's _foreach_* / _fused_* ops);
        # what the works do not cover of the outside time stays one part, and time they
        # hold beyond it (parallel streams) comes out of the gaps.
        named = sum(w.seconds for w in works)
        between -= max(named - outside, 0.0)
        between = max(between, 0.0)
        outside = max(outside - named, 0.0)
    optimizer = min(real.optimizer_s or 0.0, outside + between) if split and not works else 0.0
    # The eager optimizer's wall time is carved out of what ran outside the graphs first (its
    # kernels, on a GPU; all of it, on a CPU), then out of the gaps (its launches).
    from_outside = min(optimizer, outside)
    outside -= from_outside
    between -= optimizer - from_outside
    add(
        "optimizer",
        "optimizer steps (eager)",
        optimizer,
        "wall time inside optimizer.step() calls that ran eagerly",
    )
    add(
        "outside",
        "other work outside the compiled graphs"
        if works
        else "eager ops outside the compiled graphs",
        outside,
        "kernels that ran in no compiled graph (eager ops, copies)"
        if gpu
        else "everything outside the compiled kernels: eager ops, autograd, Python",
    )
    sync_idle = min(real.sync_idle_s or 0.0, between) if split else 0.0
    between -= sync_idle
    syncs = real.syncs_per_step or 0.0
    add(
        "sync",
        "device idle after host syncs",
        sync_idle,
        f"{syncs:g} syncs per step (.item(), .cpu(), synchronize) drain the device's queue",
    )
    add(
        "gaps",
        "launch and Python gaps (device idle)" if gpu else "between the compiled kernels",
        between,
        "the device waits for the host: kernel launches, Python, guards, the autograd engine"
        if gpu
        else "Python, guards, AOTAutograd's wrappers and the autograd engine between kernels",
    )
    rest = step - sum(p.seconds for p in parts)
    if not split:
        detail = "the steps were timed whole, not split (too few steps, or no compiled kernel)"
    elif rest < 0:
        detail = (
            "the parts, measured in the split's steps, add up to more than the stopwatch's step"
        )
    else:
        detail = "step time the split's parts do not place"
    if abs(rest) > 1e-9:
        parts.append(BudgetPart("unexplained", "unexplained", rest, rest / step, "", detail))
    return tuple(parts)


# Eager ops under this share of the step are one part together (a budget a user reads at a
# glance); the optimizer's foreach/fused ops are one part, its update.
_SMALL_OP_SHARE = 0.01
_OPTIMIZER_OPS = ("aten::_foreach", "aten::_fused")


def _grouped(works: list[OutsideWork], step: float) -> list[OutsideWork]:
    """The works with the optimizer's ops as one and the small eager ops as one."""
    optimizer = [w for w in works if w.kind == "eager_op" and w.name.startswith(_OPTIMIZER_OPS)]
    small = [
        w
        for w in works
        if w.kind == "eager_op" and w not in optimizer and w.seconds < _SMALL_OP_SHARE * step
    ]
    out = [w for w in works if w not in optimizer and w not in small]
    if optimizer:
        names = ", ".join(sorted({w.name.removeprefix("aten::") for w in optimizer}))
        out.append(_merged("optimizer", f"optimizer update ({names})", optimizer))
    if small:
        unique = list(dict.fromkeys(w.name for w in small))
        names = ", ".join(unique[:4]) + (", ..." if len(unique) > 4 else "")
        out.append(_merged("eager_op", f"{len(small)} small eager ops ({names})", small))
    return sorted(out, key=lambda w: -w.seconds)


def _merged(kind: str, label: str, parts: list[OutsideWork]) -> OutsideWork:
    """Several parts as one row: their time and calls summed, the place where they share one."""
    from .timing import OutsideWork

    places = {w.where for w in parts}
    return OutsideWork(
        kind,
        label,
        sum(w.seconds for w in parts),
        sum(w.calls for w in parts),
        where=places.pop() if len(places) == 1 else "",
    )


def _work_name(w: OutsideWork) -> str:
    where = f" in {w.where}" if w.where else ""
    if w.kind == "eager_op" and w.name.startswith("aten::"):
        return f"eager {w.name}{where} (outside the compiled graphs)"
    if w.kind == "eager_op":
        return f"{w.name}{where} (outside the compiled graphs)"
    if w.kind == "optimizer":
        return f"{w.name}, eager{where}"
    if w.kind == "collective":
        return f"collective {w.name} (exposed)"
    return w.name


def _work_detail(w: OutsideWork) -> str:
    calls = f"{w.calls:g} per step"
    if w.kind == "collective":
        return f"{calls}; the step waits for this part; {w.overlapped_s * 1e3:.3f} ms more overlapped other kernels"
    if w.kind == "optimizer":
        return f"{calls}; the optimizer's update kernels (an eager optimizer step)"
    if w.kind == "copy" and "pageable" in w.name:
        return f"{calls}; from pageable host memory: the host waits for each copy"
    return f"{calls}, device time"
