"""The result view's data: a Capture turned into JSON-ready parts, with the cross-links resolved.

Cross-links come only from what the capture records: a node's `# File:` line, a kernel's fused
post-grad nodes and provenance lines, and the names that the forward and backward graphs share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from ..common import PARTITION, SHOWN_STAGES, human_bytes
from ..model.capture import Capture
from ..model.compile import Compile
from ..model.findings.parts import is_library
from ..model.graph import Graph, Node
from ..model.kernel import Kernel
from ..model.place import Place
from .explorer.data import explorer_payload
from .explorer.module_groups import infer_paths
from .partition_view import partition_data
from .timing_data import graph_timing_data, real_steps_data, sample_data


def partition_graph(
    c: Compile, paths: dict[tuple[str, int], list[str | None]] | None = None
) -> Graph | None:
    """Forward and backward as one graph: the saved tensors are the edges that cross between them.
    `paths` (module_groups.infer_paths) supplies module paths the graphs do not log."""
    forward, backward = c.graph("aot_forward_graph"), c.graph("aot_backward_graph")
    if forward is None or backward is None:
        return None
    paths = paths or {}
    fw_paths = paths.get(("aot_forward_graph", 0)) or [None] * len(forward.nodes)
    bw_paths = paths.get(("aot_backward_graph", 0)) or [None] * len(backward.nodes)
    saved = {s.name for s in (c.partition.saved if c.partition else ())}
    note = {f"fw.{name}": "saved for backward" for name in saved}
    # The cut, drawn: what the backward computes again instead of saving it.
    recomputed = c.partition.recomputed if c.partition else ()
    note.update({f"bw.{name}": "recomputed in backward" for name in recomputed})
    nodes = []
    for n, path in zip(forward.nodes, fw_paths, strict=True):
        nodes.append(_renamed(n, "fw.", "forward", note, "fw.", path=path))
    for n, path in zip(backward.nodes, bw_paths, strict=True):
        if n.op == "placeholder" and n.name in saved:
            continue  # drawn as the forward node it is: the edge crosses the boundary
        inputs = tuple(("fw." if i in saved else "bw.") + i for i in n.inputs)
        nodes.append(_renamed(n, "bw.", "backward", note, inputs=inputs, path=path))
    return Graph(PARTITION, "", nodes)


def _renamed(
    node: Node,
    prefix: str,
    side: str,
    note: dict[str, str],
    input_prefix: str = "",
    inputs: tuple[str, ...] | None = None,
    path: str | None = None,
) -> Node:
    name = prefix + node.name
    module_path = node.module_path or path
    # Node's fields by position, one call per node of the partition: name, op, target, inputs,
    # args_text, tensors, type_text, source, module_path, note. The side is the outer group;
    # the module path (if any) groups inside it.
    return Node(
        name,
        node.op,
        node.target,
        inputs if inputs is not None else tuple(input_prefix + i for i in node.inputs),
        node.args_text,
        node.tensors,
        node.type_text,
        node.source,
        side + ("." + module_path if module_path else ""),
        note.get(name, node.note),
    )


def _loc(loc: Place | None) -> list[str | int] | None:
    return [loc.file, loc.line] if loc else None


def _cell(loc: Place | None, capture: Capture) -> int | None:
    return loc.cell_in(capture.cells) if loc else None


def _post_grad_of_code(c: Compile) -> list[int | None]:
    """For each output module, the number of the post-grad graph it was generated from.

    Inductor logs one post-grad graph and one output module per compiled graph (forward, then
    backward), in the same order; when the counts differ nothing is paired rather than guessed.
    """
    posts = c.graphs.get("inductor_post_grad_graph", ())
    if len(posts) == len(c.output_code):
        return list(range(len(posts)))
    return [None] * len(c.output_code)


def _fused(k: Kernel, names: set[str]) -> list[str]:
    """The post-grad nodes (of `names`) that kernel `k` computes."""
    fused = list(k.fused_nodes)
    if not fused and names:
        # Inductor records no provenance for some graphs (a CPU backward logs only
        # {"version": 2.0}); its "Source Nodes" comment names the same post-grad nodes.
        fused = [o for o in k.origin_nodes if o in names]
    return fused


def _kernels_of_nodes(c: Compile, post: int) -> dict[str, list[str]]:
    """Post-grad graph `post`'s nodes -> the kernels that compute them (a forward and a
    backward graph can both have a node named `mm`: each keeps its own kernels)."""
    posts = c.graphs.get("inductor_post_grad_graph", ())
    out: dict[str, list[str]] = {}
    for code, number in zip(c.output_code, _post_grad_of_code(c), strict=True):
        if number != post:
            continue
        names = {n.name for n in posts[post].nodes}
        for k in code.kernels:
            for name in _fused(k, names):
                out.setdefault(name, []).append(k.name)
    return out


def _kernels(c: Compile, capture: Capture) -> list[dict[str, Any]]:
    times, timings = {}, capture.timings
    if timings:
        from ..model.timing import achieved_rates  # see the imports at the top

        # Keyed by role too: a forward and a backward module may each have a kernel of one name.
        times = {(k.role, k.kernel): k for k in timings.kernels_of(str(c.id))}
    posts = c.graphs.get("inductor_post_grad_graph", ())
    out = []
    for code, post in zip(c.output_code, _post_grad_of_code(c), strict=True):
        names = {n.name for n in posts[post].nodes} if post is not None else set()
        for k in code.kernels:
            t = times.get((code.role or "forward", k.name))
            fused = _fused(k, names)
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


def _node_lines(graph: Graph) -> dict[str, dict[int, list[str]]]:
    """file -> line -> node names, for the cell's line marks."""
    out: dict[str, dict[int, list[str]]] = {}
    for n in graph.nodes:
        if n.source:
            out.setdefault(n.source.file, {}).setdefault(n.source.line, []).append(n.name)
    return out


