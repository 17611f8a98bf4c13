"""Module paths for nodes whose graph does not log them, inferred from what the log carries.

AOTAutograd and Inductor graphs name their inputs `primals_3` or `arg3_1`, and a log keeps no
module stack for them; but the Dynamo graph of the same compile names every parameter input
(`l_self_modules_transformer_modules_h_modules_0_modules_attn_..._weight_`, read as the module
path `transformer.h.0.attn.c_attn`), in the same order. So: inputs take the path of the Dynamo
input at their position, every other node the path of what it reads (a parameter first), else
of the module its `# File:` line calls in the Dynamo graph (a batch norm's statistics, which
read only the convolution before them), else of the latest value it reads; a gradient the
backward returns is its parameter's (torch names the input each is the gradient of), with the
ops that only feed it; graphs that share node names (forward, backward, post-grad) share the
paths. Where none of that says anything,
the `# File:` comments name the user function a node came from.

Graphs that do log paths (a live capture's backward: AOTAutograd copies the forward's module
stack into the nodes that differentiate it) still leave autograd's own nodes without one: the
adds that sum two gradients, the mms of a padded matmul, `full` constants. `fill_gaps` gives
those (and views, which only re-view a tensor) the module of what they read, so the backward
groups by module like the forward.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from ...common import STAGE, STAGES
from ...model.compile import Compile
from ...model.graph import Graph, Node

# The graphs whose module paths are inferred, in pipeline order (a graph learns from those
# before it): each keeps Dynamo's node names or AOTAutograd's.
_INFERRED = tuple(s.kind for s in STAGES if s.names)
# Graphs whose inputs line up with the Dynamo graph's, one to one (tangents aside).
_ALIGNED = tuple(s.kind for s in STAGES if s.layer == "aot" and s.names and s.role != "backward")
# Graphs whose node paths others with their names reuse: Dynamo's and AOTAutograd's.
_SOURCES = tuple(s.kind for s in STAGES if s.names and s.layer in ("dynamo", "aot"))


def _has_paths(graph: Graph) -> bool:
    computing = [n for n in graph.nodes if n.op != "placeholder" and n.op != "output"]
    return bool(computing) and sum(bool(n.module_path) for n in computing) * 2 >= len(computing)


# (file, line) -> the module paths the Dynamo graph's nodes of that source line have, in order:
# one for a line of the model's own forward (`x = self.bn1(x)`), one per block for a line of a
# block's forward (`out = self.bn1(out)`: layer1.0.bn1, layer1.1.bn1, ...).
LinePaths = dict[tuple[str, int], list[str]]


def line_paths(nodes: Sequence[Node], paths: Sequence[str | None]) -> LinePaths:
    """Each source line's module paths in `nodes` (a Dynamo graph's, with its paths)."""
    out: LinePaths = {}
    for n, path in zip(nodes, paths, strict=True):
        if path and n.source and n.op not in ("placeholder", "get_attr", "output"):
            found = out.setdefault((n.source.file, n.source.line), [])
            if path not in found:
                found.append(path)
    return out


def _shared(a: str, b: str) -> int:
    """How many leading parts two module paths share (`layer1.0.conv1`, `layer1.0.bn1`: 2)."""
    count = 0
    for x, y in zip(a.split("."), b.split("."), strict=False):
        if x != y:
            break
        count += 1
    return count


def propagate(
    nodes: Sequence[Node], known: dict[str, str], lines: LinePaths | None = None
) -> list[str | None]:
    """A path for each node: its own, a known one by name, else what it reads: a parameter
    first; else the module its source line calls in the Dynamo graph (`lines`), the one nearest
    what it reads where the line runs in many blocks; else what it reads last computed. A batch
    norm's decomposed ops (var_mean, rsqrt) read only the convolution before it: by the line
    they are the norm's; a residual add reads its block's last op and the block's input: it is
    the block's, not the one before."""
    paths: dict[str, str | None] = {}
    params = set()
    position: dict[str, int] = {}
    out = []
    for index, n in enumerate(nodes):
        position[n.name] = index
        path = n.module_path or known.get(n.name)
        if n.op in ("placeholder", "get_attr"):
            if path:
                params.add(n.name)
        elif not path and n.op != "output":
            read = [i for i in n.inputs if paths.get(i)]
            direct = [i for i in read if i in params]
            if direct:
                path = paths[direct[-1]]
            else:
                latest = max(read, key=position.__getitem__) if read else None
                path = paths[latest] if latest else None
                called = lines.get((n.source.file, n.source.line)) if lines and n.source else None
                if called and (len(called) == 1 or path):
                    near = path or ""
                    path = max(called, key=lambda c: _shared(c, near))  # first of the nearest
        paths[n.name] = path
        out.append(path if n.op != "output" else None)
    return out


