"""A diff of two captures as the view shows it: JSON for the widget, escaped HTML for no-script readers."""

from __future__ import annotations

from html import escape
from typing import Any

from ..common import STAGE_LABELS
from ..model.diff import CaptureDiff, GraphChange
from ..model.measured.speedup import StepSpeedup

# Enough to read; a diff longer than this is cut (and says so) so one big change cannot
# bloat the notebook.
MAX_NODES = 400
MAX_LINES = 600

_SIGNS = {"added": "+", "removed": "-", "changed": "~"}


def _changed_graphs(d: CaptureDiff) -> list[GraphChange]:
    return [g for g in d.graphs if g.nodes or g.nodes_before != g.nodes_after]


def diff_data(d: CaptureDiff) -> dict[str, Any]:
    """JSON-ready: what changed, node by node per stage, and each kernel's unified source diff."""
    graphs = []
    for g in _changed_graphs(d):
        graphs.append(
            {
                "compile": g.compile_id,
                "kind": g.kind,
                "label": STAGE_LABELS.get(g.kind, g.kind),
                "before": g.nodes_before,
                "after": g.nodes_after,
                "counts": [len(g.added), len(g.removed), len(g.changed)],
                "nodes": [[n.change, n.name, n.before, n.after] for n in g.nodes[:MAX_NODES]],
                "cut": max(0, len(g.nodes) - MAX_NODES),
            }
        )
    kernels = []
    for k in d.kernels:
        lines = k.source_diff()
        kernels.append(
            {
                "compile": k.compile_id,
                "name": k.name,
                "change": k.change,
                "diff": lines[:MAX_LINES],
                "cut": max(0, len(lines) - MAX_LINES),
            }
        )
    return {
        "same": d.same,
        "summary": d.summary(),
        "compiles_added": list(d.compiles_added),
        "compiles_removed": list(d.compiles_removed),
        "breaks_added": list(d.breaks_added),
        "breaks_removed": list(d.breaks_removed),
        "graphs": graphs,
        "kernels": kernels,
        "times": [list(t) for t in d.times],
        "warmth": [list(w) for w in d.warmth],
        "compile_totals": list(d.compile_totals),
        "compile_labels": list(d.compile_labels),
        "runtimes": [list(t) for t in d.runtimes],
        "step_speedup": step_speedup_data(d.step_speedup),
    }


def step_speedup_data(s: StepSpeedup | None) -> dict[str, Any] | None:
    """The real-step speedup, JSON-ready: figures in seconds, the verdict and its one line."""
    if s is None:
        return None
    return {
        "before_s": s.before_s,
        "after_s": s.after_s,
        "ratio": s.ratio,
        "low": s.low,
        "high": s.high,
        "verdict": s.verdict,
        "note": s.note,
        "steps": list(s.steps),
        "compile_s": list(s.compile_s),
        "payback": s.payback(),
        "text": s.text(),
    }


def diff_html(data: dict[str, Any]) -> str:
    """The same diff without script: a summary, node tables and kernel diffs in <details>."""
    parts = ["<h4>diff against the earlier capture</h4>"]
    speedup = data.get("step_speedup")
    if speedup:  # the headline: did the user's steps get faster (the summary below says it too)
        parts.append(
            f"<p class='cs-step-speedup' data-verdict='{escape(speedup['verdict'])}'>"
            f"real steps: {escape(speedup['text'])}</p>"
        )
    parts.append(f"<pre>{escape(data['summary'])}</pre>")
    for g in data["graphs"]:
        rows = "".join(
            f"<tr class='cs-diff-{escape(c)}'><td>{_SIGNS[c]}"
            f"</td><td>{escape(name)}</td><td>{escape(b)}</td><td>{escape(a)}</td></tr>"
            for c, name, b, a in g["nodes"]
        )
        parts.append(
            f"<details><summary>{escape(g['compile'])} {escape(g['label'])}: {g['before']} -> "
            f"{g['after']} nodes</summary><table><tr><th></th><th>node</th><th>before</th>"
            f"<th>after</th></tr>{rows}</table></details>"
        )
    for k in data["kernels"]:
        parts.append(
            f"<details><summary>{escape(k['compile'])} kernel {escape(k['change'])}: "
            f"{escape(k['name'])}</summary><pre>{escape(chr(10).join(k['diff']))}</pre></details>"
        )
    return "<div class='cs-diff'>" + "".join(parts) + "</div>"
