"""A graph as the explorer draws it: compact node columns, a group tree, and each group's layout.

Big graphs are grouped (by module path, else in blocks of topological order) and each group is laid
out once, here, on its own: the browser only places laid-out groups next to each other when one
is expanded, so expanding never runs a layout algorithm in JavaScript.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..model.graph import Graph, Node
from .layout import layout_graph

# Items laid out side by side inside one group; more are split into blocks of topological order.
GROUP_LIMIT = 100
# Graphs with more nodes start with their groups collapsed.
COLLAPSE_ABOVE = 300
_OPS = ("placeholder", "call_function", "call_method", "call_module", "get_attr", "output")


@dataclass
class _Group:
    label: str
    parent: int
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


def _module_parts(node: Node) -> tuple[str, ...]:
    if not node.module_path:
        return ()
    return tuple(p for p in node.module_path.replace("/", ".").split(".") if p)


def build_groups(nodes: Sequence[Node]) -> list[_Group]:
    """Group 0 is the root. Module paths make the tree; oversized levels split into blocks."""
    groups = [_Group("", -1, first=0)]
    parts = [_module_parts(n) for n in nodes]

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
                if len(nxt) != 1 or None in nxt:
                    break
                label += "." + nxt.pop()
                level += 1
            child = len(groups)
            groups.append(_Group(label, gid, first=min(inside)))
            groups[gid].children.append(child)
            fill(child, inside, level)
        groups[gid].members = sorted(direct)
        _split_oversized(groups, gid)

    fill(0, list(range(len(nodes))), 0)
    for g in reversed(groups):  # children come after parents: sizes bottom-up
        g.size = len(g.members) + sum(groups[c].size for c in g.children)
    return groups


def _split_oversized(groups: list[_Group], gid: int) -> None:
    """Too many items in one group: put consecutive items (topological order) into blocks."""
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
        label = f"nodes {chunk[0][2]}\u2013{chunk[-1][2]}"
        groups.append(_Group(label, gid, first=chunk[0][2]))
        group.children.append(block)
        groups[block].members = [i for kind, i, _ in chunk if kind == "n"]
        for kind, i, _ in chunk:
            if kind == "g":
                groups[block].children.append(i)
                groups[i].parent = block
        _split_oversized(groups, block)


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


def _nodes_inside(groups: list[_Group]) -> list[list[int]]:
    """Every node index inside each group, all levels (children come after their parents)."""
    inside = [list(g.members) for g in groups]
    for gid in range(len(groups) - 1, 0, -1):
        inside[groups[gid].parent].extend(inside[gid])
    return inside


def explorer_payload(graph: Graph, *, title: str = "", kernels_of: dict | None = None) -> dict:
    """The explorer's data for one graph: JSON-ready, every string as text (escaped by the view).

    `kernels_of` maps a node name to the kernels that compute it (post-grad graphs).
    """
    nodes = graph.nodes
    index = {n.name: i for i, n in enumerate(nodes)}
    strings = _Strings()
    inputs = [[index[name] for name in n.inputs if name in index] for n in nodes]
    groups = build_groups(nodes)
    inside = _nodes_inside(groups)
    layouts = [_layout_group(groups, gid, inside, inputs) for gid in range(len(groups))]
    kernels_of = kernels_of or {}
    return {
        "title": title or graph.kind,
        "kind": graph.kind,
        "collapsed": len(nodes) > COLLAPSE_ABOVE,
        "strings": strings.items,  # filled below, by reference
        "names": [n.name for n in nodes],
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
        "mod": [strings(n.module_path) for n in nodes],
        "note": [strings(n.note or None) for n in nodes],
        "kernels": [[strings(k) for k in kernels_of.get(n.name, ())] for n in nodes],
        "groups": [
            {"label": g.label, "parent": g.parent, "size": g.size, **layouts[gid]}
            for gid, g in enumerate(groups)
        ],
        "ops": list(_OPS),
        "full_target": [strings(n.target) for n in nodes],
    }
