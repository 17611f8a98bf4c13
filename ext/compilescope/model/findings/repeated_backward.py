"""A compiled backward that runs several times for each forward (one backward call per loss, `retain_graph=True`): summing the losses runs it once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture import Capture
from .catalog import remedy
from .parts import Cost, Finding
from .places import frame_of, frame_places

if TYPE_CHECKING:
    from ..measured.timing import RealSteps


def repeated_backward_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """Compiles whose backward graph ran k >= 2 times per run of their forward, by the graphs'
    kernel calls per step (the fifth blind round's two-task BERT: `loss_cls.backward(
    retain_graph=True); loss_tok.backward()`, 1.65x as one backward of the sum, H200). Each
    backward call runs the whole compiled backward (AOTAutograd's backward takes every
    output's gradient, zeros for the other loss). Cost: all runs of it but one."""
    wall = real.compiled.median_s
    found = []
    for c in capture:
        cid = str(c.id)
        forward = real.runs_per_step(cid, "forward")
        backward = real.runs_per_step(cid, "backward")
        if forward < 1 or wall <= 0 or round(backward / forward) < 2:
            continue
        times = backward / forward
        step_s = real.graph_seconds(cid, "backward") * (1 - 1 / times)
        what = (
            f"{cid}'s backward runs {times:.0f} times for each run of its forward "
            f"({backward:.0f} and {forward:.0f} a step): `.backward()` is called once per loss "
            "(`loss_a.backward(retain_graph=True)` then `loss_b.backward()`), and each call runs "
            "the whole compiled backward. Sum the losses and call backward once: "
            f"{step_s * 1e3:.3f} ms a step ({step_s / wall:.0%}) of repeated backward."
        )
        found.append(
            Finding(
                kind="repeated_backward",
                what=what,
                key=f"repeated_backward:{cid}",
                user=frame_places(frame_of(capture, c), capture)[0],
                compile_ids=(cid,),
                cost=Cost(
                    step_s=step_s,
                    share=step_s / wall,
                    note="the backward graph's measured time per step, but one run of it",
                ),
                fixes=(remedy("one_backward").fix(),),
            )
        )
    return found
