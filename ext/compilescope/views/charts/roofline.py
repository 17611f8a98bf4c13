"""A small roofline picture of the timed kernels (matplotlib): FLOP/s against arithmetic intensity
under the device's measured roofs, and achieved bandwidth against each kernel's share of the step.

Points are numbered as the kernel table ranks them (`#3`); their labels never overlap (the ones
that fit nowhere are left off), and every point's full name is on hover and in `roofline_key`."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from ...model.capture import Capture
from ...model.measured.kernel_table import kernel_rows

if TYPE_CHECKING:
    from .figure_base import ShownFigure


def roofline_data(capture: Capture, top: int = 30) -> dict[str, Any]:
    """What the picture draws: the measured peaks and, per kernel (the `top` slowest per step),
    its arithmetic intensity (FLOPs per byte, where the FLOPs are known), FLOP/s, bandwidth and
    share of the step."""
    t = capture.timings
    points = []
    for r in kernel_rows(capture)[:top]:
        intensity = r["flops"] / r["bytes"] if r["flops"] and r["bytes"] else None
        points.append(
            {
                "rank": r["rank"],
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


def roofline_figure(capture: Capture, top: int = 30) -> ShownFigure | None:
    """The roofline (left: kernels whose FLOPs are known) and bandwidth against share of the
    step (right: every timed kernel); a matplotlib Figure, or None when nothing was timed."""
    data = roofline_data(capture, top)
    if not data["points"]:
        return None
    # No pyplot (no global state, no GUI backend); a Figure that shows itself in a notebook.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.ticker import FuncFormatter, NullFormatter

    from .figure_base import ShownFigure, label_text, lay_out, place_labels, power_of_ten

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
    sizes = [20 + 400 * (p["share"] or 0) for p in computed]
    for p, size in zip(computed, sizes, strict=True):
        roof.scatter(p["intensity"], p["flops_per_s"], s=size, alpha=0.7, gid=_gid("roof", p))
        fig.hover[_gid("roof", p)] = _hover(p)
    roof.set(xscale="log", yscale="log", xlabel="FLOPs per byte", ylabel="FLOP/s")
    for axis in (roof.xaxis, roof.yaxis):
        axis.set_major_formatter(FuncFormatter(power_of_ten))
        axis.set_minor_formatter(NullFormatter())
    # Points within a decade or two (no roof drawn, a CPU): matplotlib would label the minor
    # ticks in 10^x form, overlapping; at least two decades around them get whole powers.
    for values, set_lim in (
        ([p["intensity"] for p in computed], roof.set_xlim),
        ([p["flops_per_s"] for p in computed], roof.set_ylim),
    ):
        if values and not (bw and peak) and max(values) / min(values) < 100:
            middle = (max(values) * min(values)) ** 0.5
            set_lim(middle / 10, middle * 10)
    roof.set_title(
        label_text(f"roofline on {data['device']} (kernels with known FLOPs)", 80), fontsize=9
    )
    shares = [(p["share"] or 0) * 100 for p in data["points"]]
    rates = [(p["bytes_per_s"] or 0) / 1e9 for p in data["points"]]
    band.scatter(shares, rates, s=18, color="#10b981")
    # One invisible mark per point over the visible ones, for its name on hover.
    for p, x, y in zip(data["points"], shares, rates, strict=True):
        band.scatter(x, y, s=36, alpha=0, gid=_gid("band", p))
        fig.hover[_gid("band", p)] = _hover(p)
    if bw:
        band.axhline(bw / 1e9, color="#444", lw=1, ls="--")
        band.annotate("measured copy bandwidth", (0, bw / 1e9), fontsize=7, va="bottom")
    band.set(xlabel="share of the step (%)", ylabel="achieved GB/s")
    band.set_title("where the time goes: bandwidth by share of step", fontsize=9)
    # Labels last, in the laid-out figure: the most costly kernels first, each by its rank in
    # the kernel table and a short name where one fits, else its rank alone, else nothing.
    lay_out(fig)
    place_labels(roof, [(p["intensity"], p["flops_per_s"], size**0.5 / 2, _texts(p))
                        for p, size in zip(computed, sizes, strict=True)])  # fmt: skip
    place_labels(band, [(x, y, 2.5, _texts(p))
                        for p, x, y in zip(data["points"], shares, rates, strict=True)])  # fmt: skip
    return fig


def _gid(axes: str, point: dict[str, Any]) -> str:
    return f"cs-{axes}-{point['rank']}"


def _texts(point: dict[str, Any]) -> list[str]:
    from .figure_base import label_text

    return [f"#{point['rank']} {label_text(point['kernel'], 24)}", f"#{point['rank']}"]


def _share(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


def _hover(point: dict[str, Any]) -> str:
    share = f", {point['share']:.1%} of the step" if point["share"] is not None else ""
    return f"#{point['rank']} {point['label']}{share}"


def roofline_key(capture: Capture, top: int = 30) -> str:
    """The roofline's points as an HTML table (#, kernel, module, share, rates): the names the
    picture leaves off, for readers without hover (the script-free fallback, an export)."""
    points = roofline_data(capture, top)["points"]
    if not points:
        return ""

    def rate(value: float | None, unit: str) -> str:
        if not value:
            return ""
        scale, prefix = (1e12, "T") if value >= 1e12 else (1e9, "G")
        return f"{value / scale:.1f} {prefix}{unit}/s"

    rows = "".join(
        f"<tr><td>#{p['rank']}</td><td>{escape(p['label'])}</td><td>{escape(p['module'])}</td>"
        f"<td>{_share(p['share'])}</td>"
        f"<td>{rate(p['bytes_per_s'], 'B')}</td><td>{rate(p['flops_per_s'], 'FLOP')}</td></tr>"
        for p in points
    )
    return (
        "<details class='cs-chart-key'><summary>the roofline's points by number</summary><table>"
        "<tr><th>#</th><th>kernel</th><th>module</th><th>share of step</th><th>bandwidth</th>"
        f"<th>FLOP/s</th></tr>{rows}</table></details>"
    )
