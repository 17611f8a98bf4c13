"""Charts as plain SVG, drawn without matplotlib: what the report draws for a log (its import and
drawing cost more than the rest of a report); views/charts/figures.py draws the widget's."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from ...common import byte_scale, human_bytes
from ...model.capture import Capture
from ...model.compile import StageTime, compile_seconds

_BLUE, _PURPLE = "#6366f1", "#7c3aed"
_ROW, _LABEL_W, _BAR_W, _NOTE_W = 18, 300, 520, 110


@dataclass(frozen=True)
class StageRow:
    """One row of the compile-stage waterfall: a stage of one compile id, all its runs."""

    compile_id: str
    depth: int
    name: str
    runs: tuple[StageTime, ...]

    @property
    def label(self) -> str:
        many = f" x{len(self.runs)}" if len(self.runs) > 1 else ""
        return f"{self.compile_id} " + "  " * self.depth + self.name + many


def stage_rows(capture: Capture, max_rows: int = 30, max_depth: int = 2) -> list[StageRow]:
    """Each compile id's timed stages (torch's dynamo_timed events), down to `max_depth` levels
    of nesting (torch's individual passes are deeper), in time order.

    A stage run many times in one compile id (Inductor's autotuning of each kernel) is one row,
    "x16". Every compile id keeps its outermost rows; the deeper ones fill the rest of
    `max_rows`, longest first (cutting the list at `max_rows` left out a GPT-2 step's last ids).
    """
    groups: dict[tuple[int, str, int, str], list[StageTime]] = {}
    for i, c in enumerate(capture):
        for s in c.stage_times:
            if s.depth <= max_depth:
                groups.setdefault((i, str(c.id), s.depth, s.name), []).append(s)
    outer: dict[int, int] = {}
    for i, _, depth, _ in groups:
        outer[i] = min(outer.get(i, depth), depth)
    kept = [k for k in groups if k[2] == outer[k[0]]]
    deeper = [k for k in groups if k[2] > outer[k[0]]]
    deeper.sort(key=lambda k: -sum(s.duration_us for s in groups[k]))
    kept += deeper[: max(0, max_rows - len(kept))]
    kept.sort(key=lambda k: (k[0], min(s.start_us for s in groups[k]), k[2]))
    return [
        StageRow(cid, depth, name, tuple(groups[k])) for k in kept for _, cid, depth, name in [k]
    ]


def _cut(text: str, limit: int = 44) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _svg(title: str, rows: list[tuple[str, list[tuple[float, float]], str, str]], axis: str) -> str:
    """Horizontal bars: each row (label, [(start, length)] in 0..1 of the bar width, note,
    colour), a title and the axis's words. Every string escaped; no script."""
    height = 34 + _ROW * len(rows) + 22
    width = _LABEL_W + _BAR_W + _NOTE_W
    out = [
        f"<svg class='cs-figure cs-plain-chart' xmlns='http://www.w3.org/2000/svg' "
        f"viewBox='0 0 {width} {height}' width='{width}' height='{height}' "
        "style='max-width:100%;height:auto;font:11px sans-serif'>",
        f"<text x='4' y='16' style='font-size:13px'>{escape(title)}</text>",
    ]
    for i, (label, bars, note, colour) in enumerate(rows):
        y = 30 + i * _ROW
        out.append(
            f"<text x='{_LABEL_W - 6}' y='{y + 12}' text-anchor='end'><title>{escape(label)}"
            f"</title>{escape(_cut(label))}</text>"
        )
        end = 0.0
        for start, length in bars:
            x = _LABEL_W + start * _BAR_W
            out.append(
                f"<rect x='{x:.1f}' y='{y + 2}' width='{max(length * _BAR_W, 1):.1f}' "
                f"height='{_ROW - 5}' fill='{colour}'/>"
            )
            end = max(end, start + length)
        x = _LABEL_W + end * _BAR_W + 4
        out.append(f"<text x='{x:.1f}' y='{y + 12}' fill='#444'>{escape(note)}</text>")
    out.append(f"<text x='{_LABEL_W}' y='{height - 6}' fill='#444'>{escape(axis)}</text></svg>")
    return "".join(out)


def waterfall_title(capture: Capture, span_s: float) -> str:
    """The waterfall's title: the capture's compile time (the one figure) and the wall time
    its stages span (longer: the code runs between a forward's compile and its backward's)."""
    took = compile_seconds(capture.compiles)
    figure = f"compile time {took:.2f} s, " if took is not None else ""
    return f"compile stages ({figure}over {span_s:.2f} s of wall time)"


def stage_chart(capture: Capture) -> str:
    """The compile-stage waterfall as SVG ("" when no stage was timed)."""
    rows = stage_rows(capture)
    if not rows:
        return ""
    every = [s for r in rows for s in r.runs]
    start = min(s.start_us for s in every)
    span = max(s.start_us + s.duration_us for s in every) - start or 1
    drawn = []
    for r in rows:
        bars = [((s.start_us - start) / span, s.duration_us / span) for s in r.runs]
        total = sum(s.duration_us for s in r.runs) / 1e3
        note = f"{total:.1f} ms" + (f" in {len(r.runs)} runs" if len(r.runs) > 1 else "")
        drawn.append((r.label, bars, note, _BLUE))
    title = waterfall_title(capture, span / 1e6)
    return _svg(title, drawn, f"0 to {span / 1e3:.0f} ms since the first stage began")


def saved_chart(capture: Capture, top: int = 20) -> str:
    """Bytes saved for backward, per tensor (the largest), as SVG ("" when none)."""
    saved = [(str(c.id), s) for c in capture if c.partition for s in c.partition.saved if s.nbytes]
    if not saved:
        return ""
    saved.sort(key=lambda item: item[1].nbytes or 0, reverse=True)
    total = sum(s.nbytes or 0 for _, s in saved)
    largest = saved[0][1].nbytes or 1
    unit, scale = byte_scale(largest)
    drawn = [
        (f"{cid} {s.name} {s.type_text}", [(0.0, (s.nbytes or 0) / largest)],
         f"{(s.nbytes or 0) / scale:.1f} {unit}", _PURPLE)
        for cid, s in saved[:top]
    ]  # fmt: skip
    title = f"saved for backward: {human_bytes(total)} in all (largest tensors)"
    return _svg(title, drawn, unit)
