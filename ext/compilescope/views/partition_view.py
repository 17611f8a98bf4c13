"""The partition in the view: real activation memory, saved tensors, recomputation, budget sweep."""

from __future__ import annotations

from html import escape
from typing import Any

from ..common import human_bytes
from ..model.capture import Capture
from ..model.compile import Compile
from ..model.partition import BudgetSweep, Partition

# What the sweep's figures are: re-partitions of the captured joint graph, never run.
SWEEP_BASIS = (
    "The sweep's figures are the partitioner's predictions (the captured joint graph "
    "partitioned again at each budget; nothing was compiled or run): copies Inductor makes "
    "after the partition are not in them. What the compiled code held is measured above."
)

_KIND_TEXT = {
    "activation": "activation",
    "input": "input or parameter",
    "symbol": "size (no memory)",
    "": "",
}


def headline(p: Partition) -> str:
    """One line: the activation memory first (the figure that costs), then what else is saved."""
    inputs = sum(1 for s in p.saved if s.kind == "input")
    text = (
        f"activation memory {p.activation_text()}: {len(p.saved)} tensors saved for "
        f"backward ({human_bytes(p.saved_bytes)}, of which {inputs} are inputs, parameters or "
        "views of them, alive anyway)"
    )
    if p.recomputed:
        flops = f", {p.recompute_flops / 1e6:.1f} MFLOP" if p.recompute_flops else ""
        text += f"; the backward recomputes {_count(p.recomputed_ops, 'op')}{flops}"
        if p.recomputed_views:
            text += f" and {_count(p.recomputed_views, 'view')}"
    if p.partitioner:
        budget = "" if p.memory_budget is None else f", memory budget {p.memory_budget:g}"
        text += f". Partitioner: {p.partitioner}{budget}"
    return text


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def kind_text(kind: str, owner: str) -> str:
    base = _KIND_TEXT.get(kind, kind)
    return f"{base} (view of {owner})" if owner else base


def partition_data(c: Compile) -> dict[str, Any] | None:
    """What the widget shows of a compile's partition (JSON-ready; strings raw, JS escapes)."""
    p = c.partition
    if p is None:
        return None
    sweep = c.sweep()
    return {
        "headline": headline(p),
        "activation_bytes": p.activation_bytes,
        "recomputed": list(p.recomputed),
        "kinds": {s.name: kind_text(s.kind, s.owner) for s in p.saved},
        "sweep": sweep.points if sweep else None,
        "sweep_basis": SWEEP_BASIS,
        "sweep_flops": sweep is not None
        and all(x["recompute_flops"] is not None for x in sweep.points),
        "lab": c.lab_reason,
        "hint": f"cap['{c.id}'].budget_sweep()",
        "held": held_data(c, p),
    }


def held_data(c: Compile, p: Partition) -> dict[str, Any] | None:
    """What the compiled forward really held (live captures), and where it differs from the
    partition's prediction; None when not measured at all (a log, a saved older capture)."""
    if c.held is None:
        return None
    # Measured by live captures only: a log's report (issue 34) does not import it.
    from ..model.measured.held_memory import differences, held_text, input_names

    names = input_names(c.graph("dynamo_output_graph"), c.graph("aot_forward_graph"))
    return {
        "bytes": c.held.activation_bytes if c.held.measured else None,
        "text": held_text(p, c.held, names),
        "differences": [
            {"saved": d.saved, "what": d.what, "detail": d.detail, "bytes": d.extra_bytes}
            for d in differences(p, c.held, names)
        ],
    }


def sweep_rows(sweep: BudgetSweep) -> list[list[str]]:
    """The sweep as table rows (partitioner, budget, activations, saved, recomputed, FLOPs)."""
    rows = []
    for p in sweep.points:
        flops = p["recompute_flops"]
        rows.append(
            [
                p["partitioner"] + (" (captured)" if p["captured"] else ""),
                f"{p['budget']:g}" if p["partitioner"] == "min_cut" else "",
                human_bytes(p["activation_bytes"]),
                str(p["saved"]),
                str(p["recomputed_ops"]),
                "" if flops is None else f"{flops / 1e6:.1f} M",
            ]
        )
    return rows


def partition_html(capture: Capture, max_compiles: int = 8) -> str:
    """Script-free: per compile with a partition, the headline, saved tensors, and the sweep."""
    parts = []
    with_partition = [(c, p) for c in capture if (p := c.partition) is not None]
    for c, p in with_partition[:max_compiles]:
        rows = "".join(
            f"<tr><td>{escape(s.name)}</td><td>{escape(s.type_text)}</td>"
            f"<td>{escape(human_bytes(s.nbytes) if s.nbytes is not None else '')}</td>"
            f"<td>{escape(kind_text(s.kind, s.owner))}</td></tr>"
            for s in p.saved
        )
        body = (
            f"<p>{escape(headline(p))}</p><table><tr><th>saved</th><th>type</th><th>bytes</th>"
            f"<th>what it is</th></tr>{rows}</table>"
        )
        held = held_data(c, p)
        if held is not None and held["text"]:
            items = "".join(
                f"<li>{escape(d['saved'])}: {escape(d['detail'])}</li>" for d in held["differences"]
            )
            body += f"<p class='cs-held'>{escape(held['text'])}</p>"
            body += f"<ul class='cs-held-differences'>{items}</ul>" if items else ""
        if p.recomputed:
            body += f"<p>recomputed in backward: {escape(', '.join(p.recomputed))}</p>"
        sweep = c.sweep()
        if sweep is not None:
            from .charts.figures import svg, sweep_figure  # matplotlib: only for a sweep to draw

            head = "".join(
                f"<th>{h}</th>"
                for h in ("partitioner", "budget", "activations", "saved", "recomputed", "FLOPs")
            )
            table = "".join(
                "<tr>" + "".join(f"<td>{escape(x)}</td>" for x in row) + "</tr>"
                for row in sweep_rows(sweep)
            )
            body += (
                f"<div class='cs-sweep'>{svg(sweep_figure(sweep, f'{c.id}: activation memory budget'))}"
                f"</div><p class='cs-muted'>{escape(SWEEP_BASIS)}</p>"
                f"<table><tr>{head}</tr>{table}</table>"
            )
        elif c.lab is None:
            body += f"<p>budget sweep: not available: {escape(c.lab_reason)}</p>"
        parts.append(
            f"<details><summary>{escape(str(c.id))} partition: "
            f"{escape(p.activation_text())} of activations</summary>{body}</details>"
        )
    return "<div class='cs-partitions'>" + "".join(parts) + "</div>" if parts else ""