# AOTAutograd marks each gradient its backward (or joint) graph returns with the forward input it
# is the gradient of: `mm_1,  # GradAOTOutput(grad_of=PlainAOTInput(idx=3))` (torch 2.11, 2.13).
_GRAD_OF = re.compile(
    r"^\s*([A-Za-z_]\w*),\s*#\s*GradAOTOutput\(grad_of=PlainAOTInput\(idx=(\d+)\)\)", re.MULTILINE
)


def gradient_outputs(nodes: Sequence[Node]) -> dict[str, int]:
    """Node name -> the index of the forward input whose gradient it is, from the comments on
    the graph's return; {} where torch printed none."""
    output = next((n for n in reversed(nodes) if n.op == "output"), None)
    if output is None or "GradAOTOutput" not in output.args_text:
        return {}
    return {name: int(index) for name, index in _GRAD_OF.findall(output.args_text)}


def gradient_chains(
    nodes: Sequence[Node], paths: list[str | None], seeds: dict[str, str]
) -> list[str | None]:
    """`paths` where a parameter's gradient is made: each gradient output (`seeds`: name ->
    its parameter's module) takes that module, and so does each op whose one user is such a
    node (the tangent's permute before a weight-gradient mm, the sum before a bias gradient's
    view). By what they read, a weight gradient went to the module before (GPT-2's c_proj
    weight gradient to c_fc, whose output it reads) or, on one line running two modules
    (`self.fc2(self.fc1(x).relu())`), to the first. An op with more users (the gradient that
    flows on to the next module) or that reads a parameter keeps its own."""
    position = {n.name: i for i, n in enumerate(nodes)}
    params = {n.name for n, p in zip(nodes, paths, strict=True)
              if p and n.op in ("placeholder", "get_attr")}  # fmt: skip
    users: list[list[int]] = [[] for _ in nodes]
    for i, n in enumerate(nodes):
        for name in n.inputs if n.op != "output" else ():
            if name in position:
                users[position[name]].append(i)
    out = list(paths)
    chain: set[int] = set()
    for i in range(len(nodes) - 1, -1, -1):
        n = nodes[i]
        if n.op in ("placeholder", "get_attr", "output") or n.module_path:
            continue
        if n.name in seeds:
            out[i] = seeds[n.name]
            chain.add(i)
        elif len(users[i]) == 1 and users[i][0] in chain and not params & set(n.inputs):
            out[i] = out[users[i][0]]
            chain.add(i)
    return out


def _is_tangent(node: Node) -> bool:
    return node.op == "placeholder" and node.name.rsplit(".", 1)[-1].startswith("tangents_")


# Ops that only re-view a tensor: where a graph gives them no module, they follow the tensor.
_VIEWS = frozenset(("view", "_unsafe_view", "reshape", "alias", "permute", "expand", "unsqueeze",
                    "squeeze", "t", "transpose", "slice", "select", "getitem", "as_strided"))  # fmt: skip


def _is_view(node: Node) -> bool:
    # `torch.ops.aten.view.default`, `torch.ops.aten.squeeze.dims`, `operator.getitem`
    return node.op == "call_function" and any(p in _VIEWS for p in node.target.split(".")[-2:])


def fill_gaps(nodes: Sequence[Node], paths: Sequence[str | None]) -> list[str | None]:
    """`paths` with the gaps filled where a node computes gradients (it reads a tangent, at any
    distance) or only re-views a tensor: the path of what it reads (`propagate`'s rule); an op
    that reads from and feeds only one module, and a constant whose users are all in one, take
    that module. Other forward ops keep theirs: an op in the model's own `forward` has no
    module but the root, and stays."""
    by_name = {n.name: p for n, p in zip(nodes, paths, strict=True) if p}
    filled = propagate(nodes, by_name)
    out = list(paths)
    for i, (n, role) in enumerate(zip(nodes, gradient_kinds(nodes), strict=True)):
        if not out[i] and n.op != "output" and (role == 2 or _is_view(n)):
            out[i] = filled[i]
    # An op between nodes of one module is that module's (Inductor's padded matmul in lm_head:
    # pad, mm, slice, none with a module stack); so is a constant all of whose users are.
    position = {n.name: i for i, n in enumerate(nodes)}
    users: list[list[int]] = [[] for _ in nodes]
    for i, n in enumerate(nodes):
        for name in n.inputs:
            if name in position:
                users[position[name]].append(i)
    changed = True
    while changed:
        changed = False
        for i, n in enumerate(nodes):
            if out[i] or n.op != "call_function":
                continue
            after = {out[u] for u in users[i]}
            before = {out[position[name]] for name in n.inputs if name in position}
            if len(after) == 1 and None not in after and before <= after | {None}:
                if n.inputs and not before - {None}:
                    continue  # between nothing with a module and one module: not inside it
                out[i] = next(iter(after))
                changed = True
    return out


