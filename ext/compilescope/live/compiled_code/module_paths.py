"""Module paths heard from live graphs, put on the nodes of the graphs the trace logged."""

from __future__ import annotations

from dataclasses import replace

from ...common import STAGES
from ...model.capture import Capture
from ...model.compile_id import heard_for
from ...model.graph import Graph, Node

# The logged graphs whose nodes the recorded joint paths name: AOTAutograd's.
_JOINT_NAMED = tuple(s.kind for s in STAGES if s.layer == "aot" and s.logged)


def with_module_paths(
    capture: Capture,
    dynamo: dict[str, dict[str, str]],
    joint: dict[str, dict[str, str]] | None = None,
    post_grad: dict[str, list[dict[str, str]]] | None = None,
) -> Capture:
    """Module paths heard live, put on the nodes of the logged graphs (matched by node name)."""
    if not (dynamo or joint or post_grad):
        return capture

    compiles = []
    for c in capture.compiles:
        by_kind: dict[str, list[dict[str, str]]] = {}
        if paths := heard_for(dynamo, c.id):
            by_kind["dynamo_output_graph"] = [paths]
        if joint and (paths := heard_for(joint, c.id)):
            for kind in _JOINT_NAMED:
                if kind in c.graphs:
                    by_kind[kind] = [paths] * len(c.graphs[kind])
        if post_grad and (each := heard_for(post_grad, c.id)):
            by_kind["inductor_post_grad_graph"] = each
        graphs = dict(c.graphs)
        for kind, tables in by_kind.items():
            logged = graphs.get(kind, ())
            if not logged or len(tables) != len(logged):
                continue  # not one recorded table per logged graph: do not guess
            graphs[kind] = tuple(
                _graph_with_paths(graph, table) for graph, table in zip(logged, tables, strict=True)
            )
        compiles.append(replace(c, graphs=graphs))
    return replace(capture, compiles=tuple(compiles))


def _graph_with_paths(graph: Graph, table: dict[str, str]) -> Graph:
    if not table:
        return graph

    def load() -> list[Node]:  # stays lazy: a graph nobody opens is never parsed
        return [replace(n, module_path=table.get(n.name) or n.module_path) for n in graph.nodes]

    return type(graph)(graph.kind, graph.text, load_nodes=load, metadata=graph.metadata)
