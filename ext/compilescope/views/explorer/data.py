"""A graph as the explorer draws it: compact node columns, a group tree, and each group's layout.

Big graphs are grouped (by module path, inferred where the log has none: views/explorer/module_groups.py)
and each group is laid out once, here, on its own; the first picture's placement is computed here
too (views/explorer/static_graph.py), so the browser's first paint and the static picture are the same
boxes. Expanding a group only places laid-out groups next to each other: no layout runs in JS.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ...model.graph import Graph
from .groups import (
    GROUP_LIMIT,
    INPUT_OPS,
    SIDES,
    Group,
    build_groups,
    nodes_inside,
    post_order,
    short_target,
)
from .layout import layout_graph
from .module_groups import gradient_kinds, sides

__all__ = ["COLLAPSE_ABOVE", "GROUP_LIMIT", "OPEN_WHOLE_UP_TO", "explorer_payload"]
# Graphs with more nodes are called big (the fallback pictures fewer of their groups).
COLLAPSE_ABOVE = 300
# The first picture opens groups while, placed at scale 1 (CSS px), it fits this box: the
# explorer's canvas in a 1400 x 950 window, less its margins (explorer_draw.js fits the drawing
# to the canvas, so it is drawn at scale >= 1, labels at 11 px or more; in a narrower output
# explorer.js opens less) ...
FIRST_W, FIRST_H = 1200, 760
# ... and shows at most this many boxes; a picture of fewer opens the next level even when
# that is taller than the canvas (it scrolls) ...
FIRST_BOXES, FEW_BOXES = 60, 8
# ... except in a graph this small, which opens whole (folded inputs aside): every node's name
# and op readable at first paint (explorer.js draws such graphs at scale >= 1 and scrolls).
OPEN_WHOLE_UP_TO = 150
_OPS = ("placeholder", "call_function", "call_method", "call_module", "get_attr", "output")


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

    def many(self, texts: list[str | None]) -> list[int]:
        """`[self(t) for t in texts]` in one call: the payload sends a dozen per node."""
        index, items = self.index, self.items
        out = []
        for text in texts:
            if text is None:
                out.append(-1)
                continue
            found = index.get(text)
            if found is None:
                found = index[text] = len(items)
                items.append(text)
            out.append(found)
        return out


def _places(groups: list[Group], role: list[int]) -> list[float]:
    """Each group's place in the graph's topological order: the mean index of its ops on the
    gradient if it has any, else of its ops, else of its nodes. Not its first node: a backward
    group holds what its forward saved (placeholders, at the very start) and forward ops
    recomputed early; the backward's order is the gradient's. Sums and counts per role, children
    first: each node is counted once, not once per group above it (integer sums, so the same
    means as summing each group's nodes)."""
    sums = [[0, 0, 0] for _ in groups]
    counts = [[0, 0, 0] for _ in groups]
    for gid in post_order(groups):
        total, count = sums[gid], counts[gid]
        for i in groups[gid].members:
            total[role[i]] += i
            count[role[i]] += 1
        for child in groups[gid].children:
            for r in (0, 1, 2):
                total[r] += sums[child][r]
                count[r] += counts[child][r]
    out = []
    for total, count in zip(sums, counts, strict=True):
        wanted = next((r for r in (2, 1, 0) if count[r]), None)
        out.append(total[wanted] / count[wanted] if wanted is not None else 0.0)
    return out


def _layout_group(
    groups: list[Group],
    gid: int,
    inside: list[list[int]],
    inputs: list[list[int]],
    places: list[float],
) -> dict[str, Any]:
    """Lay out one group's items (its nodes and child groups) with the edges between them.
    `places`: each group's place in the graph's order (`_places`)."""
    group = groups[gid]
    key = {("n", i): float(i) for i in group.members}
    key.update({("g", c): places[c] for c in group.children})
    # In that order: the layout's first order and its fallback follow the model (the
    # backward's groups come in reverse, as it runs).
    items = sorted(key, key=key.__getitem__)
    item_of: dict[int, int] = {}  # node index -> item index within this group
    for index, (kind, ref) in enumerate(items):
        if kind == "n":
            item_of[ref] = index
        else:
            item_of.update(dict.fromkeys(inside[ref], index))
    # A partition's forward and backward sit side by side (the saved tensors drawn across the
    # cut), not one under the other: a model's depth is drawn once, not twice.
    halves = {j for j, (kind, ref) in enumerate(items)
              if kind == "g" and gid == 0 and groups[ref].path.split(".")[0] in SIDES}  # fmt: skip
    at = item_of.get
    # The edges between the items: from each node inside, its inputs in another item (one
    # comprehension: a node is walked here once per group above it).
    joined = {(a, b) for index, b in item_of.items() for src in inputs[index]
              if (a := at(src)) is not None and a != b}  # fmt: skip
    if halves:
        joined = {(a, b) for a, b in joined if not (a in halves and b in halves)}
    edges = _acyclic([key[item] for item in items], joined)
    x, y = _placed(len(items), edges)
    return {
        "items": [(ref if kind == "n" else -1 - ref) for kind, ref in items],
        "x": list(x),
        "y": list(y),
    }


# Group layouts by their shape (items and edges): the blocks of a model (h.0, h.1, ...), a
# graph and the next stage's copy of it (Dynamo and pre-grad, forward and post-grad) lay out
# the same groups; each shape is laid out once. Bounded, as _LAID_OUT in view_data.
_Shape = tuple[int, tuple[tuple[int, int], ...]]
_SHAPES: dict[_Shape, tuple[tuple[float, ...], tuple[int, ...]]] = {}
_SHAPES_MAX = 4096


def _placed(count: int, edges: list[tuple[int, int]]) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """x and y of `count` items joined by `edges` (the layout is a function of these alone)."""
    key = (count, tuple(edges))
    found = _SHAPES.get(key)
    if found is None:
        # Edges are drawn straight from box to box, so the layout's dummy columns would be empty.
        lay = layout_graph(range(count), edges, compact=True)
        found = (
            tuple(round(lay.positions[i][0], 2) for i in range(count)),
            tuple(int(lay.positions[i][1]) for i in range(count)),
        )
        if len(_SHAPES) >= _SHAPES_MAX:
            _SHAPES.clear()
        _SHAPES[key] = found
    return found


def _acyclic(order: list[float], edges: set[tuple[int, int]]) -> list[tuple[int, int]]:
    """The edges between a group's items, all of them when they make no cycle; else (a quotient
    of a DAG can have cycles: a module's backward reads what its forward saved) those that go
    forward in `order`, each item's place in the graph's topological order."""
    succ: list[list[int]] = [[] for _ in order]
    indegree = [0] * len(order)
    for a, b in edges:
        succ[a].append(b)
        indegree[b] += 1
    ready = [v for v in range(len(order)) if not indegree[v]]
    for v in ready:
        for u in succ[v]:
            indegree[u] -= 1
            if not indegree[u]:
                ready.append(u)
    if len(ready) == len(order):
        return sorted(edges)
    return sorted((a, b) for a, b in edges if order[a] < order[b])


def _first_open(
    groups: list[Group],
    laid: list[dict[str, Any]],
    whole: bool,
    placed: dict[frozenset[int], list[dict[str, Any]]],
) -> tuple[set[int], bool]:
    """The groups open in the first picture, and whether it is taller than the canvas (drawn at
    scale 1 from its top, to scroll). A small graph opens whole (closed boxes aside). Else the
    model's structure first: groups that hold groups open, a whole level at a time (six layers,
    not one; a partition's two halves alike), while the picture placed at scale 1 fits FIRST_W x
    FIRST_H; once all of those are open, groups of plain nodes open too, biggest first, while
    it still fits and shows at most FIRST_BOXES boxes. A level too tall to fit (a model of 19
    layers) still opens when it is as wide as the canvas and would otherwise leave a picture
    of a few boxes: its top is drawn, the rest scrolls. `placed`: the pictures placed on the
    way, by the groups open (the same one is asked for again, and the last is the payload's)."""
    from .static_graph import place

    if whole:
        return {gid for gid, g in enumerate(groups) if not g.closed}, False
    shown = {"groups": laid}

    def boxes_of(opened: set[int]) -> list[dict[str, Any]]:
        key = frozenset(opened)
        if key not in placed:
            placed[key] = place(shown, opened)
        return placed[key]

    def fits(opened: set[int], tall: bool = False) -> bool:
        boxes = boxes_of(opened)
        return (
            len(boxes) <= FIRST_BOXES + len(opened)
            and max((b["x"] + b["w"] for b in boxes), default=0) <= FIRST_W
            and (tall or max((b["y"] + b["h"] for b in boxes), default=0) <= FIRST_H)
        )

    def holds_modules(gid: int) -> bool:
        return groups[gid].module and any(groups[c].module for c in groups[gid].children)

    opened, level, complete = {0}, [0], True
    while level:
        inner = [c for p in level for c in groups[p].children if holds_modules(c)]
        if not inner:
            break
        if not fits(opened | set(inner)):
            few = len(boxes_of(opened)) - len(opened) < FEW_BOXES
            if few and fits(opened | set(inner), tall=True):
                return opened | set(inner), True
            complete = False
            break
        opened |= set(inner)
        level = inner
    if complete:
        leaves = [
            gid
            for gid, g in enumerate(groups)
            if g.module and gid not in opened and g.parent in opened
        ]
        for gid in sorted(leaves, key=lambda c: -groups[c].size):
            if fits(opened | {gid}):
                opened.add(gid)
    return opened, False


def explorer_payload(
    graph: Graph,
    *,
    title: str = "",
    kernels_of: dict[str, list[str]] | None = None,
    module_paths: Sequence[str | None] | None = None,
) -> dict[str, Any]:
    """The explorer's data for one graph: JSON-ready, every string as text (escaped by the view).

    `kernels_of` maps a node name to the kernels that compute it (post-grad graphs);
    `module_paths` gives a module path per node where the graph's own are missing.
    """
    from .static_graph import SIZES, place

    nodes = graph.nodes
    index = {n.name: i for i, n in enumerate(nodes)}
    strings = _Strings()
    inputs = [[index[name] for name in n.inputs if name in index] for n in nodes]
    whole = len(nodes) <= OPEN_WHOLE_UP_TO
    paths = list(module_paths) if module_paths else [n.module_path for n in nodes]
    if graph.kind == "aot_joint_graph" and not whole:
        # Its forward and backward apart, side by side, as the partition draws them: each
        # layer's backward under "backward", in the order it runs.
        paths = [
            f"{side}.{path}" if side and path else side
            for side, path in zip(sides(nodes), paths, strict=True)
        ]
    groups = build_groups(nodes, paths, runs=not whole)
    inside = nodes_inside(groups)
    # Per node, 0 for an input, 1 for an op, 2 for an op on the gradient (it reads a tangent,
    # at any distance): the backward's order is the gradient's.
    places = _places(groups, gradient_kinds(nodes))
    layouts = [_layout_group(groups, gid, inside, inputs, places) for gid in range(len(groups))]
    kernels_of = kernels_of or {}
    collapsed = len(nodes) > COLLAPSE_ABOVE
    placed: dict[frozenset[int], list[dict[str, Any]]] = {}
    opened, tall = _first_open(groups, layouts, whole, placed)
    # Ops inside each group, all levels: children first, each node counted once.
    computing = ("call_function", "call_method", "call_module")
    is_op = [n.op in computing for n in nodes]
    ops = [0] * len(groups)
    for gid in post_order(groups):
        group = groups[gid]
        ops[gid] = sum([is_op[i] for i in group.members]) + sum([ops[c] for c in group.children])
    payload = {
        "title": title or graph.kind,
        "kind": graph.kind,
        "collapsed": collapsed,
        "tall": tall,  # its first picture is drawn at scale 1 from the top, and scrolls
        "sizes": SIZES,
        "strings": strings.items,  # filled below, by reference
        "names": [n.name for n in nodes],
        # What a box shows for a Dynamo input: `fc1.weight` for `l_self_modules_fc1_parameters_weight_`.
        "label": strings.many([_input_label(n.name) if n.op in INPUT_OPS else None for n in nodes]),
        "op": [_OPS.index(n.op) if n.op in _OPS else 1 for n in nodes],
        "target": strings.many([short_target(n) for n in nodes]),
        "type": strings.many([n.type_text or None for n in nodes]),
        "in": inputs,
        "src": [
            [strings(n.source.file), n.source.line, strings(n.source.code or None)]
            if n.source
            else 0
            for n in nodes
        ],
        "mod": strings.many(
            [
                module_paths[i] if module_paths and module_paths[i] else n.module_path
                for i, n in enumerate(nodes)
            ]
        ),
        "note": strings.many([n.note or None for n in nodes]),
        "kernels": [[strings(k) for k in kernels_of.get(n.name, ())] for n in nodes],
        "groups": [
            {
                "label": g.label,
                "path": g.path,
                "parent": g.parent,
                "size": g.size,
                "ops": ops[gid],
                "open": gid in opened,
                **layouts[gid],
            }
            for gid, g in enumerate(groups)
        ],
        "ops": list(_OPS),
        "full_target": strings.many([n.target for n in nodes]),
    }
    # The first picture, placed once here: the browser's first paint and the static SVG (the
    # groups' items and places are the layouts' own, so _first_open's picture is this one).
    boxes = placed.get(frozenset(opened))
    payload["placed"] = [
        [b["id"] if b["kind"] == "node" else -1 - b["id"], round(b["x"], 1), round(b["y"], 1),
         b["w"], b["h"]]
        for b in (place(payload, opened) if boxes is None else boxes)
    ]  # fmt: skip
    return payload
