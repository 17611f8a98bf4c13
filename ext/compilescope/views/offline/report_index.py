"""A big report's index page: script-free, so it opens at once at any size; each compile id's
page (the interactive view of that compile alone) sits beside it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from html import escape

from ...model.compile import Compile
from ...model.findings.parts import Finding
from ...model.ranks.report import ranks_text
from ..findings_view import findings_html
from ..static_files import static_text

PAGES = "compiles"  # the folder beside index.html that holds one page per compile id
BUNDLE = "report.js"  # the view's bundle, written once beside index.html for every page


@dataclass(frozen=True)
class CompileRow:
    """One compile id's line in the index, and its page."""

    compile_id: str
    rank: int | None
    frame: str
    status: str
    incomplete: str
    nodes: int
    kernels: int
    breaks: int
    compile_s: float | None
    page: str  # relative to index.html


def page_name(compile_id: str, taken: set[str]) -> str:
    """A file name for a compile id's page: `rank1:0/0_1` -> `compiles/rank1_0_0_1.html`."""
    stem = re.sub(r"[^0-9A-Za-z]+", "_", compile_id).strip("_") or "compile"
    name, n = stem, 1
    while name in taken:
        n += 1
        name = f"{stem}_{n}"
    taken.add(name)
    return f"{PAGES}/{name}.html"


def compile_row(c: Compile, page: str, cells: dict[str, int]) -> CompileRow:
    return CompileRow(
        compile_id=str(c.id),
        rank=c.id.rank,
        frame=c.frame.label(cells),
        status=c.status,
        incomplete=c.incomplete,
        nodes=sum(len(g.nodes) for g in c.graphs.get("dynamo_output_graph", ())),
        kernels=sum(len(o.kernels) for o in c.output_code),
        breaks=len(c.graph_breaks),
        compile_s=c.compile_time_s,
        page=page,
    )


def findings_blocks(found: tuple[Finding, ...]) -> list[str]:
    """Each finding as its own script-free block, so the same finding on many ranks is one."""
    return [findings_html((f,)) for f in found]


def back_link(title: str) -> str:
    """The line over a compile's page that leads back to the index."""
    return (
        "<div class='cs-index-back' style='font:13px system-ui,sans-serif;margin:4px 0'>"
        f"<a href='../index.html' data-index-link=''>&larr; index</a> \u00b7 {escape(title)}</div>"
    )


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.2f} s"


def _ranks(ranks: list[int | None]) -> str:
    """` (on rank 3)`, ` (on ranks 0-63)`: where a finding was found, when ranks were read."""
    named = sorted({r for r in ranks if r is not None})
    return f" (on {ranks_text(named)})" if named else ""


def index_html(
    title: str,
    head: str,
    ranks_block: str,
    findings: Iterable[tuple[str, list[int | None]]],
    rows: list[CompileRow],
    notes: list[str],
) -> str:
    """The index: what was read, the rank report, the findings (one block per distinct finding,
    with the ranks that have it) and a row per compile id linking to its page."""
    said = "".join(
        f"{block}<div class='cs-muted'>{escape(_ranks(r))}</div>" for block, r in findings
    )
    table = "".join(
        f"<tr data-compile='{escape(r.compile_id)}'><td><a href='{escape(r.page)}'>"
        f"{escape(r.compile_id)}</a></td><td>{escape(r.frame)}</td><td>{escape(r.status)}"
        f"{' (incomplete)' if r.incomplete else ''}</td><td class='cs-num'>{r.nodes}</td>"
        f"<td class='cs-num'>{r.kernels}</td><td class='cs-num'>{r.breaks}</td>"
        f"<td class='cs-num'>{_seconds(r.compile_s)}</td></tr>"
        for r in rows
    )
    notes_html = "".join(f"<p class='cs-muted'>{escape(n)}</p>" for n in notes)
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{static_text('compilescope.css')}</style></head>"
        "<body class='cs-report cs-index' style='font:13px system-ui,sans-serif;margin:12px'>"
        f"<h2>{escape(title)}</h2><p data-index-head=''>{escape(head)}</p>{notes_html}"
        f"{ranks_block}<h3>Findings</h3><div class='cs-index-findings'>{said}</div>"
        f"<h3>Compile ids ({len(rows)})</h3><p class='cs-muted'>each opens its own page: graphs, "
        "kernels, code, guards (offline; the pages sit in the folder beside this one)</p>"
        "<table class='cs-table' data-index-compiles=''><tr><th>compile id</th><th>frame</th>"
        "<th>status</th><th>Dynamo nodes</th><th>kernels</th><th>graph breaks</th>"
        f"<th>compile time</th></tr>{table}</table></body></html>"
    )
