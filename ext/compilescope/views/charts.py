"""Charts as script-free SVG: compile stages as a waterfall, and the slowest kernels as bars."""

from __future__ import annotations

from html import escape

from ..model.capture import Capture

_BAR_H, _LEFT, _WIDTH = 16, 260, 760


def stage_waterfall(capture: Capture, max_rows: int = 40) -> str:
    """Each compile id's timed stages (torch's dynamo_timed events) on one time axis."""
    rows = []
    for c in capture:
        for s in c.stage_times:
            rows.append((str(c.id), s))
    if not rows:
        return ""
    rows = rows[:max_rows]
    start = min(s.start_us for _, s in rows)
    end = max(s.start_us + s.duration_us for _, s in rows)
    span = max(end - start, 1.0)
    scale = (_WIDTH - _LEFT - 70) / span
    height = len(rows) * (_BAR_H + 2) + 30
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' height='{height}' "
        "font-family='sans-serif' font-size='11' class='cs-waterfall'>"
        f"<text x='0' y='12' font-weight='bold'>compile stages (waterfall, {span / 1e6:.2f} s)</text>"
    ]
    for i, (cid, s) in enumerate(rows):
        y = 20 + i * (_BAR_H + 2)
        x = _LEFT + (s.start_us - start) * scale
        w = max(1.0, s.duration_us * scale)
        label = f"{cid} " + "\u00a0" * (2 * s.depth) + s.name
        out.append(
            f"<text x='0' y='{y + 12}'>{escape(label[:44])}</text>"
            f"<rect x='{x:.1f}' y='{y}' width='{w:.1f}' height='{_BAR_H}' fill='#6366f1' opacity='{0.9 - 0.15 * min(s.depth, 4):.2f}'>"
            f"<title>{escape(s.name)}: {s.duration_us / 1e3:.1f} ms</title></rect>"
            f"<text x='{x + w + 4:.1f}' y='{y + 12}' fill='#444'>{s.duration_us / 1e3:.1f} ms</text>"
        )
    out.append("</svg>")
    return "".join(out)


def kernel_bars(capture: Capture, top: int = 15) -> str:
    """The kernels that take the most time per run (median per call times calls per run)."""
    t = capture.timings
    if t is None or not t.kernels:
        return ""
    kernels = sorted(t.kernels, key=lambda k: k.time.median_s * k.calls_per_run, reverse=True)[:top]
    longest = max(k.time.median_s * k.calls_per_run for k in kernels) or 1.0
    scale = (_WIDTH - _LEFT - 90) / longest
    height = len(kernels) * (_BAR_H + 2) + 30
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' height='{height}' "
        "font-family='sans-serif' font-size='11' class='cs-kernel-bars'>"
        f"<text x='0' y='12' font-weight='bold'>slowest kernels on {escape(t.device)} (median per run)</text>"
    ]
    for i, k in enumerate(kernels):
        y = 20 + i * (_BAR_H + 2)
        total = k.time.median_s * k.calls_per_run
        w = max(1.0, total * scale)
        out.append(
            f"<text x='0' y='{y + 12}'>{escape((k.compile_id + ' ' + k.kernel)[:44])}</text>"
            f"<rect x='{_LEFT}' y='{y}' width='{w:.1f}' height='{_BAR_H}' fill='#10b981'>"
            f"<title>{escape(k.kernel)}: min {k.time.min_s * 1e6:.1f} us, max {k.time.max_s * 1e6:.1f} us, n={k.time.repeats}</title></rect>"
            f"<text x='{_LEFT + w + 4:.1f}' y='{y + 12}' fill='#444'>{total * 1e6:.1f} us</text>"
        )
    out.append("</svg>")
    return "".join(out)
