"""The rank report as script-free HTML: groups of ranks, aspects, where groups part, gaps."""

from __future__ import annotations

from html import escape

from ...model.ranks.records import ASPECTS
from ...model.ranks.report import RankReport, collective_lines, profile_line, ranks_text

_STYLE = (
    "<style>.cs-ranks{font-family:system-ui,sans-serif;font-size:13px}"
    ".cs-ranks table{border-collapse:collapse;margin:4px 0}.cs-ranks td,.cs-ranks th{padding:2px 8px;"
    "border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
    ".cs-ranks .cs-warn{color:#a00;font-weight:600}.cs-ranks .cs-ok{color:#070;font-weight:600}"
    ".cs-ranks .cs-gap{color:#9a5b00;font-weight:600}"
    ".cs-ranks code{font-size:12px}</style>"
)


def ranks_html(report: RankReport) -> str:
    """One block: verdict, a row per group, a row per aspect, each group's first parting, and
    the ranks whose records are incomplete (compared only as far as they go)."""
    parts = [_STYLE, "<div class='cs-ranks'>"]
    if report.status == "one rank":
        parts.append("<p>fewer than two ranks in this capture: nothing to compare</p></div>")
        return "".join(parts)
    if report.diverged:
        verdict = f"<span class='cs-warn'>ranks diverge: {len(report.groups)} groups</span>"
    elif report.incomplete:
        verdict = (
            "<span class='cs-gap'>incomplete: the ranks agree as far as their records go</span>"
        )
    else:
        verdict = f"<span class='cs-ok'>all {len(report.ranks)} ranks agree</span>"
    if report.gaps:
        verdict += (
            f" <span class='cs-gap'>{escape(ranks_text([g.rank for g in report.gaps]))}: "
            "incomplete record (see below); nothing past where a record ends is compared</span>"
        )
    parts.append(f"<p class='cs-rank-verdict' data-status='{report.status}'>{verdict}</p>")
    rows = "".join(
        f"<tr><td>{escape(ranks_text(g))}</td><td>{escape(profile_line(report.profiles[g[0]]))}"
        "</td></tr>"
        for g in report.groups
    )
    parts.append(f"<table><tr><th>group</th><th>what it compiled</th></tr>{rows}</table>")
    for group in report.groups:
        schedule = collective_lines(report.profiles[group[0]], limit=50)
        if schedule:
            items = "".join(f"<li><code>{escape(line)}</code></li>" for line in schedule)
            parts.append(
                f"<details><summary>collectives of {escape(ranks_text(group))}, in graph order"
                f"</summary><ul>{items}</ul></details>"
            )
    rows = ""
    for aspect, label in ASPECTS:
        groups = report.aspect_groups.get(aspect, ())
        text = (
            "all agree" if len(groups) <= 1 else " | ".join(escape(ranks_text(g)) for g in groups)
        )
        cls = "" if len(groups) <= 1 else " class='cs-warn'"
        rows += f"<tr><td>{escape(label)}</td><td{cls}>{text}</td></tr>"
    parts.append(f"<table><tr><th>aspect</th><th>groups</th></tr>{rows}</table>")
    if report.divergences:
        items = "".join(
            f"<li><b>{escape(ranks_text(d.ranks))}</b> parts from {escape(ranks_text(d.reference))}"
            f" at compile <code>{escape(d.compile_id)}</code> ({escape(d.aspect)}): "
            f"{escape(d.detail)}</li>"
            for d in report.divergences
        )
        parts.append(f"<p>where they part:</p><ul>{items}</ul>")
    if report.gaps:
        items = "".join(f"<li>{escape(str(g))}</li>" for g in report.gaps)
        parts.append(f"<p>incomplete records:</p><ul class='cs-rank-gaps'>{items}</ul>")
    parts.append("</div>")
    return "".join(parts)
