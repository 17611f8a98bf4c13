"""A script-free HTML summary of a capture (the view until the explorer widget lands)."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ...common import SUMMARY_STAGES, human_bytes, milliseconds
from ...model.capture import Capture
from ...model.compile import Compile, compile_seconds
from ...model.measured.compile_payback import compile_time_line
from ...model.place import Place, cell_label

if TYPE_CHECKING:
    # Measured times only (live captures): a log's report (issue 34) does not import them.
    from ...model.measured.timing import Sample

_STYLE = (
    "<style>.cs-sum{font-family:system-ui,sans-serif;font-size:13px}"
    ".cs-sum table{border-collapse:collapse}.cs-sum td,.cs-sum th{padding:2px 8px;"
    "border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
    ".cs-sum pre{max-height:24em;overflow:auto;background:#f6f6f6;padding:6px;font-size:12px}"
    ".cs-warn{color:#a00;font-weight:600}.cs-sum math{math-style:normal;font-size:16px}"
    ".cs-sum .cs-empty,.cs-sum .cs-note{background:#f6f6f6;padding:6px 10px}</style>"
)


def devices(capture: Capture) -> str:
    """Where the compiled code ran, as the graphs and kernels say: 'cpu (C++ kernels)'."""
    found: dict[str, None] = {}
    for c in capture:
        graph = c.graph("dynamo_output_graph")
        for node in graph.placeholders if graph else ():
            for t in node.tensors:
                found[t.device.split(":")[0]] = None
    languages = sorted({k.language for c in capture for k in c.kernels if k.language != "extern"})
    names = {"cpp": "C++", "triton": "Triton"}
    # Nothing compiled (code compiled before the capture began): where its steps were timed.
    timings = capture.timings
    timed = timings.real_steps.device if timings and timings.real_steps else ""
    where = ", ".join(found) or timed or "unknown device"
    return where + (
        f" ({', '.join(names.get(x, x) for x in languages)} kernels)" if languages else ""
    )


def nothing_compiled(capture: Capture) -> str:
    """What the views say in place of the compile ids of a capture that has none ("" when it
    has some): generic, as the capture's own note (where it has one) says why."""
    if capture.compiles:
        return ""
    text = (
        "no compile ids in this capture: nothing was compiled while it ran, so there are no "
        "graphs, kernels, guards or repros to show."
    )
    timings = capture.timings
    if timings and timings.real_steps:
        text += " Your steps were still timed as they ran (see the times)."
    return text


def _cell(c: Compile, cells: dict[str, int]) -> str:
    number = c.frame.place.cell_in(cells)
    return cell_label(number) if number is not None else c.frame.label(cells)


def folded_restarts(capture: Capture) -> list[tuple[Compile, list[Compile]]]:
    """One row per compile id as the user thinks of it: `0/0` and its restart `0/0_1` fold into
    the last attempt, with the earlier ones beside it (the widget's compile table does the same)."""
    rows: list[tuple[Compile, list[Compile]]] = []
    index: dict[str, int] = {}
    for c in capture:
        base = str(c.id).rsplit("_", 1)[0] if c.id.attempt else str(c.id)
        if c.id.attempt and base in index:
            last, earlier = rows[index[base]]
            rows[index[base]] = (c, [*earlier, last])
        else:
            index[base] = len(rows)
            rows.append((c, []))
    return rows


def _row(c: Compile, files: dict[str, int], earlier: list[Compile] | None = None) -> str:
    stages = ", ".join(
        f"{label} {sum(g.op_count for g in c.graphs[kind])}"
        for kind, label in ((s.kind, s.label) for s in SUMMARY_STAGES)
        if c.graphs.get(kind)
    )
    partition = c.partition
    saved = (
        f"{human_bytes(partition.activation_bytes)} ({human_bytes(partition.saved_bytes)} saved)"
        if partition and partition.saved
        else ""
    )
    earlier = earlier or []
    # The frame's time, counted once (torch logs it under one of its attempts).
    time_s = compile_seconds([*earlier, c])
    times = [time_s] if time_s is not None else []
    time = f"{sum(times):.2f} s" if times else ""
    status = f"{c.status}; INCOMPLETE: {c.incomplete}" if c.incomplete else c.status
    ident = str(c.id) + (f" \u21bb {', '.join(str(e.id) for e in earlier)}" if earlier else "")
    cells = [ident, _cell(c, files), stages, str(len(c.kernels) or ""), saved, time, status]
    return "<tr>" + "".join(f"<td>{escape(x)}</td>" for x in cells) + "</tr>"


def _at(loc: Place | None, cells: dict[str, int]) -> str:
    if loc is None:
        return ""
    if loc.cell_in(cells) is not None:
        return f" at {loc.label(cells)}"
    return f" at line {loc.line} of {loc.file}"


