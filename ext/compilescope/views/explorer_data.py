"""A graph as the explorer draws it: compact node columns, a group tree, and each group's layout.

Big graphs are grouped (by module path, inferred where the log has none: views/module_groups.py)
and each group is laid out once, here, on its own; the first picture's placement is computed here
too (views/static_graph.py), so the browser's first paint and the static picture are the same
boxes. Expanding a group only places laid-out groups next to each other: no layout runs in JS.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..model.graph import Graph, Node
from .layout import layout_graph

# Items laid out side by side inside one group; more are split into blocks of topological order.
GROUP_LIMIT = 100
# Graphs with more nodes are called big (the fallback pictures fewer of their groups).
COLLAPSE_ABOVE = 300
# The first picture opens groups while it shows at most this many boxes ...
FIRST_BOXES = 60
# ... except in a graph this small, which opens whole (folded inputs aside): every node's name
# and op readable at first paint (explorer.js draws such graphs at scale >= 1 and scrolls).
OPEN_WHOLE_UP_TO = 150
# More inputs than this in one group fold into a closed "inputs" group, so that a row of
# parameters does not set the drawing's width (and scale).
FOLD_INPUTS = 5
_INPUT_OPS = ("placeholder", "get_attr")
_OPS = ("placeholder", "call_function", "call_method", "call_module", "get_attr", "output")


@dataclass
class _Group:
    label: str
    parent: int
    closed: bool = False  # starts closed even when the graph is small (folded inputs)
    members: list[int] = field(default_factory=list)  # node indices directly inside
    children: list[int] = field(default_factory=list)  # group indices directly inside
    first: int = 0  # smallest node index inside (topological position)
    size: int = 0  # nodes inside, all levels


def _short_target(node: Node) -> str:
    target = node.target
    for prefix in ("torch.ops.aten.", "torch.ops.prims.", "torch.ops."):
        if target.startswith(prefix):
            target = target[len(prefix) :]
            break
    return target.removesuffix(".default")


_PARAM = re.compile(r"^l_self_(?:modules_)?(.*?)_?$")


def _input_label(name: str) -> str | None:
    """Dynamo's lifted parameter and buffer names as attribute paths (`h.0.attn.c_attn.bias`)."""
    found = _PARAM.match(name)
    if not found:
        return None
    rest = found.group(1)
    for part in ("_modules_", "_parameters_", "_buffers_"):
        rest = rest.replace(part, ".")
    for part in ("parameters_", "buffers_"):
        rest = rest.removeprefix(part)
    return rest


