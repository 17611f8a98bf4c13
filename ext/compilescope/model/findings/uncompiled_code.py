"""Code a graph break leaves uncompiled, claimed by that break: the frames it makes compile on their own, and the idle time of the kernels its eager code launches."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .parts import Finding
from .places import in_function_of

if TYPE_CHECKING:
    from ..capture import Capture
    from ..compile import Compile, Frame
    from ..measured.timing import RealSteps

# The kinds that leave code uncompiled in every step: a frame that falls back to eager, and a
# frame past the recompile limit.
UNCOMPILED = ("eager_frame", "recompile_limit")


def limit_below_an_eager_frame(found: list[Finding], capture: Capture) -> list[Finding]:
    """A frame that hit the recompile limit, called from a frame that falls back to eager, is
    compiled on its own only because its caller is not compiled: inside its caller's graph it
    would be traced with it (the third blind round's `logger.debug` in 12 blocks: the model's
    `forward` ran eagerly, so each block's `forward` compiled once per block until the limit).
    One cause, one finding: the eager frame, which says what the limit did, with its fixes
    alone (the limit's would change code that runs traced once the caller compiles)."""
    eager = [f for f in found if f.kind == "eager_frame"]
    limits = [f for f in found if f.kind == "recompile_limit"]
    if len(eager) != 1 or not limits:
        return found
    (cause,) = eager
    by_id = {str(c.id): c for c in capture}
    callers = [by_id[i].frame for i in cause.compile_ids if i in by_id and by_id[i].failure]
    below = [f for f in limits if _called_from(f, callers, by_id)]
    if not below:
        return found
    said = " ".join(f.what for f in below)
    merged = replace(
        cause,
        what=f"{cause.what} Because it runs eagerly, the frames it calls compile on their own, "
        f"one call at a time: {said}",
        compile_ids=tuple(
            dict.fromkeys((*cause.compile_ids, *(i for f in below for i in f.compile_ids)))
        ),
        counts=replace(
            cause.counts,
            recompiles=cause.counts.recompiles + sum(f.counts.recompiles for f in below),
        ),
    )
    return [merged if f is cause else f for f in found if not any(f is b for b in below)]


def _called_from(limit: Finding, callers: list[Frame], by_id: dict[str, Compile]) -> bool:
    """Whether the stack that led to the limited frame passes through one of `callers`."""
    for i in limit.compile_ids:
        c = by_id.get(i)
        if c is None or not c.frame.stack:
            continue
        for p in c.frame.stack[:-1]:  # the last is the limited frame itself
            if any(
                p.file == f.file and p.function == f.function and p.line >= f.line for f in callers
            ):
                return True
    return False


def eager_launches_to_their_cause(found: list[Finding], real: RealSteps) -> list[Finding]:
    """On a launch-bound GPU step, the eager ops' launches (outside every compiled graph) are
    the one cause's that leaves code uncompiled, whose fix compiles them, and not CUDA graphs',
    which replay compiled graphs only: its `Cost.launches` (their share of the idle time goes
    with it in root_cause), and its fix first in launch-bound's. Said where that cause's frames
    are seen running eager ops in the timed steps."""
    causes = [f for f in found if f.kind in UNCOMPILED]
    launch = [f for f in found if f.kind == "launch_bound" and f.cost.step_s]
    if len(causes) != 1 or not launch:
        return found
    (cause,), (bound,) = causes, launch
    eager = [w for w in real.outside if w.kind == "eager_op"]
    places = [cause.user] + [c for c in (cause.at,) if c is not None]
    if not any(p is not None and in_function_of(w.where, p) for w in eager for p in places):
        return found  # its frames ran no eager op in the timed steps
    eager_calls = sum(w.calls for w in eager)
    every = eager_calls + sum(k.calls_per_run for k in real.kernels)
    if not eager_calls:
        return found
    moved = replace(
        cause,
        what=f"{cause.what} Outside the compiled graphs, {eager_calls:.0f} kernels a step are "
        f"launched by eager ops ({eager_calls / every:.0%} of the step's launches).",
        cost=replace(cause.cost, launches=eager_calls),
    )
    first = cause.fixes[:1]
    said = replace(
        bound,
        what=f"{bound.what} CUDA graphs replay compiled graphs only: the eager ops' launches go "
        "with the finding that leaves their code uncompiled.",
        fixes=(*first, *(x for x in bound.fixes if x not in first)),
    )
    return [moved if f is cause else said if f is bound else f for f in found]
