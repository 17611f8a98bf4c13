"""Module paths for nodes whose graph does not log them, inferred from what the log carries.

AOTAutograd and Inductor graphs name their inputs `primals_3` or `arg3_1`, and a log keeps no
module stack for them; but the Dynamo graph of the same compile names every parameter input
(`l_self_modules_transformer_modules_h_modules_0_modules_attn_..._weight_`, read as the module
path `transformer.h.0.attn.c_attn`), in the same order. So: inputs take the path of the Dynamo
input at their position, every other node the path of what it reads (a parameter first, else its
latest input), and graphs that share node names (forward, backward, post-grad) share the paths.
Where no parameter says anything, the `# File:` comments do: the user function a node came from.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.compile import Compile
from ..model.graph import Graph, Node

# Graphs whose inputs line up with the Dynamo graph's, one to one (tangents aside).
_ALIGNED = ("aot_joint_graph", "aot_forward_graph", "aot_inference_graph")
_FOLLOWERS = ("aot_backward_graph", "after_pre_grad_graph", "before_pre_grad_graph",
              "before_post_grad_graph", "inductor_post_grad_graph")  # fmt: skip


def _has_paths(graph: Graph) -> bool:
    computing = [n for n in graph.nodes if n.op != "placeholder" and n.op != "output"]
    return bool(computing) and sum(bool(n.module_path) for n in computing) * 2 >= len(computing)


def propagate(nodes: Sequence[Node], known: dict[str, str]) -> list[str | None]:
    """A path for each node: its own, a known one by name, else what it reads (parameters first)."""
    paths: dict[str, str | None] = {}
    params = set()
    out = []
    for n in nodes:
        path = n.module_path or known.get(n.name)
        if n.op in ("placeholder", "get_attr"):
            if path:
                params.add(n.name)
        elif not path and n.op != "output":
            read = [i for i in n.inputs if paths.get(i)]
            direct = [i for i in read if i in params]
            pick = direct[-1] if direct else read[-1] if read else None
            path = paths[pick] if pick else None
        paths[n.name] = path
        out.append(path if n.op != "output" else None)
    return out


def _by_source(nodes: Sequence[Node]) -> list[str | None]:
    """The user function each node came from (`# File: ... in fn`), when there are several."""
    keys = [n.source.function if n.source and n.source.function else None for n in nodes]
    return keys if len({k for k in keys if k}) > 1 or None not in keys else [None] * len(nodes)


def infer_paths(c: Compile) -> dict[tuple[str, int], list[str | None]]:
    """(graph kind, number) -> a module path (or None) per node, for graphs that log none."""
    dynamo = c.graph("dynamo_output_graph")
    inputs = [n.module_path for n in dynamo.placeholders] if dynamo else []
    # Two name spaces: pre-grad graphs keep Dynamo's node names, post-grad ones AOTAutograd's.
    known: dict[str, dict[str, str]] = {"dynamo": {}, "aot": {}}
    out: dict[tuple[str, int], list[str | None]] = {}
    for kind in ("dynamo_output_graph", *_ALIGNED, *_FOLLOWERS):
        space = "dynamo" if kind in _DYNAMO_NAMES else "aot"
        for number, graph in enumerate(c.graphs.get(kind, ())):
            paths = [n.module_path for n in graph.nodes]
            if not _has_paths(graph):
                names: dict[str, str] = dict(known[space])
                primals = [n for n in graph.placeholders if not n.name.startswith("tangents")]
                if kind in _ALIGNED and len(primals) == len(inputs):
                    names.update({n.name: p for n, p in zip(primals, inputs, strict=True) if p})
                paths = propagate(graph.nodes, names)
                if sum(map(bool, paths)) * 2 < len(paths):
                    paths = _by_source(graph.nodes)
                else:  # the rest by the user function they came from, e.g. `forward()`
                    functions = _by_source(graph.nodes)
                    paths = [
                        p or (f"{f}()" if f else None)
                        for p, f in zip(paths, functions, strict=True)
                    ]
                out[(kind, number)] = paths
            if kind in _SOURCES:
                for n, p in zip(graph.nodes, paths, strict=True):
                    if p:
                        known[space].setdefault(n.name, p)
    return out


_DYNAMO_NAMES = ("dynamo_output_graph", "before_pre_grad_graph", "after_pre_grad_graph")
_SOURCES = ("dynamo_output_graph", *_ALIGNED, "aot_backward_graph")
