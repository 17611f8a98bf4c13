"""The standalone offline HTML report: the interactive view inlined, the script-free one beside it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from html import escape
from pathlib import Path
from typing import Any

from ...model.capture import Capture
from ...model.findings.parts import Finding
from ...model.findings.ranked import findings
from ..result_view import add_view_parts, fallback_html
from ..static_files import static_text
from ..view_data import capture_data
from .shared_drawing import SharedDrawing


def report_parts(
    capture: Capture,
    title: str = "compilescope report",
    before: Capture | None = None,
    found: tuple[Finding, ...] | Callable[[], tuple[Finding, ...]] | None = None,
    script: str | None = None,
    head: str = "",
    shared: bool = False,
) -> Iterator[str]:
    """The report page in pieces, to write one after another (no copy of the whole page).
    `script`: where the page loads the view's bundle from (a file beside it, as a classic
    script: Chromium refuses module scripts from file:// pages); None inlines it.
    `head`: HTML put above the view (the way back to a report's index). `found`: the
    findings, or what makes them (called once the graphs are being made). `shared`: the
    graphs' payloads are made with a forked helper (views/offline/shared_drawing.py; only where this
    process is the command: a forked kernel is unsafe), while this process makes the rest;
    the page is the same."""
    if shared:
        data = capture_data(
            capture, before=before, graphs_by=lambda jobs: SharedDrawing(jobs).start()
        )
    else:
        data = capture_data(capture, before=before)
    if callable(found):
        found = found()
    elif found is None:
        found = findings(capture)
    add_view_parts(data, capture, found)
    yield (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{static_text('compilescope.css')}</style></head>"
        f"<body class='cs-report'>{head}<div id='cs-app'></div><noscript>"
    )
    # Brief for readers without scripts (a browser runs the view): graph pictures, texts and
    # kernels were a third of a GPT-2 report's bytes, and all of them are in the view's data.
    yield fallback_html(capture, data, found, brief=True)
    yield "</noscript><script type='application/json' id='cs-data'>"
    # JSON inside <script>: no "<" at all, so "</script>" and "<!--" cannot end or bend it.
    # check_circular off: the data has no cycles (the check costs; shared parts are fine).
    for piece in _data_json(data):
        yield piece.replace("<", "\\u003c")
    if script is None:
        # static/entry_report.js, bundled: draws into #cs-app from #cs-data (offline, no imports).
        yield f"</script><script type='module'>{static_text('dist/report.js')}</script>"
    else:
        yield f"</script><script src='{escape(script)}'></script>"
    yield "</body></html>"


def _data_json(data: dict[str, Any]) -> Iterator[str]:
    """`data` as JSON, no spaces, in pieces. With "graphs" being made (a SharedDrawing), the
    rest is made first, then the graphs' texts are put in their place, one piece each (no copy
    of them joined): the same bytes as dumping it whole (a dict is its keys and values, in
    order, joined by "," inside braces; a list its items)."""
    graphs = data.get("graphs")
    if not isinstance(graphs, SharedDrawing):
        yield json.dumps(data, separators=(",", ":"), check_circular=False)
        return
    parts = {
        key: json.dumps(value, separators=(",", ":"), check_circular=False)
        for key, value in data.items()
        if key != "graphs"
    }
    texts = graphs.texts()  # this process makes its share of them now
    for number, key in enumerate(data):
        yield ("{" if number == 0 else ",") + json.dumps(key) + ":"
        if key == "graphs":
            yield "["
            yield from (text if i == 0 else "," + text for i, text in enumerate(texts))
            yield "]"
        else:
            yield parts.pop(key)  # written, then let go
    yield "}"


def report_html(
    capture: Capture,
    title: str = "compilescope report",
    before: Capture | None = None,
    found: tuple[Finding, ...] | None = None,
) -> str:
    """One offline HTML file: the interactive view inlined, the script-free view for no-JS readers."""
    return "".join(report_parts(capture, title, before, found))


def write_report(
    capture: Capture,
    path: str | Path,
    before: Capture | None = None,
    found: tuple[Finding, ...] | Callable[[], tuple[Finding, ...]] | None = None,
    shared: bool = False,
) -> Path:
    """Write `report_html` to `path` (UTF-8), piece by piece; returns the path. `shared`: see
    `report_parts`."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as out:
        for part in report_parts(capture, before=before, found=found, shared=shared):
            out.write(part)
    return path


def to_html(
    capture: Capture,
    path: str | Path,
    before: Capture | None = None,
    found: tuple[Finding, ...] | None = None,
) -> str:
    """Write one standalone, offline HTML report (the interactive view inlined); returns path.
    With `before`, the report also holds the diff from that capture to this one."""
    return str(write_report(capture, path, before, found))
