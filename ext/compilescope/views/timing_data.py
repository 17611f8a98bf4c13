"""The Timings tab's data: measured samples, a compile id's graph re-run alone, the user's real steps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..common import human_bytes
from ..model.capture import Capture
from ..model.compile import Compile
from ..model.measured.step_budget import step_budget

if TYPE_CHECKING:
    # Measured times only (live captures): a log's report (issue 34) does not import them.
    from ..model.measured.timing import GraphTiming, RealSteps, Sample


def sample_data(sample: Sample | None) -> dict[str, Any] | None:
    """A measured sample as the view charts it: median, min, max and repeats."""
    if sample is None:
        return None
    return {
        "median": sample.median_s,
        "min": sample.min_s,
        "max": sample.max_s,
        "n": sample.repeats,
    }


def peak_text(g: GraphTiming) -> str:
    """The graph's peak memory of one run, eager and compiled, in words."""
    if g.eager_peak_bytes is None or g.compiled_peak_bytes is None:
        return "peak memory: not measured"
    return (
        f"peak memory of one run: eager {human_bytes(g.eager_peak_bytes)},"
        f" compiled {human_bytes(g.compiled_peak_bytes)}"
    )


def graph_timing_data(c: Compile, capture: Capture) -> dict[str, Any] | None:
    """The compile id's graph re-run alone, eager vs compiled, forward and backward."""
    if not capture.timings:
        return None
    g = next((g for g in capture.timings.graphs if g.compile_id == str(c.id)), None)
    if g is None:
        return None
    cid = str(c.id)
    return {
        "what": g.what,
        "eager": sample_data(g.eager),
        "compiled": sample_data(g.compiled),
        "speedup": g.speedup,
        "note": g.note,
        "kernel_sum": capture.timings.kernel_sum_s(cid),
        "gap": capture.timings.gap_text(cid, g.compiled.median_s) if g.compiled else "",
        "memory": peak_text(g),
        "eager_backward": sample_data(g.eager_backward),
        "compiled_backward": sample_data(g.compiled_backward),
        "backward_speedup": g.backward_speedup,
        "step": g.step_s(),
        "eager_step": g.step_s("eager"),
        "backward_gap": capture.timings.gap_text(cid, g.compiled_backward.median_s, "backward")
        if g.compiled_backward
        else "",
    }


def real_steps_data(real: RealSteps | None) -> dict[str, Any] | None:
    """The user's own steps for the Timings tab: wall per step and its split, in seconds."""
    if real is None:
        return None
    graphs = [{"compile_id": g.compile_id, "role": g.role, "s": g.seconds, "kernels": g.kernels}
              for g in real.graphs]  # fmt: skip
    return {
        "device": real.device,
        "compiled": sample_data(real.compiled),
        "eager": sample_data(real.eager),
        "speedup": real.speedup,
        "split_wall": sample_data(real.split_wall),
        "busy_s": real.busy_s,
        "graphs": graphs,
        "graphs_s": real.graphs_s,
        "outside_graphs_s": real.outside_graphs_s,
        "between_s": real.between_s,
        "note": real.note,
        # Parts of the step outside the graphs, measured on their own: eager optimizer steps,
        # and the gaps between consecutive graphs (where a graph break split a frame).
        "optimizer_s": real.optimizer_s,
        "gaps": [
            {"before": g.before, "after": g.after, "role": g.role, "s": g.seconds}
            for g in sorted(real.gaps, key=lambda g: -g.seconds)
        ],
        # The step budget (model/measured/step_budget.py): parts that add up to the median step.
        "budget": [
            {"kind": p.kind, "name": p.name, "s": p.seconds, "share": p.share, "detail": p.detail}
            for p in step_budget(real)
        ],
    }
