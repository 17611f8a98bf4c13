"""The budget sweep as a matplotlib figure: activation memory against what the backward recomputes."""

from __future__ import annotations

import io

from ..model.partition import BudgetSweep
from ..model.summary import human_bytes


def sweep_figure(sweep: BudgetSweep, title: str = ""):
    """Activation memory (x) against recomputation (y: FLOPs where torch counts them, else ops)
    for min-cut at each budget, the default partitioner beside it, the captured choice ringed.

    Returns a matplotlib Figure (not shown, not attached to pyplot's state), so it can be
    restyled and saved: `sweep_figure(c.budget_sweep()).savefig("sweep.png")`.
    """
    from matplotlib.figure import Figure

    points = sweep.points
    by_flops = all(p["recompute_flops"] is not None for p in points)
    y_of = (lambda p: p["recompute_flops"] / 1e6) if by_flops else (lambda p: p["recomputed_ops"])
    figure = Figure(figsize=(6.4, 3.6), layout="constrained")
    axes = figure.add_subplot()
    unit, scale = (
        ("MiB", 2**20)
        if max(p["activation_bytes"] for p in points) >= 2**20
        else (
            "KiB",
            1024,
        )
    )
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


def _same_place(points: list[dict], scale: float, y_of) -> list[tuple[tuple, list[float]]]:
    """Points that land on the same spot, with their budgets (one label, not ten on top)."""
    places: dict[tuple, list[float]] = {}
    for p in points:
        places.setdefault((p["activation_bytes"] / scale, y_of(p)), []).append(p["budget"])
    return list(places.items())


def sweep_svg(sweep: BudgetSweep, title: str = "") -> str:
    """The figure as inline SVG for the script-free fallback and the report (no script in it)."""
    buffer = io.StringIO()
    sweep_figure(sweep, title).savefig(buffer, format="svg")
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and doctype: it is inlined in HTML


def sweep_rows(sweep: BudgetSweep) -> list[list[str]]:
    """The sweep as table rows (partitioner, budget, activations, saved, recomputed, FLOPs)."""
    rows = []
    for p in sweep.points:
        flops = p["recompute_flops"]
        rows.append(
            [
                p["partitioner"] + (" (captured)" if p["captured"] else ""),
                f"{p['budget']:g}" if p["partitioner"] == "min_cut" else "",
                human_bytes(p["activation_bytes"]),
                str(p["saved"]),
                str(p["recomputed_ops"]),
                "" if flops is None else f"{flops / 1e6:.1f} M",
            ]
        )
    return rows
