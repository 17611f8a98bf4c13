"""The verdict first: a compiled step not faster than the eager one, measured in the same run, with where the time goes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..measured.step_budget import step_budget
from .parts import Cost, Finding, Fix

if TYPE_CHECKING:
    from ..measured.timing import RealSteps


# The compiled step counts as slower than eager only beyond the windows' noise: slower by this
# much in the medians, and in most pairs of steps (or, without the steps, in its fastest one).
_SLOWER_MARGIN = 1.05


VERDICTS = ("compiled_slower", "compiled_not_faster")


def verdict_findings(real: RealSteps) -> list[Finding]:
    """The verdict first: where the compiled step is not faster than the eager one (both
    measured in the same run), say so with both numbers and the budget's largest parts.

    Slower beyond the windows' noise (by `_SLOWER_MARGIN` in the medians and in at least 3 of
    4 pairs of steps) is "slower"; anything short of 5% faster by the medians is "not faster",
    with what the steps say about the noise."""
    eager, compiled = real.eager, real.compiled
    if eager is None or eager.median_s <= 0:
        return []
    if eager.median_s >= compiled.median_s * _SLOWER_MARGIN:
        return []  # compiled is faster by more than the margin: no verdict to give
    pairs = ""
    if real.step_walls and real.eager_walls:
        # Most pairs of steps agree (a compiled step slower than an eager one in at least 3
        # of 4 pairs): robust to a few slow steps on a busy machine, either way.
        slower = sum(c > e for c in real.step_walls for e in real.eager_walls)
        total = len(real.step_walls) * len(real.eager_walls)
        clearly = slower >= 0.75 * total
        pairs = f"{slower} of {total} pairs of steps had the compiled one slower"
    else:
        clearly = compiled.min_s > eager.median_s
    clearly = clearly and compiled.median_s > eager.median_s * _SLOWER_MARGIN
    lost = compiled.median_s - eager.median_s
    parts = sorted(step_budget(real), key=lambda p: -p.seconds)[:3]
    where = ", ".join(f"{p.name} {p.seconds * 1e3:.3f} ms ({p.share:.0%})" for p in parts)
    if all(p.kind == "unexplained" for p in parts):
        where = "not measured (the steps were timed whole, not split)"
    numbers = (
        f"{compiled.median_s * 1e3:.3f} ms compiled against {eager.median_s * 1e3:.3f} ms eager "
        f"({eager.median_s / compiled.median_s:.2f}x, medians of {compiled.repeats} and "
        f"{eager.repeats} steps of this run)"
    )
    if clearly:
        kind = "compiled_slower"
        what = (
            f"The compiled step is slower than eager: {numbers}, {lost * 1e3:.3f} ms lost per step."
        )
    else:
        kind = "compiled_not_faster"
        noise = f"; {pairs}, so the steps' noise is as large as the difference" if pairs else ""
        what = (
            f"The compiled step is not faster than eager: {numbers}{noise}. Compiling buys "
            "no measurable time on this step."
        )
    what += f" The compiled step's largest parts: {where}."
    fixes = (
        Fix(
            "code",
            "keep this step eager, or compile only what is faster",
            change="run the step without torch.compile (or wrap only the modules whose compiled "
            "graphs are faster, e.g. `block.compile()` per block), and compare again",
            tradeoff=(
                f"measured here: eager was faster by {lost * 1e3:.3f} ms a step"
                if lost > 0
                else f"measured here: compiled was faster by only {-lost * 1e3:.3f} ms a step"
            )
            + "; the findings below name the parts to fix if compiling should stay",
            source="measured in this capture (stopwatch of the user's own steps)",
        ),
    )
    return [
        Finding(
            kind=kind,
            what=what,
            key=kind,
            # Where compiled is (a little) faster, no cost: "0.000 ms per step, 0% of the
            # step" read as nothing to see, under a verdict that says compiling buys nothing.
            cost=Cost(
                step_s=lost,
                share=lost / compiled.median_s,
                note="time per step the compiled step takes beyond the eager one",
            )
            if lost > 0
            else Cost(note="none lost: compiled was no slower than eager, nor measurably faster"),
            fixes=fixes,
        )
    ]
