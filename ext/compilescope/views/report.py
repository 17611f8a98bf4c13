"""The standalone offline HTML report: the interactive view inlined, the script-free one beside it."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from ..model.capture import Capture
from ..model.finding import Finding
from .result_view import fallback_html, view_data


def report_html(
    capture: Capture,
    title: str = "compilescope report",
    before: Capture | None = None,
    found: tuple[Finding, ...] | None = None,
) -> str:
    """One offline HTML file: the interactive view inlined, the script-free view for no-JS readers."""
    from .widget import static_text

    data = view_data(capture, before, found)
    # JSON inside <script>: no "<" at all, so "</script>" and "<!--" cannot end or bend it.
    payload = json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{static_text('compilescope.css')}</style></head>"
        "<body class='cs-report'>"
        f"<div id='cs-app'></div><noscript>{fallback_html(capture, data, found)}</noscript>"
        f"<script type='application/json' id='cs-data'>{payload}</script>"
        # static/entry_report.js, bundled: draws into #cs-app from #cs-data (offline, no imports).
        f"<script type='module'>{static_text('dist/report.js')}</script></body></html>"
    )


def write_report(
    capture: Capture,
    path: str | Path,
    before: Capture | None = None,
    found: tuple[Finding, ...] | None = None,
) -> Path:
    """Write `report_html` to `path` (UTF-8); returns the path."""
    path = Path(path)
    path.write_text(report_html(capture, before=before, found=found), encoding="utf-8")
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
