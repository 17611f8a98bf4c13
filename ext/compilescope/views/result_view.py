"""What a capture looks like under a cell and in an nbconvert export (the report: views/offline/report.py)."""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from ..common import STAGES
from ..model.capture import Capture
from ..model.findings.parts import Finding
from ..model.findings.ranked import NONE_FOUND, findings, none_found
from ..model.graph import Graph
from .explorer.data import explorer_payload
from .explorer.static_graph import graph_svg
from .findings_view import findings_data, findings_html
from .offline.summary_html import capture_html
from .partition_view import partition_html
from .view_data import capture_data

if TYPE_CHECKING:
    from .widget import ExplorerWidget, ResultWidget

# Stages pictured in the script-free fallback (the explorer has them all).
_PICTURED = frozenset(s.kind for s in STAGES if s.pictured)


def view_data(
    capture: Capture, before: Capture | None = None, found: tuple[Finding, ...] | None = None
) -> dict[str, Any]:
    """Everything the widget and the report show. `found`: the capture's findings, when the
    caller made them with torch's graph-break registry (else made here from its messages)."""
    data = capture_data(capture, before=before)
    add_view_parts(data, capture, found if found is not None else findings(capture))
    return data


def add_view_parts(data: dict[str, Any], capture: Capture, found: tuple[Finding, ...]) -> None:
    """What `view_data` adds to `capture_data`: the findings, the charts, the rank report."""
    data["findings"] = findings_data(found)
    data["findings_none"] = none_found(capture)  # what the view says when there are none
    if capture.timings is None:  # a log: no times to chart, and no matplotlib to import
        from .charts.plain_charts import saved_chart, stage_chart

        data["charts"] = {"stages": stage_chart(capture), "timings": "", "roofline": "",
                          "memory": saved_chart(capture)}  # fmt: skip
    else:
        from .charts.figures import charts  # matplotlib: imported on first use

        data["charts"] = charts(capture)
    data["ranks_html"] = rank_report_html(capture)


def rank_report_html(capture: Capture) -> str:
    """The rank report (script-free, escaped) for a capture of several ranks; "" for one."""
    if not capture.several_ranks:
        return ""
    from .offline.ranks_html import ranks_html

    return ranks_html(capture.compare_ranks())


def fallback_html(
    capture: Capture,
    data: dict[str, Any],
    found: tuple[Finding, ...] | None = None,
    brief: bool = False,
) -> str:
    """Script-free HTML: the findings, the summary, SVG pictures of the main graphs, charts,
    highlighted code; `brief`: the findings, the table of compile ids and the rank report."""
    found = found if found is not None else findings(capture)
    none = data.get("findings_none", NONE_FOUND)
    parts = [
        findings_html(found, none),
        capture_html(capture, not brief),
        data.get("ranks_html", ""),
    ]
    if brief:
        return "<div class='cs-fallback'>" + "".join(parts) + "</div>"
    drawn = []
    for c in data["compiles"][:8]:
        for stage in c["stages"]:
            if stage["kind"] in _PICTURED:
                svg = graph_svg(data["graphs"][stage["graph"]])
                drawn.append(
                    f"<details><summary>{escape(c['id'])} {escape(stage['label'])} "
                    f"({stage['nodes']} nodes), picture</summary>{svg}</details>"
                )
    parts.append("".join(drawn))
    parts.append(partition_html(capture))
    for chart in data["charts"].values():
        if chart:
            parts.append(f"<div>{chart}</div>")
    if data.get("diff"):
        from .diff_view import diff_html  # the diff's model: imported only with a `before`

        parts.append(diff_html(data["diff"]))
    return "<div class='cs-fallback'>" + "".join(parts) + "</div>"


def result_view(
    capture: Capture,
    before: Capture | None = None,
    found: tuple[Finding, ...] | None = None,
    on_try: Callable[[int], dict[str, Any]] | None = None,
) -> ResultWidget | _Html:
    """The widget (with its HTML fallback) where anywidget is installed; else the HTML summary.
    `on_try(number)` tries finding `number`'s fix and returns `fix_trial_data` of the trial
    (given by the layer that can run code again: the magic, `compilescope.show`)."""
    found = found if found is not None else findings(capture)
    data = view_data(capture, before, found)
    fallback = fallback_html(capture, data, found)
    try:
        from .widget import ResultWidget
    except ImportError:  # anywidget missing: the script-free view still shows everything
        return _Html(fallback, f"{capture.summary()}\nran on {data['device']}")
    return ResultWidget(
        data, fallback, f"{capture.summary()}\nran on {data['device']}", on_try=on_try
    )


def explorer_view(graph: Graph, title: str = "") -> ExplorerWidget | _Html:
    """The graph explorer for one graph."""
    payload = explorer_payload(graph, title=title)
    fallback = graph_svg(payload)
    try:
        from .widget import ExplorerWidget
    except ImportError:
        return _Html(fallback, repr(graph))
    return ExplorerWidget(payload, fallback, repr(graph))


class _Html:
    def __init__(self, html: str, text: str) -> None:
        self.html, self.text = html, text

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text
