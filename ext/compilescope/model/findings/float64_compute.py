"""A compiled graph computing in float64 on a GPU (`model.double()`, float64 NumPy data): float32 or bf16 run it many times faster, and autocast leaves float64 ops alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..capture import Capture
from .catalog import remedy
from .parts import Cost, Finding
from .places import frame_of, frame_places

if TYPE_CHECKING:
    from ..measured.timing import RealSteps


def float64_findings(capture: Capture, real: RealSteps) -> list[Finding]:
    """Compiles whose Dynamo graph takes float64 parameters or inputs on a GPU (the fifth
    blind round's ResNet-18 on float64 data with `model.double()`: 2.47x in float32 with
    bf16 autocast, H200). Cost: the compile's measured time, as "up to"."""
    wall = real.compiled.median_s
    if not real.device.startswith("cuda") or wall <= 0:
        return []
    found = []
    for c in capture:
        cid = str(c.id)
        g = c.graph("dynamo_output_graph")
        seconds = real.graph_seconds(cid)
        if g is None or seconds <= 0:
            continue
        inputs = [n for n in g.nodes if n.op == "placeholder" and n.tensors]
        wide = [n for n in inputs if n.tensors[0].dtype == "f64"]
        params = [n for n in inputs if "_parameters_" in n.name]
        wide_params = [n for n in wide if "_parameters_" in n.name]
        if not wide or (params and len(wide_params) * 2 < len(params)):
            continue
        data = [n.name for n in wide if "_parameters_" not in n.name and "_buffers_" not in n.name]
        what = (
            f"{cid}'s graph computes in float64 on the GPU: {len(wide_params)} of its "
            f"{len(params)} parameters"
            + (
                f" and its input{'s' if len(data) > 1 else ''} {', '.join(data[:3])}"
                if data
                else ""
            )
            + " are float64 (`model.double()`, float64 NumPy data). A GPU runs float64 many "
            "times slower than float32, and autocast leaves float64 ops as they are (it casts "
            f"float32 only). The graph takes {seconds * 1e3:.3f} ms a step ({seconds / wall:.0%})."
        )
        found.append(
            Finding(
                kind="float64_compute",
                what=what,
                key=f"float64_compute:{cid}",
                user=frame_places(frame_of(capture, c), capture)[0],
                compile_ids=(cid,),
                cost=Cost(
                    step_s=seconds,
                    share=seconds / wall,
                    note="up to: the graph's measured time per step, forward and backward",
                ),
                fixes=(remedy("float32_compute").fix(),),
            )
        )
    return found