def _details(c: Compile, cells: dict[str, int]) -> str:
    parts = []
    for brk in c.graph_breaks:
        at = _at(brk.location, cells)
        parts.append(
            f"<p class='cs-warn'>graph break{escape(at)}</p><pre>{escape(brk.reason)}</pre>"
        )
    for fb in c.fallbacks:  # not a break: code Dynamo left to eager (model/breaks.py)
        at = _at(fb.location, cells)
        parts.append(f"<p class='cs-warn'>{escape(fb.what + at)}</p><pre>{escape(fb.reason)}</pre>")
    for reason in c.recompile_reasons:
        parts.append(f"<p>recompiled: <code>{escape(reason)}</code></p>")
    if c.failure:
        parts.append(f"<p class='cs-warn'>failed</p><pre>{escape(c.failure)}</pre>")
    for stage in SUMMARY_STAGES:
        kind, label = stage.kind, stage.label.removesuffix(" graph")
        for graph in c.graphs.get(kind, ()):
            parts.append(
                f"<details><summary>{escape(label)} graph ({len(graph.nodes)} nodes)</summary><pre>{escape(graph.text)}</pre></details>"
            )
    for code in c.output_code:
        for k in code.kernels:
            if k.source:
                lines = ", ".join(str(loc.line) for loc in k.source_lines[:5])
                head = f"{k.language} kernel {k.name}" + (f" (lines {lines})" if lines else "")
                parts.append(
                    f"<details><summary>{escape(head)}</summary><pre>{escape(k.source)}</pre></details>"
                )
    if c.symbols or c.shape_guards:
        from ..math import math_html  # sympy: imported only for a compile with symbolic shapes

        rows = "".join(
            f"<tr><td>{math_html(s.name)}</td><td>{escape(s.source)}</td><td>{escape(s.value)}</td>"
            f"<td>{escape(s.range)}</td></tr>"
            for s in c.symbols
        )
        guards = "".join(
            f"<li title='{escape(g.expr)}'>{math_html(g.expr)}</li>" for g in c.shape_guards
        )
        parts.append(
            "<details open><summary>symbolic shapes and guards</summary>"
            + (
                f"<table><tr><th>symbol</th><th>source</th><th>value</th><th>range</th></tr>{rows}</table>"
                if rows
                else ""
            )
            + (f"<ul class='cs-guards'>{guards}</ul>" if guards else "")
            + "</details>"
        )
    if c.guards:
        parts.append(f"<details><summary>guards</summary><pre>{escape(c.guards)}</pre></details>")
    if not parts:
        return ""
    return f"<details><summary>{escape(str(c.id))} details</summary>{''.join(parts)}</details>"


def _spread(sample: Sample) -> str:
    return f"{milliseconds(sample.median_s)} (min {milliseconds(sample.min_s)}, max {milliseconds(sample.max_s)}, n={sample.repeats})"


def timings_html(capture: Capture) -> str:
    """Per graph: forward and backward, eager vs compiled, and their sum; then the kernels
    ranked by time per step, with module, line, share of the step and achieved throughput."""
    t = capture.timings
    if t is None:
        if capture.source != "live":  # a log or a saved capture never ran anything
            return "<p>Times: none in a log (times come from a live capture: %%compile_fx, capture()).</p>"
        return "<p>Times: not measured (timings were turned off: --no-time / timings=False).</p>"
    real = _real_steps_html(capture)
    if not t.graphs:  # no graph re-run alone: no empty table of them
        return real + kernel_rows_html(capture)
    rows = []
    for g in t.graphs:
        if g.compiled is None or g.eager is None:  # a saved capture may lack either
            rows.append(
                f"<tr><td>{escape(g.compile_id)}</td><td colspan='7'>not measured: {escape(g.note)}</td></tr>"
            )
            continue
        gap = t.gap_text(g.compile_id, g.compiled.median_s)
        speed = f"{g.speedup:.2f}x" if g.speedup else ""
        back = (
            f"{milliseconds(g.eager_backward.median_s)} / {milliseconds(g.compiled_backward.median_s)}"
            + (f" ({g.backward_speedup:.2f}x)" if g.backward_speedup else "")
            if g.eager_backward and g.compiled_backward
            else "no backward"
        )
        # Both floats: eager and compiled are set (checked above).
        step = f"{milliseconds(g.step_s('eager') or 0.0)} / {milliseconds(g.step_s() or 0.0)}"
        peaks = (
            f"{human_bytes(g.eager_peak_bytes)} / {human_bytes(g.compiled_peak_bytes)}"
            if g.eager_peak_bytes is not None and g.compiled_peak_bytes is not None
            else "not measured"
        )
        rows.append(
            f"<tr><td>{escape(g.compile_id)}</td><td>{escape(_spread(g.eager))}</td>"
            f"<td>{escape(_spread(g.compiled))}</td><td>{escape(speed)}</td>"
            f"<td>{escape(back)}</td><td>{escape(step)}</td><td>{escape(gap)}</td>"
            f"<td>{escape(peaks)}</td></tr>"
        )
    what = "".join(f"<li>{escape(g.what)}</li>" for g in t.graphs)
    return (
        f"<p><b>Times on {escape(t.device)}</b> (median, spread, repeats)</p><table><tr><th>compile id</th>"
        "<th>forward eager</th><th>forward compiled</th><th>speedup</th>"
        "<th>backward eager / compiled</th><th>step (fwd + bwd) eager / compiled</th>"
        "<th>forward kernels vs the rest</th><th>peak memory, eager / compiled</th></tr>"
        f"{''.join(rows)}</table>"
        + real
        + kernel_rows_html(capture)
        + f"<details><summary>what was timed</summary><ul>{what}</ul></details>"
    )


