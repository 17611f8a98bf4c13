"""A small roofline picture of the timed kernels (matplotlib): FLOP/s against arithmetic intensity
under the device's measured roofs, and achieved bandwidth against each kernel's share of the step."""

from __future__ import annotations

from ..model.capture import Capture
from ..model.kernel_table import kernel_rows


def roofline_data(capture: Capture, top: int = 30) -> dict:
    """What the picture draws: the measured peaks and, per kernel (the `top` slowest per step),
    its arithmetic intensity (FLOPs per byte, where the FLOPs are known), FLOP/s, bandwidth and
    share of the step."""
    t = capture.timings
    points = []
    for r in kernel_rows(capture)[:top]:
        intensity = r["flops"] / r["bytes"] if r["flops"] and r["bytes"] else None
        points.append(
            {
                "kernel": r["kernel"],
                "label": f"{r['compile_id']} {r['role']} {r['kernel']}",
                "module": r["module"],
                "intensity": intensity,
                "flops_per_s": r["flops_per_s"],
                "bytes_per_s": r["bytes_per_s"],
                "share": r["share"],
            }
        )
    return {
        "device": t.device if t else "",
        "peak_bytes_per_s": t.peak_bytes_per_s if t else None,
        "peak_flops": t.peak_flops if t else None,
        "points": points,
    }


def roofline_figure(capture: Capture, top: int = 30):
    """The roofline (left: kernels whose FLOPs are known) and bandwidth against share of the
    step (right: every timed kernel); a matplotlib Figure, or None when nothing was timed."""
    data = roofline_data(capture, top)
    if not data["points"]:
        return None
    # No pyplot (no global state, no GUI backend); a Figure that shows itself in a notebook.
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from .figure_base import ShownFigure, label_text

    fig = ShownFigure(figsize=(10, 4), layout="constrained")
    FigureCanvasAgg(fig)
    roof, band = fig.subplots(1, 2)
    bw, peak = data["peak_bytes_per_s"], data["peak_flops"]
    computed = [p for p in data["points"] if p["intensity"] and p["flops_per_s"]]
    if bw and peak:
        ridge = peak / bw
        xs = [ridge / 1000, ridge, ridge * 1000]
        roof.plot(xs, [min(peak, x * bw) for x in xs], color="#444", lw=1)
        roof.annotate(f"{peak / 1e12:.2f} TFLOP/s", (ridge * 30, peak), fontsize=8, va="bottom")
        roof.annotate(f"{bw / 1e9:.0f} GB/s", (ridge / 900, ridge / 1000 * bw), fontsize=8)
    for p in computed:
        roof.scatter(p["intensity"], p["flops_per_s"], s=20 + 400 * (p["share"] or 0), alpha=0.7)
        roof.annotate(label_text(p["kernel"], 28), (p["intensity"], p["flops_per_s"]), fontsize=6)
    roof.set(xscale="log", yscale="log", xlabel="FLOPs per byte", ylabel="FLOP/s")
    roof.set_title(
        label_text(f"roofline on {data['device']} (kernels with known FLOPs)", 80), fontsize=9
    )
    shares = [(p["share"] or 0) * 100 for p in data["points"]]
    rates = [(p["bytes_per_s"] or 0) / 1e9 for p in data["points"]]
    band.scatter(shares, rates, s=18, color="#10b981")
    for p, x, y in zip(data["points"][:8], shares, rates, strict=False):
        band.annotate(label_text(p["kernel"], 28), (x, y), fontsize=6)
    if bw:
        band.axhline(bw / 1e9, color="#444", lw=1, ls="--")
        band.annotate("measured copy bandwidth", (0, bw / 1e9), fontsize=7, va="bottom")
    band.set(xlabel="share of the step (%)", ylabel="achieved GB/s")
    band.set_title("where the time goes: bandwidth by share of step", fontsize=9)
    return fig
