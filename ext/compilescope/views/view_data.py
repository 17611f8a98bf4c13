"""The result view's data: a Capture turned into JSON-ready parts, with the cross-links resolved.

Cross-links come only from what the capture records: a node's `# File:` line, a kernel's fused
post-grad nodes and provenance lines, and the names that the forward and backward graphs share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from ..common import SHOWN_STAGES, human_bytes
from ..model.capture import Capture
from ..model.compile import Compile, counted_elsewhere
from ..model.findings.parts import is_library
from ..model.measured.compile_payback import compile_time_line
from ..model.place import Place
from .partition_view import partition_data
from .stage_graphs import PendingGraph, fused_nodes, post_grad_of_code, stage_rows
from .timing_data import graph_timing_data, real_steps_data, sample_data


def _loc(loc: Place | None) -> list[str | int] | None:
    return [loc.file, loc.line] if loc else None


def _cell(loc: Place | None, capture: Capture) -> int | None:
    return loc.cell_in(capture.cells) if loc else None


def _kernels(c: Compile, capture: Capture) -> list[dict[str, Any]]:
    times, timings = {}, capture.timings
    if timings:
        from ..model.measured.timing import achieved_rates  # see the imports at the top

        # Keyed by role too: a forward and a backward module may each have a kernel of one name.
        times = {(k.role, k.kernel): k for k in timings.kernels_of(str(c.id))}
    posts = c.graphs.get("inductor_post_grad_graph", ())
    out = []
    for code, post in zip(c.output_code, post_grad_of_code(c), strict=True):
        names = {n.name for n in posts[post].nodes} if post is not None else set()
        for k in code.kernels:
            t = times.get((code.role or "forward", k.name))
            fused = fused_nodes(k, names)
            out.append(
                {
                    "name": k.name,
                    "lang": k.language,
                    "role": code.role,
                    "source": k.source,
                    "calls": k.calls,
                    "fused": fused,
                    "post_number": post,
                    "origins": list(k.origin_nodes),
                    "aten": list(k.aten_ops),
                    "lines": [_loc(s) for s in k.source_lines],
                    # frames inside installed libraries: the kernel table folds them away
                    "lib": [bool(s and is_library(s.file)) for s in k.source_lines],
                    "time": sample_data(t.time) if t else None,
                    "calls_per_run": t.calls_per_run if t else None,
                    "bytes": k.bytes_moved or (t.bytes_per_call if t else None),
                    "ir": k.ir,
                    "autotune": [
                        {
                            "config": a.config,
                            "ms": a.ms,
                            "registers": a.registers,
                            "spills": a.spills,
                            "chosen": a.chosen,
                        }
                        for a in k.autotune
                    ],  # fmt: skip
                    "launch": k.launch,
                    "grid": list(t.grid) if t else [],
                    "block": list(t.block) if t else [],
                    "registers": t.registers if t else None,
                    # the same rate the kernel table shows (capped at the measured peak)
                    "bandwidth": achieved_rates(t, timings, k.bytes_moved).bytes_per_s
                    if t and timings
                    else None,
                }
            )
    return out


def _saved(c: Compile) -> list[dict[str, Any]]:
    """What crosses from forward to backward, each with the backward nodes that use it."""
    partition = c.partition
    if not partition:
        return []
    backward = c.graph("aot_backward_graph")
    # Who reads what, in one pass over the backward (not one per saved tensor).
    readers: dict[str, list[str]] = {}
    for n in backward.nodes if backward else ():
        for name in set(n.inputs):
            readers.setdefault(name, []).append(n.name)
    users = {s.name: readers.get(s.name, []) for s in partition.saved}
    return [
        {"name": s.name, "type": s.type_text, "bytes": s.nbytes, "users": users[s.name]}
        for s in partition.saved
    ]


def _symbols(c: Compile) -> list[dict[str, Any]]:
    if not c.symbols:
        return []
    from .math import math_html  # sympy: imported only for a compile with symbolic shapes

    return [
        {"name": s.name, "math": math_html(s.name), "source": s.source, "value": s.value,
         "range": s.range}
        for s in c.symbols
    ]  # fmt: skip


def _shape_guards(c: Compile) -> list[dict[str, Any]]:
    if not c.shape_guards:
        return []
    from .math import math_html  # sympy: imported only for a compile with symbolic shapes

    return [
        {"expr": g.expr, "math": math_html(g.expr), "loc": _loc(g.location)} for g in c.shape_guards
    ]


def compile_data(
    c: Compile, capture: Capture, rows: tuple[list[dict[str, Any]], dict[int, int]]
) -> dict[str, Any]:
    """One compile id: its stages (`rows`: `stage_rows`), kernels, partition, guards."""
    stages, post_graph_index = rows
    kernels = _kernels(c, capture)
    for k in kernels:  # the explorer graph that shows the kernel's fused nodes
        k["post_graph"] = post_graph_index.get(k.pop("post_number"))
    saved = _saved(c)
    timing = graph_timing_data(c, capture)
    partition = c.partition
    f = c.frame
    return {
        "id": str(c.id),
        "status": c.status,
        "incomplete": c.incomplete,  # why its record is incomplete ("" when whole)
        "frame": {
            "function": f.function,
            "file": f.file,
            "line": f.line,
            "cell": f.place.cell_in(capture.cells),
            "label": f.label(capture.cells),
        },
        "breaks": [
            {"reason": b.reason, "loc": _loc(b.location), "cell": _cell(b.location, capture)}
            for b in c.graph_breaks
        ],
        # Not breaks (Dynamo does not count them): code it left to eager instead.
        "fallbacks": [
            {
                "what": f.what,
                "scope": f.scope,
                "reason": f.reason,
                "loc": _loc(f.location),
                "cell": _cell(f.location, capture),
            }
            for f in c.fallbacks
        ],
        "recompiles": list(c.recompile_reasons),
        "restarts": list(c.restart_reasons),
        "failure": c.failure,
        "stages": stages,
        "kernels": kernels,
        "output_code": [
            {"role": o.role, "aot_id": o.aot_id, "text": o.text} for o in c.output_code
        ],
        # A backward graph with no backward kernels: Inductor lowers the backward at its first
        # call (torch's lazy lowering), and the code never ran backward.
        "backward_pending": c.graph("aot_backward_graph") is not None
        and any(o.role == "forward" for o in c.output_code)
        and not any(o.role == "backward" for o in c.output_code),
        "saved": saved,
        "saved_bytes": partition.saved_bytes if partition else None,
        "saved_text": human_bytes(partition.saved_bytes) if partition and partition.saved else "",
        "activation_text": partition.activation_text() if partition else "",
        "partition": partition_data(c),
        "guards": c.guards,
        "symbols": _symbols(c),
        "shape_guards": _shape_guards(c),
        "stage_times": [
            {"name": s.name, "start": s.start_us, "dur": s.duration_us, "depth": s.depth}
            for s in c.stage_times
        ],
        # One figure per compile (a restart's is in its first attempt's: None here).
        "compile_s": None if counted_elsewhere(c, capture.compiles) else c.compile_time_s,
        "repros": list(c.repros),
        "timing": timing,
    }


def capture_data(
    capture: Capture,
    *,
    before: Capture | None = None,
    graphs_by: Callable[[list[PendingGraph]], Any] | None = None,
) -> dict[str, Any]:
    """Everything the result view shows, JSON-ready. Strings stay raw text: views escape them.
    `graphs_by`: given the graphs' payloads to make (in order) as soon as they are known,
    returns what "graphs" holds (it may start them in another process while the rest is made
    here: views/offline/shared_drawing.py); else they are made here."""
    from ..model.measured.kernel_table import kernel_rows
    from .offline.summary_html import devices, nothing_compiled

    jobs: list[PendingGraph] = []
    rows = [stage_rows(c, jobs) for c in capture]
    graphs = graphs_by(jobs) if graphs_by is not None else [job() for job in jobs]
    compiles = [compile_data(c, capture, r) for c, r in zip(capture, rows, strict=True)]
    cells = [
        {"file": file, "cell": capture.cells.get(file), "text": text}
        for file, text in capture.sources.items()
    ]
    data = {
        "version": 1,
        "torch": capture.torch_version,
        "source": capture.source,
        "device": devices(capture),
        "partial": capture.partial,
        # With no compile ids: what the view says in place of them, and the capture's own
        # note (why nothing compiled, where it knows); "" otherwise.
        "nothing_compiled": nothing_compiled(capture),
        "note": capture.note,
        # The capture's compile time (cold or warm) and whether compiling pays back: one
        # line, the same figure as the findings' and the text summary's.
        "compile_line": compile_time_line(capture),
        "skipped": [{"reason": s.reason, "count": s.count} for s in capture.skipped],
        # The stages the view shows, in order, with what the view does with each (common.py):
        # the JS keeps no list of its own.
        "stages": [asdict(s) for s in SHOWN_STAGES],
        "compiles": compiles,
        "graphs": graphs,
        "cells": cells,
        "timing_device": capture.timings.device if capture.timings else None,
        "real_steps": real_steps_data(capture.timings.real_steps if capture.timings else None),
        "real_steps_note": capture.timings.real_steps_note if capture.timings else "",
        "messages": [
            {
                "text": m.message,
                "compile_id": m.compile_id,
                "level": m.level,
                "origin": m.origin,
                "where": m.where,
                "count": m.count,
            }
            for m in capture.messages
        ],  # fmt: skip
        "kernel_rows": kernel_rows(capture)[:40],
        "diff": None,
    }
    if before is not None:
        from ..model.diff import diff
        from .diff_view import diff_data

        data["diff"] = diff_data(diff(before, capture))
    return data