def _real_steps_html(capture: Capture) -> str:
    """The user's own steps as they ran (the text summary's lines), or why none were timed."""
    from ...model.summary import real_steps_lines

    t = capture.timings
    if t is None:
        return ""
    if t.real_steps is not None:
        lines = "\n".join(line.strip() for line in real_steps_lines(t.real_steps))
        return (
            f"<p><b>Your steps as they ran</b></p><pre class='cs-real-steps'>{escape(lines)}</pre>"
        )
    if t.real_steps_note:
        return f"<p>Your steps as they ran: not timed ({escape(t.real_steps_note)}).</p>"
    return ""


def _share(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


def _rate(value: float | None, unit: str, of_peak: float | None) -> str:
    if not value:
        return ""
    scale, prefix = (1e12, "T") if value >= 1e12 else (1e9, "G")  # 706.6 TFLOP/s, not 706575.8 G
    text = f"{value / scale:.1f} {prefix}{unit}/s"
    return text + (f" ({of_peak:.0%} of peak)" if of_peak else "")


def kernel_rows_html(capture: Capture, top: int = 15) -> str:
    """The kernels that cost most per step: where the time goes, at a glance."""
    from ...model.measured.kernel_table import kernel_rows

    rows = kernel_rows(capture)[:top]
    if not rows:
        return ""
    body = "".join(
        f"<tr><td>{r['rank']}</td><td>{escape(r['compile_id'])} {escape(r['role'])}</td>"
        f"<td>{escape(r['kernel'])}</td><td>{r['per_step_s'] * 1e3:.3f} ms</td>"
        f"<td>{_share(r['share'])}</td>"
        f"<td>{escape(r['module'])}</td><td>{escape(r['line'])}</td>"
        f"<td>{escape(_rate(r['bytes_per_s'], 'B', r['of_peak_bandwidth']))}</td>"
        f"<td>{escape(_rate(r['flops_per_s'], 'FLOP', r['of_peak_flops']))}</td></tr>"
        for r in rows
    )
    return (
        "<table class='cs-kernel-rank'><tr><th>#</th><th>compile id</th><th>kernel</th>"
        "<th>per step</th><th>share of step</th><th>module</th><th>line</th>"
        "<th>bandwidth</th><th>FLOP/s</th></tr>"
        f"{body}</table>"
    )


def capture_html(capture: Capture, details: bool = True) -> str:
    """The capture as one HTML fragment; every string from the capture is escaped. Without
    `details`, no compile's graphs, kernels and guards (the table of compile ids only)."""
    head = f"{len(capture.compiles)} compile ids on {devices(capture)}"
    if capture.torch_version:
        head += f", torch {capture.torch_version}"
    rows = "".join(_row(c, capture.cells, earlier) for c, earlier in folded_restarts(capture))
    note = capture.note  # why nothing compiled, say (the live capture's own words)
    note_html = f"<p class='cs-note' data-capture-note=''>{escape(note)}</p>" if note else ""
    if line := compile_time_line(capture):
        note_html += f"<p class='cs-muted' data-compile-time=''>{escape(line)}</p>"
    partial = (
        f"<p class='cs-warn'>PARTIAL: {escape(capture.partial)}; what compiled before is shown</p>"
        if capture.partial
        else ""
    )
    header = "".join(
        f"<th>{h}</th>"
        for h in (
            "compile id",
            "frame",
            "ops per stage",
            "kernels",
            "activations for bwd",
            "compile time",
            "status",
        )
    )
    # No compile ids: a plain sentence in place of a table with a head and no rows.
    empty = nothing_compiled(capture)
    compiles = (
        f"<p class='cs-empty' data-no-compiles=''>{escape(empty)}</p>"
        if empty
        else f"<table><tr>{header}</tr>{rows}</table>"
    )
    said = "".join(
        f"<div><b>{escape(m.compile_id)}</b> <small>{escape(m.origin)} {escape(m.where)}"
        f"{f' ({m.count} times)' if m.count > 1 else ''}</small><pre>{escape(m.message)}</pre></div>"
        for m in capture.messages
    )
    if said:
        said = f"<details open class='cs-said'><summary>torch said</summary>{said}</details>"
    return (
        f"{_STYLE}<div class='cs-sum'><b>compilescope</b>: {escape(head)}{partial}{note_html}"
        f"{said}{compiles}"
        f"{timings_html(capture) if capture.timings else ''}"
        f"{''.join(_details(c, capture.cells) for c in capture) if details else ''}</div>"
    )


class CaptureView:
    """What the magic displays: HTML where a front end renders it, the text summary elsewhere."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture

    def _repr_html_(self) -> str:
        return capture_html(self.capture)

    def __repr__(self) -> str:
        return self.capture.summary() + f"\nran on {devices(self.capture)}"