def gradient_kinds(nodes: Sequence[Node]) -> list[int]:
    """Per node: 0 an input (placeholder, get_attr), 1 an op, 2 an op on the gradient (it reads
    a tangent, at any distance)."""
    grad: set[str] = set()
    out = []
    for n in nodes:
        if n.op in ("placeholder", "get_attr"):
            if _is_tangent(n):
                grad.add(n.name)
            out.append(0)
        elif n.op != "output" and any(name in grad for name in n.inputs):
            grad.add(n.name)
            out.append(2)
        else:
            out.append(1)
    return out


def sides(nodes: Sequence[Node]) -> list[str | None]:
    """A joint graph's two halves: "backward" for what reads a tangent (at any distance) or
    only feeds the backward, "forward" for the other ops; inputs and the output sit on neither."""
    grad = {n.name for n, role in zip(nodes, gradient_kinds(nodes), strict=True) if role == 2}
    users: dict[str, list[str]] = {}
    for n in nodes:
        for name in n.inputs if n.op != "output" else ():
            users.setdefault(name, []).append(n.name)
    out: list[str | None] = [None] * len(nodes)
    for i in range(len(nodes) - 1, -1, -1):
        n = nodes[i]
        if n.op in ("placeholder", "get_attr", "output"):
            continue
        feeds = users.get(n.name, [])  # the output aside: it returns forward outputs too
        if n.name in grad or (feeds and all(u in grad for u in feeds)):
            grad.add(n.name)
            out[i] = "backward"
        else:
            out[i] = "forward"
    return out


def _by_source(nodes: Sequence[Node]) -> list[str | None]:
    """The user function each node came from (`# File: ... in fn`), when there are several."""
    keys = [n.source.function if n.source and n.source.function else None for n in nodes]
    return keys if len({k for k in keys if k}) > 1 or None not in keys else [None] * len(nodes)


def infer_paths(
    c: Compile, kinds: Collection[str] | None = None
) -> dict[tuple[str, int], list[str | None]]:
    """(graph kind, number) -> a module path (or None) per node, for graphs that log none or
    log them with gaps (autograd's own ops, parameters). `kinds`: only those graphs' paths are
    wanted (the graphs others learn from are read all the same); None: every graph's."""
    dynamo = c.graph("dynamo_output_graph")
    inputs = [n.module_path for n in dynamo.placeholders] if dynamo else []
    # Two name spaces: pre-grad graphs keep Dynamo's node names, post-grad ones AOTAutograd's.
    known: dict[str, dict[str, str]] = {"dynamo": {}, "aot": {}}
    lines: LinePaths = {}  # the Dynamo graph's, once its paths are known
    out: dict[tuple[str, int], list[str | None]] = {}
    for kind in _INFERRED:
        if kinds is not None and kind not in kinds and kind not in _SOURCES:
            continue  # not wanted, and no later graph learns from it: not even parsed
        space = STAGE[kind].names or "aot"
        for number, graph in enumerate(c.graphs.get(kind, ())):
            paths = [n.module_path for n in graph.nodes]
            names: dict[str, str] = dict(known[space])
            primals = [n for n in graph.placeholders if not n.name.startswith("tangents")]
            if kind in _ALIGNED and len(primals) == len(inputs):
                names.update({n.name: p for n, p in zip(primals, inputs, strict=True) if p})
            if _has_paths(graph):
                # Parameters too: `primals_5` is h.0.attn's weight, read by its backward.
                held = [p or (names.get(n.name) if n.op == "placeholder" else None)
                        for n, p in zip(graph.nodes, paths, strict=True)]  # fmt: skip
                filled = fill_gaps(graph.nodes, held)
                if filled != paths:
                    out[(kind, number)] = paths = filled
            else:
                paths = propagate(graph.nodes, names, lines)
                seeds: dict[str, str] = {}
                for name, k in gradient_outputs(graph.nodes).items():
                    if k < len(inputs) and (parameter := inputs[k]):
                        seeds[name] = parameter
                if seeds:
                    paths = gradient_chains(graph.nodes, paths, seeds)
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
            if kind == "dynamo_output_graph" and not lines:
                lines = line_paths(graph.nodes, paths)
    return out
