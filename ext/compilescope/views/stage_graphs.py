"""The graphs a compile's stages show, as explorer payloads still to make, and each stage's row."""

from __future__ import annotations

from typing import Any

from ..common import PARTITION, SHOWN_STAGES
from ..model.compile import Compile
from ..model.graph import Graph, Node
from ..model.kernel import Kernel
from .explorer.data import explorer_payload
from .explorer.module_groups import infer_paths


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


def post_grad_of_code(c: Compile) -> list[int | None]:
    """For each output module, the number of the post-grad graph it was generated from.

    Inductor logs one post-grad graph and one output module per compiled graph (forward, then
    backward), in the same order; when the counts differ nothing is paired rather than guessed.
    """
    posts = c.graphs.get("inductor_post_grad_graph", ())
    if len(posts) == len(c.output_code):
        return list(range(len(posts)))
    return [None] * len(c.output_code)


def fused_nodes(k: Kernel, names: set[str]) -> list[str]:
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
    for code, number in zip(c.output_code, post_grad_of_code(c), strict=True):
        if number != post:
            continue
        names = {n.name for n in posts[post].nodes}
        for k in code.kernels:
            for name in fused_nodes(k, names):
                out.setdefault(name, []).append(k.name)
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


# The graphs `stage_rows` draws (the partition is drawn from the forward and backward, shown too):
# module paths are inferred for these alone, and the graphs nothing shows are never parsed.
SHOWN_KINDS = frozenset(s.kind for s in SHOWN_STAGES)


def stage_rows(
    c: Compile, graphs: list[PendingGraph]
) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """Each stage's row, its graph appended to `graphs` as a pending explorer payload (the
    partition after the backward); and where each post-grad graph's payload is in `graphs`."""
    post_graph_index: dict[int, int] = {}
    stages = []
    paths = infer_paths(c, SHOWN_KINDS)
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
