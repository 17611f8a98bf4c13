"""Padding the model computes on: a batch's attention mask, mostly padding, costed by the graph it feeds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture import Capture
from ..compile import Compile
from .catalog import remedy
from .parts import Cost, Finding
from .places import FrameKey, frame_key, frame_of, frame_places

if TYPE_CHECKING:
    from ..measured.timing import RealSteps

# Below this share of padded positions, padding to the batch's longest saves too little to say.
_PADDED_SHARE = 0.25


def padding_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """Compiles whose padding mask (read where each compiled, `padding` in its metrics) was
    mostly padding: the model computes on every position, padded or not, so that share of its
    graph's time is spent on padding (the fourth blind round's GPT-2 fed `padding="max_length"`:
    16 x 1024 tokens of 24-128 real ones, 2.04x padded to the longest)."""
    wall = real.compiled.median_s
    # By frame: the graph timed may be a later compile of the frame whose mask was read (a
    # recompile, or a compile served from torch's caches), fed the same batches.
    frames = {str(c.id): frame_key(c) for c in capture}
    seconds: dict[FrameKey, float] = {}
    for share in real.graphs:
        key = frames.get(share.compile_id)
        if key is not None:
            seconds[key] = seconds.get(key, 0.0) + share.seconds
    found = []
    for c in capture:
        masks = c.metrics.get("padding")
        cid, key = str(c.id), frame_key(c)
        if not isinstance(masks, dict) or not masks or key not in seconds or wall <= 0:
            continue
        name, padded = max(masks.items(), key=lambda kv: kv[1])
        if not isinstance(padded, float) or padded < _PADDED_SHARE:
            continue
        step_s = seconds[key] * padded
        shape = _shape(c, name)
        what = (
            f"{padded:.0%} of the positions of `{_readable(name)}`{shape} are padding: {cid}'s "
            f"graph computes on every position, padded or not: up to "
            f"{step_s * 1e3:.3f} ms a step ({step_s / wall:.0%}) is spent on padding (its "
            f"{seconds[key] * 1e3:.3f} ms by that share; shorter batches still launch the same "
            "kernels, so the step gains less). Batches padded to a fixed length "
            '(`padding="max_length"`) longer than most of their sequences do this.'
        )
        found.append(
            Finding(
                kind="padding",
                what=what,
                key=f"padding:{cid}",
                user=frame_places(frame_of(capture, c), capture)[0],
                compile_ids=(cid,),
                cost=Cost(
                    step_s=step_s,
                    share=step_s / wall,
                    note="the graph's time per step by the share of padded positions (the "
                    "first batch's mask, read where the graph compiled)",
                ),
                fixes=(remedy("dynamic_padding").fix(),),
            )
        )
    return found


def _readable(name: str) -> str:
    """`l_kwargs_attention_mask_` -> `attention_mask`."""
    for prefix in ("l_kwargs_", "l_", "L_kwargs_", "L_"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    return name.rstrip("_")


def _shape(c: Compile, name: str) -> str:
    g = c.graph("dynamo_output_graph")
    node = next((n for n in g.nodes if n.name == name), None) if g is not None else None
    if node is None or not node.tensors:
        return ""
    return f" ({' x '.join(node.tensors[0].shape)})"
