"""The verdict first: a compiled step slower than the eager one, measured in the same run, with where the difference lies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..step_budget import step_budget
from .parts import Cost, Finding, Fix

if TYPE_CHECKING:
    from ..timing import RealSteps


# The compiled step counts as slower than eager only beyond the windows' noise: slower by this
# much in the medians, and in most pairs of steps (or, without the steps, in its fastest one).
_SLOWER_MARGIN = 1.05


def verdict_findings(real: RealSteps) -> list[Finding]:
    """The verdict first: where the compiled step is slower than the eager one (both measured
    in the same run), say so with both numbers and the budget's largest parts."""
    eager, compiled = real.eager, real.compiled
    if eager is None or eager.median_s <= 0:
        return []
    if compiled.median_s <= eager.median_s * _SLOWER_MARGIN:
        return []
    if real.step_walls and real.eager_walls:
        # Most pairs of steps agree (a compiled step slower than an eager one in at least 3
        # of 4 pairs): robust to a few slow steps on a busy machine, either way.
        slower = sum(c > e for c in real.step_walls for e in real.eager_walls)
        if slower < 0.75 * len(real.step_walls) * len(real.eager_walls):
            return []
    elif compiled.min_s <= eager.median_s:
        return []
    lost = compiled.median_s - eager.median_s
    parts = sorted(step_budget(real), key=lambda p: -p.seconds)[:3]
    where = ", ".join(f"{p.name} {p.seconds * 1e3:.3f} ms ({p.share:.0%})" for p in parts)
    if all(p.kind == "unexplained" for p in parts):
        where = "not measured (the steps were timed whole, not split)"
    what = (
        f"The compiled step is slower than eager: {compiled.median_s * 1e3:.3f} ms compiled "
        f"against {eager.median_s * 1e3:.3f} ms eager ({eager.median_s / compiled.median_s:.2f}x, "
        f"medians of {compiled.repeats} and {eager.repeats} steps of this run), "
        f"{lost * 1e3:.3f} ms lost per step. The compiled step's largest parts: {where}."
    )
    fixes = (
        Fix(
            "code",
            "keep this step eager, or compile only what is faster",
            change="run the step without torch.compile (or wrap only the modules whose compiled "
            "graphs are faster, e.g. `block.compile()` per block), and compare again",
            tradeoff="measured here: eager was faster by "
            f"{lost * 1e3:.3f} ms a step; the findings below name the parts to fix if compiling "
            "should stay",
            source="measured in this capture (stopwatch of the user's own steps)",
        ),
    )
    return [
        Finding(
            kind="compiled_slower",
            what=what,
            key="compiled_slower",
            cost=Cost(
                step_s=lost,
                share=lost / compiled.median_s,
                note="time per step the compiled step takes beyond the eager one",
            ),
            fixes=fixes,
        )
    ]
