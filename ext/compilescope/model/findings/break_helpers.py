"""Many graph breaks in one helper function the compiled code calls: one finding, keep that function out of the compiled code."""

from __future__ import annotations

from dataclasses import replace

from ..capture import Capture
from .parts import Counts, Finding, Fix

# Breaks at this many lines of one function make it a function to keep out, not breaks to fix
# one by one (torch's docs: "one graph break is better than potentially tens or hundreds").
LEAST_BREAKS = 3
_BREAKS = ("graph_break", "data_dependent")


def breaks_in_one_helper(found: list[Finding], capture: Capture) -> list[Finding]:
    """Break findings at LEAST_BREAKS or more lines of one function that is not the one compiled
    (a helper the compiled step calls: the second compile-time blind round's running-metrics
    `update`, five `.item()` breaks, each listed apart with `capture_scalar_outputs`) fold into
    one finding whose first fix keeps that function out of the compiled code. A module's
    `forward`, and the function torch.compile was given, are never told to stay out."""
    entries = {(c.frame.file, c.frame.function) for c in capture if c.id.frame_id == 0}
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in found:
        if f.kind in _BREAKS and f.user is not None and f.user.function:
            groups.setdefault((f.user.file, f.user.function), []).append(f)
    out = list(found)
    for (file, function), breaks in groups.items():
        lines = {f.user.line for f in breaks if f.user is not None}
        if len(lines) < LEAST_BREAKS or function in ("forward", "<module>"):
            continue
        if (file, function) in entries:
            continue
        out = [f for f in out if not any(f is b for b in breaks)]
        out.append(_one(function, breaks))
    return out


def _one(function: str, breaks: list[Finding]) -> Finding:
    first = min(breaks, key=lambda f: f.user.line if f.user else 0)
    n = sum(f.counts.breaks for f in breaks)
    steps = sum(f.cost.step_s or 0.0 for f in breaks)
    shares = sum(f.cost.share or 0.0 for f in breaks)
    said = "; ".join(f.what for f in sorted(breaks, key=lambda f: f.user.line if f.user else 0))
    keep_out = Fix(
        "code",
        f"keep `{function}` out of the compiled code",
        change=f"decorate `{function}` with `@torch.compiler.disable` (it then runs eagerly, "
        "one graph break where it is called instead of one at each of its lines), or call it "
        "outside the compiled function, after the step",
        where=first.user,
        tradeoff="it runs eagerly: worth it for bookkeeping (metrics, logging), not for the "
        "model's own math",
        source="torch.compile docs: working with fullgraph=False (apply torch.compiler.disable "
        "to functions that cause many graph breaks)",
    )
    fixes = [keep_out]
    for f in breaks:
        fixes += [x for x in f.fixes if x.title not in {y.title for y in fixes}]
    counts = Counts(
        breaks=n,
        restarts=sum(f.counts.restarts for f in breaks),
        recompiles=sum(f.counts.recompiles for f in breaks),
        frames=max(f.counts.frames for f in breaks),
        eager_frames=sum(f.counts.eager_frames for f in breaks),
        partly_eager_frames=sum(f.counts.partly_eager_frames for f in breaks),
    )
    return replace(
        first,
        kind="graph_break",
        what=f"`{function}` breaks the graph at {len(breaks)} of its lines ({n} breaks): {said}",
        key=f"graph_break:helper:{function}@{first.user.file if first.user else ''}",
        compile_ids=tuple(dict.fromkeys(i for f in breaks for i in f.compile_ids)),
        counts=counts,
        cost=replace(
            first.cost,
            graphs=sum(f.cost.graphs for f in breaks),
            compile_s=sum(f.cost.compile_s or 0.0 for f in breaks) or None,
            step_s=steps or None,
            share=shares or None,
            waited_s=sum(f.cost.waited_s or 0.0 for f in breaks) or None,
        ),
        fixes=tuple(fixes),
    )
