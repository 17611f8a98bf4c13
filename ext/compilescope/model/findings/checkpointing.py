"""Activation checkpointing in the user's code: the backward computes checkpointed regions' forward again, measured by the forward it repeats."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture import Capture
from ..compile import Compile
from .catalog import remedy
from .parts import Cost, Finding
from .places import frame_of, frame_places

if TYPE_CHECKING:
    from ..measured.timing import RealSteps

# torch.utils.checkpoint as Dynamo records it (torch 2.x: `tag_activation_checkpoint` wraps each
# checkpointed region in the Dynamo graph; AOTAutograd marks its ops to recompute).
_CHECKPOINT = "tag_activation_checkpoint"
# The ops that cost most of a recomputed forward: the matmuls and convolutions it runs again.
_HEAVY = ("mm", "addmm", "bmm", "baddbmm", "convolution", "_scaled_dot_product")


def checkpoint_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """Each compile whose graph checkpoints regions, with the forward time its backward repeats:
    the forward graph's measured time in the real steps, times the share of its matmuls and
    convolutions the backward computes again (an estimate: the recomputed ops run in the
    backward's kernels, fused with others)."""
    found = []
    wall = real.compiled.median_s
    for c in capture:
        regions = sum(
            _CHECKPOINT in n.target
            for g in c.graphs.get("dynamo_output_graph", ())
            for n in g.nodes
        )
        partition = c.partition
        if not regions or partition is None or not partition.recomputed:
            continue
        heavy = _heavy_forward_ops(c)
        again = sum(1 for name in partition.recomputed if _is_heavy(name))
        forward = sum(
            g.seconds for g in real.graphs if g.compile_id == str(c.id) and g.role == "forward"
        )
        share_again = min(again / heavy, 1.0) if heavy else 0.0
        step_s = forward * share_again
        what = (
            f"{c.id} checkpoints {regions} region{'s' if regions != 1 else ''} of the forward "
            "(`torch.utils.checkpoint`, or a model's gradient checkpointing): the backward "
            f"computes {len(partition.recomputed) - partition.recomputed_views} forward ops again, "
            f"{again} of its {heavy} matmuls and convolutions, about {step_s * 1e3:.3f} ms a step "
            f"({step_s / wall:.0%}, of a forward of {forward * 1e3:.3f} ms). That buys activation "
            "memory: where the activations fit without it, it is time lost."
        )
        found.append(
            Finding(
                kind="activation_checkpointing",
                what=what,
                key=f"activation_checkpointing:{c.id}",
                user=frame_places(frame_of(capture, c), capture)[0],
                compile_ids=(str(c.id),),
                cost=Cost(
                    step_s=step_s,
                    share=step_s / wall,
                    note="the forward graph's time per step, times the share of its matmuls and "
                    "convolutions the backward computes again",
                ),
                fixes=(remedy("no_checkpointing").fix(),),
            )
        )
    return found


def _is_heavy(name: str) -> bool:
    """A recomputed node's name, "addmm_20", is a matmul or a convolution."""
    base = name.rstrip("0123456789").rstrip("_")
    return base in _HEAVY


def _heavy_forward_ops(c: Compile) -> int:
    """The matmuls and convolutions of the compile's forward graph (AOTAutograd's)."""
    graphs = c.graphs.get("aot_forward_graph", ())
    return sum(
        1 for g in graphs[:1] for n in g.nodes if any(f"aten.{op}." in n.target for op in _HEAVY)
    )