# Graphs laid out lately, by what the layout reads: the same graph on many ranks of a job (or
# recompiled alike) is laid out once. Bounded, so a job of all-different graphs stays flat.
_LAID_OUT: dict[tuple[object, ...], dict[str, Any]] = {}
_LAID_OUT_MAX = 256


def _laid_out(
    graph: Graph,
    title: str,
    kernels_of: dict[str, list[str]] | None = None,
    paths: list[str | None] | None = None,
) -> dict[str, Any]:
    """`explorer_payload`, reused for a graph of the same text, title, kernels and paths (a
    graph of no text, the partition's, is made anew each time: it is never reused)."""
    if not graph.text:
        return explorer_payload(graph, title=title, kernels_of=kernels_of, module_paths=paths)
    key = (graph.kind, graph.text, title, repr(kernels_of), repr(paths))
    payload = _LAID_OUT.get(key)
    if payload is None:
        if len(_LAID_OUT) >= _LAID_OUT_MAX:
            _LAID_OUT.clear()
        payload = explorer_payload(graph, title=title, kernels_of=kernels_of, module_paths=paths)
        _LAID_OUT[key] = payload
    return payload


class PendingGraph:
    """One explorer payload, not made yet: `capture_data(graphs_by=...)` hands these over for
    the caller to make (the one-file report makes them in two processes). `kernels_of`: a
    post-grad graph's nodes -> the kernels that compute them."""

    __slots__ = ("graph", "kernels_of", "paths", "title")

    def __init__(
        self,
        graph: Graph,
        title: str,
        paths: list[str | None] | None = None,
        kernels_of: dict[str, list[str]] | None = None,
    ) -> None:
        self.graph, self.title, self.paths, self.kernels_of = graph, title, paths, kernels_of

    @property
    def size(self) -> int:
        """Its node count: about what making it costs."""
        return len(self.graph.nodes)

    def __call__(self) -> dict[str, Any]:
        return _laid_out(self.graph, self.title, self.kernels_of, self.paths)


# The graphs `_stage_rows` draws (the partition is drawn from the forward and backward, shown too):
# module paths are inferred for these alone, and the graphs nothing shows are never parsed.
_SHOWN_KINDS = frozenset(s.kind for s in SHOWN_STAGES)


def _stage_rows(
    c: Compile, graphs: list[PendingGraph]
) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """Each stage's row, its graph appended to `graphs` as a pending explorer payload (the
    partition after the backward); and where each post-grad graph's payload is in `graphs`."""
    post_graph_index: dict[int, int] = {}
    stages = []
    paths = infer_paths(c, _SHOWN_KINDS)
    for kind, label in ((s.kind, s.label) for s in SHOWN_STAGES):
        if kind == PARTITION:  # the forward and backward drawn as one graph
            joined = partition_graph(c, paths)
            if joined is not None:
                graphs.append(PendingGraph(joined, "forward | backward"))
                stages.append(
                    {
                        "kind": PARTITION,
                        "label": label,
                        "graph": len(graphs) - 1,
                        "nodes": len(joined.nodes),
                        "ops": joined.op_count,
                        "text": "",
                        "lines": {},
                    }
                )
            continue
        for number, graph in enumerate(c.graphs.get(kind, ())):
            title = label + (f" #{number + 1}" if number else "")
            post_grad = kind == "inductor_post_grad_graph"
            graphs.append(
                PendingGraph(
                    graph,
                    title,
                    paths.get((kind, number)),
                    # Split out of the output code here: both processes would need it.
                    _kernels_of_nodes(c, number) if post_grad else None,
                )
            )
            if post_grad:
                post_graph_index[number] = len(graphs) - 1
            stages.append(
                {
                    "kind": kind,
                    "label": title,
                    "graph": len(graphs) - 1,
                    "nodes": len(graph.nodes),
                    "ops": graph.op_count,
                    "text": graph.text,
                    "lines": _node_lines(graph),
                }
            )
    return stages, post_graph_index


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
    """One compile id: its stages (`rows`: `_stage_rows`), kernels, partition, guards."""
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
        "compile_s": c.compile_time_s,
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
    here: views/shared_drawing.py); else they are made here."""
    from ..model.kernel_table import kernel_rows
    from .summary_html import devices, nothing_compiled

    jobs: list[PendingGraph] = []
    rows = [_stage_rows(c, jobs) for c in capture]
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
