"""RESULTS.md, made from the committed rows and each suite's hand-written notes (results/SUITE.md)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

NOTES = Path(__file__).resolve().parent / "results"
HEADER = """\
# Benchmark results

Today's figures, one section per suite. This page is generated: `python -m benchmarks results`
writes it from the rows in `benchmarks/results/SUITE.jsonl` and the notes in
`benchmarks/results/SUITE.md`; edit those, never this page (a test compares the two). Older
figures are in git history and CHANGELOG.md, not here.

How to read it: each table holds the figures of one run of one command on one machine, given
above it with the versions and the date. A cell is the median, then the spread (the lowest and
highest of the n values) and n where n > 1; one value is one run, a hint. The lent GPU machines
and this 2-core CPU machine are shared and noisy (host-bound steps move 10-20% between fresh
processes; wall times on the CPU stretch with other work's load), so compare ratios measured
side by side in one run, never figures of two tables. `python -m benchmarks list` says what
each suite measures and on which device.
"""


def _number(v) -> str:
    if v is None or isinstance(v, str):
        return "-" if v is None else v
    if isinstance(v, int) or float(v).is_integer() and abs(v) >= 100:
        return f"{int(v):,}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    # Three decimals below 10 (ratios read 1.000, 0.910), fewer above, two figures below 0.01.
    for bound, digits in ((0.01, None), (10, 3), (100, 2), (1000, 1)):
        if abs(v) < bound:
            return f"{v:.2g}" if digits is None else f"{v:.{digits}f}"
    return str(v)


def cell(r: dict) -> str:
    text = _number(r["median"])
    if r["low"] is not None and r["high"] is not None:
        text += f" ({_number(r['low'])}-{_number(r['high'])})"
    if r["n"] > 1:
        text += f", n={r['n']}"
    return text


def _key(r: dict) -> tuple:
    return (r["machine"], r["torch"], r["triton"], r["python"], r["date"])


def table(group: list[dict], runs: list[str]) -> list[str]:
    """One table: a line per case (and run, where the group holds several), a column per
    metric, in the order the rows come."""
    metrics = list(dict.fromkeys((r["metric"], r["unit"]) for r in group))
    several = len(runs) > 1
    lines_of = list(dict.fromkeys((runs.index(r["command"]), r["case"]) for r in group))
    at = {(runs.index(r["command"]), r["case"], r["metric"]): r for r in group}
    head = ["run"] * several + ["case"]
    head += [m if u in ("text", "") else f"{m} ({u})" for m, u in metrics]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run, case in lines_of:
        cells = [cell(at[run, case, m]) if (run, case, m) in at else "" for m, _ in metrics]
        lines.append("| " + " | ".join([str(run + 1)] * several + [case, *cells]) + " |")
    notes = dict.fromkeys(f"{r['case']}: {r['note']}" for r in group if r["note"])
    return lines + [""] + [f"- {n}" for n in notes] + ([""] if notes else [])


def provenance(r: dict, runs: list[str]) -> list[str]:
    versions = [f"torch {r['torch']}" if r["torch"] else "torch not used"]
    versions += [f"Triton {r['triton']}"] if r["triton"] else []
    versions += [f"Python {r['python']}"] if r["python"] else []
    where = f"**{r['machine']}**, {', '.join(versions)}, {r['date']}"
    if len(runs) == 1:
        return [f"{where}: `{runs[0]}`", ""]
    return [f"{where}; runs:", "", *(f"{i}. `{c}`" for i, c in enumerate(runs, 1)), ""]


def section(name: str, module: ModuleType, found: list[dict]) -> list[str]:
    path = NOTES / f"{name}.md"
    notes = path.read_text().strip().splitlines() if path.exists() else []
    title = notes[0] if notes and notes[0].startswith("## ") else f"## {name}"
    body = notes[1:] if notes and notes[0].startswith("## ") else notes
    lines = [title, ""]
    groups: dict[tuple, list[dict]] = {}
    for r in found:
        groups.setdefault(_key(r), []).append(r)
    for group in groups.values():
        runs = list(dict.fromkeys(r["command"] for r in group))
        lines += [*provenance(group[0], runs), *table(group, runs)]
    if not found:
        lines += ["No committed rows yet.", ""]
    return lines + [line.rstrip() for line in body] + [""]


def page(committed: dict[str, list[dict]], suites: dict[str, ModuleType]) -> str:
    lines = [HEADER]
    for name, module in suites.items():
        if committed.get(name) or (NOTES / f"{name}.md").exists():
            lines += section(name, module, committed.get(name, []))
    text = "\n".join(lines).rstrip() + "\n"
    while "\n\n\n" in text:  # one blank line between blocks, however the parts end
        text = text.replace("\n\n\n", "\n\n")
    return text