class _Strings:
    """A string table: repeated targets, types and files are sent once."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, text: str | None) -> int:
        if text is None:
            return -1
        found = self.index.get(text)
        if found is None:
            found = self.index[text] = len(self.items)
            self.items.append(text)
        return found


def _module_parts(path: str | None) -> tuple[str, ...]:
    if not path:
        return ()
    parts = tuple(p for p in path.replace("/", ".").split(".") if p)
    # A module called through a bound method (`capture(model, x)` compiles `fn = model`) logs
    # paths like `fn.__self__.self_attn`: the part up to `__self__` names our wrapper, not the model.
    if "__self__" in parts:
        parts = parts[len(parts) - parts[::-1].index("__self__") :]
    return parts


def build_groups(nodes: Sequence[Node], paths: Sequence[str | None] | None = None) -> list[_Group]:
    """Group 0 is the root. Module paths make the tree (`paths` overrides the nodes' own);
    many inputs fold into one group; oversized levels split into runs named by their sources."""
    groups = [_Group("", -1, first=0)]
    if paths is None:
        paths = [n.module_path for n in nodes]
    parts = [_module_parts(p) for p in paths]

    def fill(gid: int, members: list[int], depth: int) -> None:
        by_child: dict[str, list[int]] = {}
        direct = []
        for i in members:
            if len(parts[i]) > depth:
                by_child.setdefault(parts[i][depth], []).append(i)
            else:
                direct.append(i)
        for key, inside in by_child.items():
            if len(inside) == 1:
                direct.append(inside[0])
                continue
            label, level = key, depth + 1
            # Fold chains like transformer -> h into one group "transformer.h".
            while True:
                nxt = {parts[i][level] if len(parts[i]) > level else None for i in inside}
                step = nxt.pop() if len(nxt) == 1 else None
                if step is None:
                    break
                label += "." + step
                level += 1
            child = len(groups)
            groups.append(_Group(label, gid, first=min(inside)))
            groups[gid].children.append(child)
            fill(child, inside, level)
        inputs = [i for i in direct if nodes[i].op in _INPUT_OPS]
        if len(inputs) > FOLD_INPUTS and len(inputs) < len(direct) + len(groups[gid].children):
            child = len(groups)
            groups.append(_Group(f"{len(inputs)} inputs", gid, closed=True, first=min(inputs)))
            groups[child].members = inputs
            groups[gid].children.append(child)
            direct = [i for i in direct if nodes[i].op not in _INPUT_OPS]
        groups[gid].members = sorted(direct)
        _split_oversized(groups, gid, nodes)

    fill(0, list(range(len(nodes))), 0)
    # Blocks made by splitting come after the groups they hold: sizes children first, by order.
    for gid in _post_order(groups):
        g = groups[gid]
        g.size = len(g.members) + sum(groups[c].size for c in g.children)
    return groups


def _post_order(groups: list[_Group]) -> list[int]:
    out, stack = [], [(0, False)]
    while stack:
        gid, done = stack.pop()
        if done:
            out.append(gid)
            continue
        stack.append((gid, True))
        stack.extend((c, False) for c in groups[gid].children)
    return out


def _run_label(nodes: Sequence[Node], members: list[int]) -> str:
    """What a run of nodes is, in the user's words: the source lines it spans when they differ,
    else the operations it does most (never positions)."""
    where = [s for i in members if (s := nodes[i].source)]
    lines = sorted({(w.function, w.line) for w in where})
    if len(lines) > 1:
        functions = list(dict.fromkeys(f for f, _ in lines if f))
        fn = (
            (functions[0] + (f" +{len(functions) - 1}" if len(functions) > 1 else "") + " ")
            if functions
            else ""
        )
        return f"{fn}lines {lines[0][1]}\u2013{lines[-1][1]}"
    counts: dict[str, int] = {}
    for i in members:
        if nodes[i].op not in ("placeholder", "output", "get_attr"):
            target = _short_target(nodes[i]).split(".")[0]
            counts[target] = counts.get(target, 0) + 1
    top = sorted(counts, key=lambda t: -counts[t])[:3]
    if top:
        return ", ".join(top) + ("\u2026" if len(counts) > 3 else "")
    return f"{nodes[members[0]].name} \u2026 {nodes[members[-1]].name}" if members else "group"


def _split_oversized(groups: list[_Group], gid: int, nodes: Sequence[Node]) -> None:
    """Too many items in one group: put consecutive items (topological order) into runs."""
    group = groups[gid]
    items = sorted(
        [("n", i, i) for i in group.members] + [("g", c, groups[c].first) for c in group.children],
        key=lambda item: item[2],
    )
    if len(items) <= GROUP_LIMIT:
        return
    # At most GROUP_LIMIT blocks; a block still too big is split again (blocks of blocks).
    blocks = min(GROUP_LIMIT, -(-len(items) // GROUP_LIMIT))
    per_block = -(-len(items) // blocks)
    group.members, group.children = [], []
    for start in range(0, len(items), per_block):
        chunk = items[start : start + per_block]
        block = len(groups)
        inside = [i for kind, i, _ in chunk if kind == "n"]
        label = _run_label(nodes, inside or [chunk[0][2]])
        groups.append(_Group(label, gid, first=chunk[0][2]))
        group.children.append(block)
        groups[block].members = [i for kind, i, _ in chunk if kind == "n"]
        for kind, i, _ in chunk:
            if kind == "g":
                groups[block].children.append(i)
                groups[i].parent = block
        _split_oversized(groups, block, nodes)


def _layout_group(
    groups: list[_Group], gid: int, inside: list[list[int]], inputs: list[list[int]]
) -> dict:
    """Lay out one group's items (its nodes and child groups) with the edges between them."""
    group = groups[gid]
    items = [("n", i) for i in group.members] + [("g", c) for c in group.children]
    item_of: dict[int, int] = {}  # node index -> item index within this group
    first = []
    for index, (kind, ref) in enumerate(items):
        if kind == "n":
            item_of[ref] = index
            first.append(ref)
        else:
            first.append(groups[ref].first)
    for child_index, (kind, ref) in enumerate(items):
        if kind == "g":
            for i in inside[ref]:
                item_of[i] = child_index
    edges = set()
    for index in item_of:
        b = item_of[index]
        for src in inputs[index]:
            a = item_of.get(src)
            # Quotients of a DAG can have cycles: keep edges that go forward in topological order.
            if a is not None and a != b and first[a] < first[b]:
                edges.add((a, b))
    lay = layout_graph(range(len(items)), sorted(edges))
    return {
        "items": [(ref if kind == "n" else -1 - ref) for kind, ref in items],
        "x": [round(lay.positions[i][0], 2) for i in range(len(items))],
        "y": [int(lay.positions[i][1]) for i in range(len(items))],
    }


def _first_open(groups: list[_Group], budget: int = FIRST_BOXES) -> set[int]:
    """The groups open in the first picture: outer levels first, biggest first, while the boxes
    shown stay within `budget`, so any graph opens readable; folded inputs stay closed."""
    opened, shown = {0}, len(groups[0].members) + len(groups[0].children)
    frontier = sorted(groups[0].children, key=lambda c: -groups[c].size)
    while frontier:
        nxt = []
        for gid in frontier:
            g = groups[gid]
            more = len(g.members) + len(g.children) - 1  # its items replace its box
            if g.closed or shown + more > budget:
                continue
            opened.add(gid)
            shown += more
            nxt += g.children
        frontier = sorted(nxt, key=lambda c: -groups[c].size)
    return opened


def _nodes_inside(groups: list[_Group]) -> list[list[int]]:
    """Every node index inside each group, all levels (children come after their parents)."""
    inside = [list(g.members) for g in groups]
    for gid in _post_order(groups):
        if gid:
            inside[groups[gid].parent].extend(inside[gid])
    return inside


def explorer_payload(
    graph: Graph,
    *,
    title: str = "",
    kernels_of: dict | None = None,
    module_paths: Sequence[str | None] | None = None,
) -> dict:
    """The explorer's data for one graph: JSON-ready, every string as text (escaped by the view).

    `kernels_of` maps a node name to the kernels that compute it (post-grad graphs);
    `module_paths` gives a module path per node where the graph's own are missing.
    """
    from .static_graph import SIZES, place

    nodes = graph.nodes
    index = {n.name: i for i, n in enumerate(nodes)}
    strings = _Strings()
    inputs = [[index[name] for name in n.inputs if name in index] for n in nodes]
    groups = build_groups(nodes, module_paths)
    inside = _nodes_inside(groups)
    layouts = [_layout_group(groups, gid, inside, inputs) for gid in range(len(groups))]
    kernels_of = kernels_of or {}
    collapsed = len(nodes) > COLLAPSE_ABOVE
    opened = _first_open(
        groups, len(nodes) + len(groups) if len(nodes) <= OPEN_WHOLE_UP_TO else FIRST_BOXES
    )
    computing = ("call_function", "call_method", "call_module")
    payload = {
        "title": title or graph.kind,
        "kind": graph.kind,
        "collapsed": collapsed,
        "sizes": SIZES,
        "strings": strings.items,  # filled below, by reference
        "names": [n.name for n in nodes],
        # What a box shows for a Dynamo input: `fc1.weight` for `l_self_modules_fc1_parameters_weight_`.
        "label": [strings(_input_label(n.name) if n.op in _INPUT_OPS else None) for n in nodes],
        "op": [_OPS.index(n.op) if n.op in _OPS else 1 for n in nodes],
        "target": [strings(_short_target(n)) for n in nodes],
        "type": [strings(n.type_text or None) for n in nodes],
        "in": inputs,
        "src": [
            [strings(n.source.file), n.source.line, strings(n.source.code or None)]
            if n.source
            else 0
            for n in nodes
        ],
        "mod": [
            strings(module_paths[i] if module_paths and module_paths[i] else n.module_path)
            for i, n in enumerate(nodes)
        ],
        "note": [strings(n.note or None) for n in nodes],
        "kernels": [[strings(k) for k in kernels_of.get(n.name, ())] for n in nodes],
        "groups": [
            {
                "label": g.label,
                "parent": g.parent,
                "size": g.size,
                "ops": sum(nodes[i].op in computing for i in inside[gid]),
                "open": gid in opened,
                **layouts[gid],
            }
            for gid, g in enumerate(groups)
        ],
        "ops": list(_OPS),
        "full_target": [strings(n.target) for n in nodes],
    }
    # The first picture, placed once here: the browser's first paint and the static SVG.
    payload["placed"] = [
        [b["id"] if b["kind"] == "node" else -1 - b["id"], round(b["x"], 1), round(b["y"], 1),
         b["w"], b["h"]]
        for b in place(payload, opened)
    ]  # fmt: skip
    return payload
