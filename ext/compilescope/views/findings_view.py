"""The findings as the view shows them first: rows for the widget, escaped HTML for the fallback."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from ..model.findings.parts import Finding
from ..model.findings.ranked import NONE_FOUND, cost_text, often_text, where_text

if TYPE_CHECKING:  # a fix trial's model and its speedup's view: imported only with a trial
    from ..model.findings.fix_trial import FixTrial

SHOWN = 12  # findings on the first screen; the rest are one click away
# What `compilescope.applying` can hold in a `with` block: config settings, not the arguments
# of one torch.compile call or dynamic marks on its inputs (live/trials/fixes.py's `holding` does those).
HELD_BY_APPLYING = ("set", "add")


def applying_snippet(f: Finding, number: int) -> str:
    """The code that tries finding `number`'s fix where compilescope cannot run the code again
    (a `capturing()` block, a log): "" when its fix is not settings `applying` can hold.
    `reset=True`: what compiled in the first capture compiles again, under the fix."""
    fix = f.fix
    if fix is None or fix.kind != "setting" or not fix.settings:
        return ""
    if any(s.op not in HELD_BY_APPLYING for s in fix.settings):
        return ""
    return (
        f"fix = compilescope.findings(cap)[{number - 1}].fix  # cap: this capture\n"
        "with compilescope.applying(fix), compilescope.capturing(reset=True) as after:\n"
        "    ...  # your code again, as it ran in the first capture\n"
        "compilescope.show(after, before=cap)  # before and after, in the Diff tab"
    )


def findings_data(found: tuple[Finding, ...]) -> list[dict[str, Any]]:
    """One row per finding, JSON-ready; raw text (the widget sets it as textContent)."""
    rows = []
    for number, f in enumerate(found, 1):
        fixes = []
        for fix in f.fixes:
            fixes.append(
                {
                    "kind": fix.kind,
                    "title": fix.title,
                    "python": fix.python(),
                    "change": fix.change,
                    "where": fix.where.label() if fix.where else "",
                    "tradeoff": fix.tradeoff,
                    "source": fix.source,
                }
            )
        torch = f.torch
        rows.append(
            {
                "number": number,
                "kind": f.kind,
                "what": f.what,
                "where": where_text(f),
                "user_loc": [f.user.file, f.user.line] if f.user else None,
                "often": often_text(f),
                "cost": cost_text(f),
                "compile_ids": list(f.compile_ids),
                "gb_id": torch.gb_id if torch else "",
                "explanation": torch.explanation if torch else "",
                "hints": list(torch.hints) if torch else [],
                "message": torch.message if torch else "",
                "fixes": fixes,
                "tryable": bool(f.fix and f.fix.kind == "setting"),
                "applying": applying_snippet(f, number),
            }
        )
    return rows


def findings_html(found: tuple[Finding, ...], none: str = NONE_FOUND) -> str:
    """Script-free: an ordered list, costliest first, each with its fix as code; torch's own
    message folded once per cause. `none`: what to say when there are none (`none_found`)."""
    if not found:
        return f"<p class='cs-findings-none'>{escape(none)}</p>"
    items = []
    for f in found[:SHOWN]:
        gb = f" ({escape(f.torch.gb_id)})" if f.torch and f.torch.gb_id else ""
        parts = [f"<b>{escape(f.what)}</b>{gb}"]
        for label, value in (("where", where_text(f)), ("how often", often_text(f)), ("cost", cost_text(f))):  # fmt: skip
            if value:
                parts.append(f"<div>{label}: {escape(value)}</div>")
        for fix in f.fixes[:2]:
            code = fix.python() or fix.change
            at = f" at {escape(fix.where.label())}" if fix.where else ""
            parts.append(f"<div>fix{at}: <code>{escape(code)}</code></div>")
        if f.torch and f.torch.message:
            parts.append(
                "<details><summary>torch's message</summary>"
                f"<pre>{escape(f.torch.message)}</pre></details>"
            )
        items.append(f"<li data-kind='{escape(f.kind)}'>{''.join(parts)}</li>")
    more = f"<p>... and {len(found) - SHOWN} more</p>" if len(found) > SHOWN else ""
    return f"<div class='cs-findings'><h4>Findings</h4><ol>{''.join(items)}</ol>{more}</div>"


def fix_trial_data(trial: FixTrial, number: int | None = None) -> dict[str, Any]:
    """A tried fix, JSON-ready: what was applied (to finding `number`, where known), each
    figure before and after in words with its change, what "before" is, and what is left."""
    from .diff_view import step_speedup_data

    return {
        "number": number,
        "title": trial.fix.title,
        "python": trial.fix.python(),
        "error": trial.error,
        "rows": [[name, before, after] for name, before, after in trial.rows()],
        "changes": [list(c) for c in trial.changes()] if trial.after is not None else [],
        "baseline": trial.baseline_text(),
        "rerun_baseline": trial.rerun_baseline,
        "left": trial.left(),
        "step_speedup": step_speedup_data(trial.step_speedup),
    }


def fix_trial_html(trial: FixTrial) -> str:
    """A tried fix as a before/after table in human units with each change (escaped), what
    "before" is, and the breaks it left."""
    head = (
        f"<div class='cs-fix-trial'><b>tried: {escape(trial.fix.title)}</b>"
        f"<pre>{escape(trial.fix.python())}</pre>"
    )
    if trial.after is None:
        return (
            head + f"<p class='cs-warn'>the second capture failed: {escape(trial.error)}</p></div>"
        )
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{escape(a)}</td><td>{escape(b)}</td>"
        f"<td>{escape(change)}</td></tr>"
        for name, a, b, change in trial.changes()
    )
    speedup = trial.step_speedup
    steps = (
        f"<p class='cs-step-speedup' data-verdict='{escape(speedup.verdict)}'>"
        f"real steps: {escape(speedup.text())}</p>"
        if speedup is not None
        else ""
    )
    table = (
        "<table><tr><th></th><th>before</th><th>after</th><th>change</th></tr>" + rows + "</table>"
    )
    left = trial.left()
    left_html = (
        "<p>left after the fix: " + "; ".join(escape(x) for x in left) + "</p>"
        if left
        else "<p>left after the fix: no graph breaks</p>"
    )
    baseline = f"<p>{escape(trial.baseline_text())}</p>"
    return head + table + baseline + left_html + steps + "</div>"
