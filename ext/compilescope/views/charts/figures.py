"""Charts as matplotlib Figures: compile-stage waterfall, kernel time ranking, memory, budget sweep.

Each function returns a `matplotlib.figure.Figure` (or None when the capture has nothing to
draw) that users can restyle and save; `svg` turns one into inline SVG for the script-free
fallback and the report. Figures are made without pyplot on the Agg canvas, so the user's
backend and pyplot's figure list are never touched.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from html import escape
from typing import Any

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ...common import byte_scale, human_bytes
from ...model.capture import Capture
from ...model.measured.kernel_table import timed_kernels
from ...model.partition import BudgetSweep
from .figure_base import ShownFigure, label_text
from .plain_charts import stage_rows, waterfall_title

_BLUE, _GREEN, _PURPLE, _GREY = "#6366f1", "#10b981", "#7c3aed", "#9ca3af"


def _figure(rows: int, title: str) -> tuple[Figure, Axes]:
    fig = ShownFigure(figsize=(9, 0.8 + 0.24 * max(rows, 2)), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_title(label_text(title, 120), loc="left", fontsize=11)
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=9)
    return fig, ax


def stage_waterfall(capture: Capture, max_rows: int = 30, max_depth: int = 2) -> Figure | None:
    """Each compile id's timed stages (torch's dynamo_timed events) on one time axis, down to
    `max_depth` levels of nesting: the rows of `plain_charts.stage_rows`."""
    rows = stage_rows(capture, max_rows, max_depth)
    if not rows:
        return None
    every = [s for r in rows for s in r.runs]
    start = min(s.start_us for s in every)
    end = max(s.start_us + s.duration_us for s in every)
    fig, ax = _figure(len(rows), waterfall_title(capture, (end - start) / 1e6))
    for row, r in enumerate(rows):
        alpha = 0.9 - 0.15 * min(r.depth, 4)
        for s in r.runs:
            ax.barh(
                row, s.duration_us / 1e3, left=(s.start_us - start) / 1e3, color=_BLUE, alpha=alpha
            )
        total = sum(s.duration_us for s in r.runs) / 1e3
        last = max(s.start_us + s.duration_us for s in r.runs)
        note = f"{total:.1f} ms" + (f" in {len(r.runs)} runs" if len(r.runs) > 1 else "")
        ax.annotate(
            note, ((last - start) / 1e3, row),
            xytext=(3, 0), textcoords="offset points", va="center", fontsize=8, color="#444",
        )  # fmt: skip
    ax.set_yticks(range(len(rows)), [label_text(r.label) for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("ms since the first stage began")
    return fig


_ROLE = {"forward": "fwd", "backward": "bwd"}


def kernel_ranking(capture: Capture, top: int = 15) -> Figure | None:
    """The kernels that take the most time per run (median per call times calls per run),
    with the min-max spread of a call as error bars: as timed in the user's own steps where
    those were timed (the kernel table's and the roofline's figures), else each graph re-run."""
    t = capture.timings
    timed = timed_kernels(capture)
    if t is None or not timed:
        return None
    in_steps = timed is not t.kernels
    kernels = sorted(timed, key=lambda k: k.per_run_s, reverse=True)[:top]
    how = "per step, in your steps" if in_steps else "median per run"
    fig, ax = _figure(len(kernels), f"slowest kernels on {t.device} ({how})")
    totals = [k.per_run_s * 1e6 for k in kernels]
    low = [(k.time.median_s - k.time.min_s) * k.calls_per_run * 1e6 for k in kernels]
    high = [(k.time.max_s - k.time.median_s) * k.calls_per_run * 1e6 for k in kernels]
    ax.barh(range(len(kernels)), totals, xerr=[low, high], color=_GREEN, ecolor="#555")
    # One slow outlier run (a CPU hiccup) must not squash every bar: whiskers past 1.5x the
    # longest bar are cut at the edge.
    # (Kernels timed at 0 us, a coarse clock: still a positive axis.)
    edge = 1.5 * max(totals) or 1.0
    ax.set_xlim(0, edge)
    for i, total in enumerate(totals):
        ax.annotate(f"{total:.1f} us", (total, i), xytext=(3, -8), textcoords="offset points",
                    fontsize=8, color="#444")  # fmt: skip
        if total + high[i] > edge:  # a cut whisker says where it ends
            ax.annotate(f"max {total + high[i]:.0f} us \u25b8", (edge, i), xytext=(-2, 2),
                        textcoords="offset points", ha="right", fontsize=7, color="#555")  # fmt: skip
    # The role tells apart one name in two modules (`extern_kernels.mm`, forward and backward).
    labels = [f"{k.compile_id} {_ROLE.get(k.role, k.role)} {k.kernel}" for k in kernels]
    ax.set_yticks(range(len(kernels)), [label_text(label) for label in labels])
    ax.invert_yaxis()
    ax.set_xlabel("microseconds per step" if in_steps else "microseconds per run")
    return fig


def memory_chart(capture: Capture, top: int = 20) -> Figure | None:
    """Bytes saved for backward, per tensor (the largest), and measured peak memory of one run,
    eager vs compiled, where timings were taken."""
    saved = [(str(c.id), s) for c in capture if c.partition for s in c.partition.saved if s.nbytes]
    saved.sort(key=lambda item: item[1].nbytes or 0, reverse=True)  # all nonzero: see above
    saved = saved[:top]
    peaks = [
        g
        for g in (capture.timings.graphs if capture.timings else ())
        if g.eager_peak_bytes is not None and g.compiled_peak_bytes is not None
    ]
    if not saved and not peaks:
        return None
    total = sum(s.nbytes or 0 for c in capture if c.partition for s in c.partition.saved)
    fig = ShownFigure(figsize=(9, 1.2 + 0.24 * (len(saved) + 2 * len(peaks))), dpi=100,
                 layout="constrained")  # fmt: skip
    FigureCanvasAgg(fig)
    axes = fig.subplots(
        2 if saved and peaks else 1, 1, squeeze=False,
        height_ratios=[max(len(saved), 2), max(2 * len(peaks), 2)] if saved and peaks else None,
    )[:, 0]  # fmt: skip
    if saved:
        ax = axes[0]
        ax.set_title(f"saved for backward: {human_bytes(total)} in all (largest tensors)",
                     loc="left", fontsize=11)  # fmt: skip
        unit, scale = byte_scale(max(s.nbytes or 0 for _, s in saved))
        ax.barh(range(len(saved)), [(s.nbytes or 0) / scale for _, s in saved], color=_PURPLE)
        ax.set_yticks(range(len(saved)),
                      [label_text(f"{cid} {s.name} {s.type_text}") for cid, s in saved])  # fmt: skip
        ax.invert_yaxis()
        ax.set_xlabel(unit)
    if peaks:
        ax = axes[-1]
        ax.set_title("peak memory of one run (measured)", loc="left", fontsize=11)
        unit, scale = byte_scale(
            max(max(g.eager_peak_bytes or 0, g.compiled_peak_bytes or 0) for g in peaks)
        )
        for i, g in enumerate(peaks):  # both peaks are set: see above
            ax.barh(2 * i, (g.eager_peak_bytes or 0) / scale, color=_GREY)
            ax.barh(2 * i + 1, (g.compiled_peak_bytes or 0) / scale, color=_BLUE)
        ax.set_yticks(range(2 * len(peaks)),
                      [label_text(f"{g.compile_id} {w}") for g in peaks for w in ("eager", "compiled")])  # fmt: skip
        ax.invert_yaxis()
        ax.set_xlabel(unit)
    for ax in axes:
        ax.spines[["top", "right"]].set_visible(False)
        ax.tick_params(labelsize=9)
    return fig


def sweep_figure(sweep: BudgetSweep, title: str = "") -> Figure:
    """Activation memory (x) against recomputation (y: FLOPs where torch counts them, else ops)
    for min-cut at each budget, the default partitioner beside it, the captured choice ringed.

    Returns a matplotlib Figure (not shown, not attached to pyplot's state), so it can be
    restyled and saved: `sweep_figure(c.budget_sweep()).savefig("sweep.png")`.
    """
    points = sweep.points
    if not points:  # no partition to draw: a figure that says so (it still saves and shows)
        figure = ShownFigure(figsize=(6.4, 1.2), layout="constrained")
        FigureCanvasAgg(figure)
        figure.text(0.02, 0.5, label_text(f"{title or 'activation memory budget sweep'}: "
                    "no partitions to draw", 120), fontsize=10, va="center")  # fmt: skip
        return figure
    by_flops = all(p["recompute_flops"] is not None for p in points)
    y_of: Callable[[dict[str, Any]], float] = (
        (lambda p: p["recompute_flops"] / 1e6) if by_flops else (lambda p: p["recomputed_ops"])
    )
    figure = ShownFigure(figsize=(6.4, 3.6), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    unit, scale = byte_scale(max(p["activation_bytes"] for p in points))
    min_cut = [p for p in points if p["partitioner"] == "min_cut"]
    axes.plot(
        [p["activation_bytes"] / scale for p in min_cut],
        [y_of(p) for p in min_cut],
        "o-",
        color="#6366f1",
        label="min-cut, by activation memory budget",
    )
    for (x, y), budgets in _same_place(min_cut, scale, y_of):
        axes.annotate(
            f"{budgets[0]:g}" if len(budgets) == 1 else f"{budgets[0]:g}-{budgets[-1]:g}",
            (x, y),
            textcoords="offset points",
            xytext=(4, 4),
            fontsize=8,
            color="#4b5563",
        )
    for p in points:
        if p["partitioner"] == "default":
            axes.plot(p["activation_bytes"] / scale, y_of(p), "s", color="#f59e0b", label="default")
        if p["captured"]:
            axes.plot(
                p["activation_bytes"] / scale,
                y_of(p),
                "o",
                markersize=14,
                markerfacecolor="none",
                markeredgecolor="#dc2626",
                label="what the compile did",
            )
    axes.set_xlabel(f"activation memory ({unit})")
    # torch's FLOP formulas cover matmuls, convolutions and attention, not elementwise ops.
    axes.set_ylabel("recomputed MFLOP (matmul, conv)" if by_flops else "recomputed ops")
    axes.set_title(title or "activation memory budget sweep", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="best")
    return figure


def _same_place(
    points: list[dict[str, Any]], scale: float, y_of: Callable[[dict[str, Any]], float]
) -> list[tuple[tuple[float, float], list[float]]]:
    """Points that land on the same spot, with their budgets (one label, not ten on top)."""
    places: dict[tuple[float, float], list[float]] = {}
    for p in points:
        places.setdefault((p["activation_bytes"] / scale, y_of(p)), []).append(p["budget"])
    return list(places.items())


def svg(fig: Figure | None) -> str:
    """The figure as inline SVG markup ("" for None): text as escaped <text>, no script."""
    if fig is None:
        return ""
    out = io.StringIO()
    # Text stays text (smaller, selectable), escaped by matplotlib's XML writer; no date, and a
    # fixed hash salt, so the same capture gives the same bytes.
    # A figure laid out to place its labels (figure_base.lay_out) keeps that layout: running
    # constrained layout again costs as much as the rest of the picture and moves nothing.
    engine = fig.get_layout_engine()
    frozen = getattr(fig, "laid_out", False) and engine is not None
    if frozen:
        fig.set_layout_engine("none")
    try:
        with rc_context({"svg.fonttype": "none", "svg.hashsalt": "compilescope"}):
            fig.savefig(out, format="svg", metadata={"Date": None})
    finally:
        if frozen:
            fig.set_layout_engine(engine)
    text = out.getvalue()
    text = text[text.index("<svg") :]  # no XML declaration or doctype inside HTML
    # A point's full name as its <title>: the browser shows it on hover, no script needed.
    for gid, title in getattr(fig, "hover", {}).items():
        text = text.replace(f'<g id="{gid}">', f'<g id="{gid}"><title>{escape(title)}</title>', 1)
    return text.replace("<svg ", "<svg class='cs-figure' style='max-width:100%;height:auto' ", 1)


def roofline(capture: Capture) -> Figure | None:
    """The timed kernels under the device's measured roofs (views/charts/roofline.py draws it)."""
    from .roofline import roofline_figure

    return roofline_figure(capture)


def charts(capture: Capture) -> dict[str, str]:
    """The view's charts as SVG: stages, kernel times, roofline, memory."""
    from .roofline import roofline_key

    pictured = svg(roofline(capture))
    return {
        "stages": svg(stage_waterfall(capture)),
        "timings": svg(kernel_ranking(capture)),
        # The names its labels leave off, in a table under it (on hover too).
        "roofline": pictured + roofline_key(capture) if pictured else "",
        "memory": svg(memory_chart(capture)),
    }
