"""Many same-shaped matmuls applied to one input, each with its own weight (an ensemble or a set of experts in a Python loop): Dynamo unrolls the loop into separate small kernels; one batched matmul over stacked weights runs them together."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from ..capture import Capture
from .catalog import remedy
from .parts import Cost, Finding
from .places import frame_of, frame_places

if TYPE_CHECKING:
    from ..measured.timing import RealSteps

_MATMULS = ("linear", "matmul", "mm", "addmm", "conv1d", "conv2d", "conv3d")
# Fewer copies than this of one layer on one input is no loop over members worth a finding.
_LEAST_COPIES = 8


def parallel_matmul_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """Compiles whose Dynamo graph applies >= _LEAST_COPIES matmuls of one op and weight
    shape, each with a distinct parameter, to the same input node (the fifth blind round's
    32-member MLP ensemble in a Python loop: 7.42x with `stack_module_state` + `vmap`,
    H200). Cost: the compile's measured time, as "up to"; on a launch-bound step its
    launches' share of the idle time comes with it (root_cause)."""
    wall = real.compiled.median_s
    found = []
    for c in capture:
        cid = str(c.id)
        g = c.graph("dynamo_output_graph")
        seconds = real.graph_seconds(cid)
        if g is None or seconds <= 0 or wall <= 0:
            continue
        by_name = {n.name: n for n in g.nodes}
        groups: dict[tuple[str, str, str], set[str]] = defaultdict(set)
        for n in g.nodes:
            op = str(n.target).rsplit(".", 1)[-1]
            if n.op != "call_function" or op not in _MATMULS or len(n.inputs) < 2:
                continue
            weight = by_name.get(n.inputs[1])
            if weight is None or "_parameters_" not in weight.name or not weight.tensors:
                continue
            shape = " x ".join(str(d) for d in weight.tensors[0].shape)
            groups[(op, n.inputs[0], shape)].add(weight.name)
        copies = max((len(w), key) for key, w in groups.items()) if groups else (0, ("", "", ""))
        if copies[0] < _LEAST_COPIES:
            continue
        count, (op, source, shape) = copies
        launches = sum(k.calls_per_run for k in real.kernels if k.compile_id == cid)
        what = (
            f"{cid}'s graph applies `{op}` to `{source}` {count} times, each with its own weight "
            f"of shape {shape}: a Python loop over copies of one layer (an ensemble's members, "
            f"experts), which Dynamo unrolls into {count} separate small kernels per layer, "
            f"forward and backward ({launches:.0f} kernel launches a step). Stacked into one "
            "weight, they run as one batched matmul. The graph takes "
            f"{seconds * 1e3:.3f} ms a step ({seconds / wall:.0%})."
        )
        found.append(
            Finding(
                kind="parallel_matmuls",
                what=what,
                key=f"parallel_matmuls:{cid}",
                user=frame_places(frame_of(capture, c), capture)[0],
                compile_ids=(cid,),
                cost=Cost(
                    step_s=seconds,
                    share=seconds / wall,
                    launches=launches or None,
                    note="up to: the graph's measured time per step, forward and backward",
                ),
                fixes=(remedy("batched_members").fix(),),
            )
        )
    return found
