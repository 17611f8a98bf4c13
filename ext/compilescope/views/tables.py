"""The view's tables as data: kernels, timings, the step budget, the compile budget, graph breaks and saved tensors, one row per item.

    from compilescope import tables
    tables.kernels(cap)                 # a Table: a list of dict rows
    tables.kernels(cap).to_pandas()     # a DataFrame, where pandas is installed

Rows hold plain values (str, int, float, None) under the same names in every row, so they sort,
filter, serialize and plot without compilescope; times are in seconds, sizes in bytes.
"""

from __future__ import annotations

from html import escape
from typing import Any

from ..model.capture import Capture
from ..model.measured.compile_budget import compile_budget as compile_budget_of
from ..model.measured.step_budget import step_budget as step_budget_parts


class Table(list[dict[str, Any]]):
    """Rows (dicts with the same keys, in `columns` order) that also show as an HTML table."""

    def __init__(self, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
        super().__init__(rows)
        self.columns = columns

    def to_pandas(self) -> Any:  # a pandas.DataFrame (pandas: optional, no type information)
        """The rows as a pandas DataFrame (pandas is optional: ImportError says so)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from None
        return pandas.DataFrame(list(self), columns=list(self.columns))

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{escape(_cell(row[c]))}</td>" for c in self.columns) + "</tr>"
            for row in self
        )
        if not body:  # an empty capture, or nothing of this kind in it: say so, not a bare head
            body = f"<tr><td colspan='{len(self.columns)}'><i>no rows</i></td></tr>"
        return f"<table><tr>{head}</tr>{body}</table>"


def _cell(value: object) -> str:
    return "" if value is None else f"{value:.6g}" if isinstance(value, float) else str(value)


def kernels(capture: Capture) -> Table:
    """Every generated kernel and extern call, with its measured time where timings were taken."""
    # Keyed by role too: a forward and a backward module each call `extern_kernels.mm`.
    times = (
        {(k.compile_id, k.role, k.kernel): k for k in capture.timings.kernels}
        if capture.timings
        else {}
    )
    rows = []
    for c in capture:
        for code in c.output_code:
            for k in code.kernels:
                t = times.get((str(c.id), code.role or "forward", k.name))
                rows.append(
                    {
                        "compile_id": str(c.id),
                        "graph": code.role,
                        "kernel": k.name,
                        "language": k.language,
                        "calls": k.calls,
                        "fused_nodes": len(k.fused_nodes),
                        "lines": ", ".join(str(loc) for loc in k.source_lines),
                        "median_s": t.time.median_s if t else None,
                        "calls_per_run": t.calls_per_run if t else None,
                        "bytes_moved": k.bytes_moved,
                    }
                )
    return Table(_columns(rows, _KERNEL_COLUMNS), rows)


_KERNEL_COLUMNS = ("compile_id", "graph", "kernel", "language", "calls", "fused_nodes", "lines",
                   "median_s", "calls_per_run", "bytes_moved")  # fmt: skip


def timings(capture: Capture) -> Table:
    """Each timed graph: eager vs compiled (median, min, max, repeats), speedup, peak memory."""
    rows = []
    for g in capture.timings.graphs if capture.timings else ():
        row: dict[str, Any] = {"compile_id": g.compile_id, "what": g.what}
        for side, sample in (("eager", g.eager), ("compiled", g.compiled)):
            row[f"{side}_median_s"] = sample.median_s if sample else None
            row[f"{side}_min_s"] = sample.min_s if sample else None
            row[f"{side}_max_s"] = sample.max_s if sample else None
            row[f"{side}_repeats"] = sample.repeats if sample else None
        row.update(
            speedup=g.speedup,
            eager_peak_bytes=g.eager_peak_bytes,
            compiled_peak_bytes=g.compiled_peak_bytes,
            note=g.note,
        )
        rows.append(row)
    columns = ("compile_id", "what", *(f"{s}_{m}" for s in ("eager", "compiled")
               for m in ("median_s", "min_s", "max_s", "repeats")), "speedup",
               "eager_peak_bytes", "compiled_peak_bytes", "note")  # fmt: skip
    return Table(columns, rows)


def step_budget(capture: Capture) -> Table:
    """The real steps' median compiled step as named parts that add up to it: each compiled
    graph, the eager optimizer, other eager ops, idle time after syncs, launch and Python gaps,
    and what is unexplained (model/measured/step_budget.py). No rows without real steps."""
    real = capture.timings.real_steps if capture.timings else None
    parts = step_budget_parts(real) if real is not None else ()
    rows = [
        {
            "part": p.name,
            "kind": p.kind,
            "compile_id": p.compile_id or None,
            "seconds": p.seconds,
            "share": p.share,
            "detail": p.detail,
        }
        for p in parts
    ]
    if real is not None and parts:
        step = real.compiled
        rows.append(
            {
                "part": "step (stopwatch median)",
                "kind": "step",
                "compile_id": None,
                "seconds": step.median_s,
                "share": 1.0,
                "detail": f"{step.repeats} steps, {step.min_s:.6g}-{step.max_s:.6g} s",
            }
        )
    return Table(("part", "kind", "compile_id", "seconds", "share", "detail"), rows)


def compile_budget(capture: Capture) -> Table:
    """The compile time of each compile id by kind of work (Dynamo, AOTAutograd, Inductor's
    passes, fusion and code generation, kernel compilation, autotuning, cache lookups), with
    its cache result, then the capture's total by kind (model/measured/compile_budget.py): the one
    figure of compile time, the same as the findings' and the summary's."""
    budget = compile_budget_of(capture)
    rows: list[dict[str, Any]] = []
    for c in budget.compiles:
        if c.counted_in:
            rows.append(
                {"compile_id": c.compile_id, "work": f"(counted in {c.counted_in})",
                 "seconds": 0.0, "share": 0.0, "cache": c.cache or None, "saved_s": c.saved_s}
            )  # fmt: skip
        for work, seconds in c.works:
            rows.append(
                {"compile_id": c.compile_id, "work": work, "seconds": seconds,
                 "share": seconds / budget.seconds if budget.seconds else None,
                 "cache": c.cache or None, "saved_s": c.saved_s}
            )  # fmt: skip
    for work, seconds in budget.works:
        rows.append(
            {"compile_id": None, "work": work, "seconds": seconds,
             "share": budget.share(work), "cache": None, "saved_s": None}
        )  # fmt: skip
    if budget.compiles:
        rows.append(
            {"compile_id": None, "work": f"compile time ({budget.label or 'all'})",
             "seconds": budget.seconds, "share": 1.0, "cache": None,
             "saved_s": sum(c.saved_s or 0.0 for c in budget.compiles) or None}
        )  # fmt: skip
    return Table(("compile_id", "work", "seconds", "share", "cache", "saved_s"), rows)


def graph_breaks(capture: Capture) -> Table:
    """Every graph break: its compile id, reason and the user line it happened at."""
    rows = [
        {
            "compile_id": str(cid),
            "reason": b.reason,
            "file": b.location.file if b.location else None,
            "line": b.location.line if b.location else None,
            "cell": b.location.cell_in(capture.cells) if b.location else None,
        }
        for cid, b in capture.graph_breaks
    ]
    return Table(("compile_id", "reason", "file", "line", "cell"), rows)


def saved_tensors(capture: Capture) -> Table:
    """What each compile's forward saves for its backward: name, dtype, shape, bytes."""
    rows = []
    for c in capture:
        for s in c.partition.saved if c.partition else ():
            t = s.tensor
            rows.append(
                {
                    "compile_id": str(c.id),
                    "name": s.name,
                    "dtype": t.dtype if t else None,
                    "shape": "[" + ", ".join(t.shape) + "]" if t else None,
                    "bytes": s.nbytes,
                    "type": s.type_text,
                }
            )
    return Table(("compile_id", "name", "dtype", "shape", "bytes", "type"), rows)


def _columns(rows: list[dict[str, Any]], default: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(rows[0]) if rows else default
