"""Layered drawing of a dataflow graph, computed once in Python for the widget and static pictures."""

# Longest-path layering (sources just above their first user), dummy nodes on long edges,
# crossing reduction (`layout_order`), then coordinates pulled toward their neighbours; on big
# graphs the longest edges run in straight lanes beside the drawing instead (`layout_lanes`).
# Written for FX graphs: flat DAGs of thousands of nodes, where dagre, elkjs and Graphviz take
# seconds to minutes.

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from .lanes import assign_lanes, body_crossings, pick_lane_edges
from .order import reduce_crossings

Node = Hashable
Point = tuple[float, float]
Edge = tuple[Node, Node]


@dataclass(frozen=True)
class Layout:
    """Where each node sits, and the polyline of each edge (through its dummy points)."""

    positions: dict[Node, Point]  # node -> (x, y)
    # ((source, target), ((x, y), ...)) in input order
    edges: tuple[tuple[Edge, tuple[Point, ...]], ...]
    layers: tuple[tuple[Node, ...], ...]  # each a tuple of node ids (dummies as ("~", i))
    # edges split at dummies: adjacent layers, but a lane's run skips layers
    segments: tuple[Edge, ...]
    width: float
    height: float

    @property
    def crossings(self) -> int:
        """Crossings between adjacent layers along the drawn polylines (a lane's straight run
        counts at every layer it passes, so this is what the eye sees)."""
        ys = sorted({y for _, points in self.edges for _, y in points})
        level = {y: i for i, y in enumerate(ys)}
        by_gap: list[list[tuple[float, float]]] = [[] for _ in ys]
        for _, points in self.edges:
            for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
                for k in range(level[y0], level[y1]):
                    by_gap[k].append(
                        (
                            x0 + (x1 - x0) * (ys[k] - y0) / (y1 - y0),
                            x0 + (x1 - x0) * (ys[k + 1] - y0) / (y1 - y0),
                        )
                    )
        return sum(_inversions([b for _, b in sorted(pairs)]) for pairs in by_gap)

    @property
    def edge_length(self) -> float:
        """Total length of the drawn edges (polylines through their dummy points)."""
        total = 0.0
        for _, points in self.edges:
            for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
                total += ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
        return total


def _layers_longest_path(nodes: Sequence[Node], edges: Sequence[Edge]) -> dict[Node, int]:
    preds: dict[Node, list[Node]] = {n: [] for n in nodes}
    succs: dict[Node, list[Node]] = {n: [] for n in nodes}
    for a, b in edges:
        preds[b].append(a)
        succs[a].append(b)
    # Kahn's order, so any DAG works (FX graphs already come in topological order).
    indegree = {n: len(preds[n]) for n in nodes}
    order = [n for n in nodes if indegree[n] == 0]
    for n in order:
        for s in succs[n]:
            indegree[s] -= 1
            if indegree[s] == 0:
                order.append(s)
    if len(order) != len(nodes):
        raise ValueError("layout needs a DAG; this graph has a cycle")
    layer: dict[Node, int] = {}
    for n in order:
        layer[n] = max((layer[p] + 1 for p in preds[n]), default=0)
    # Pull sources down next to their first consumer: an input used late need not sit at the top.
    for n in reversed(order):
        if not preds[n] and succs[n]:
            layer[n] = max(0, min(layer[s] for s in succs[n]) - 1)
    return layer


def layout_graph(
    nodes: Sequence[Node],
    edges: Iterable[tuple[Node, Node]],
    *,
    sweeps: int = 12,
    transpose_width: int = 64,
    x_gap: float = 1.0,
    y_gap: float = 1.0,
    max_vertices: int = 30_000,
    compact: bool = False,
) -> Layout:
    """Lay out a DAG.

    Crossing reduction (see `layout_order.reduce_crossings`) runs up to `sweeps` down+up
    barycenter rounds per phase, with transposition in layers of at most `transpose_width`
    vertices (0: none); `sweeps=0` keeps the input order within each layer. Where nodes and
    dummies together would pass `max_vertices`, the longest edges are drawn as straight lanes
    beside the drawing instead (see `layout_lanes`), so the rest gets the whole work budget.
    `compact`: for drawings whose edges run straight from node to node (the explorer's), the
    nodes' x only (`_compact_x`: no dummy columns), each edge drawn straight.
    """
    nodes = list(dict.fromkeys(nodes))
    known = set(nodes)
    edges = [(a, b) for a, b in edges if a in known and b in known and a != b]
    layer = _layers_longest_path(nodes, edges)
    depth = max(layer.values(), default=-1) + 1
    spans = [layer[b] - layer[a] - 1 for a, b in edges]
    lanes = set(pick_lane_edges(spans, len(nodes) + sum(spans), max_vertices))
    # Internally every vertex (node or dummy) is an int: nodes 0..n-1, then dummies.
    index = {n: i for i, n in enumerate(nodes)}
    names: list[Node] = list(nodes)
    rows: list[list[int]] = [[] for _ in range(depth)]
    for i, n in enumerate(nodes):
        rows[layer[n]].append(i)
    # Long edges become chains through one dummy per layer crossed.
    up: list[list[int]] = [[] for _ in nodes]  # vertex -> neighbours one layer above
    down: list[list[int]] = [[] for _ in nodes]
    chains: list[list[int]] = []
    for k, (a, b) in enumerate(edges):
        if k in lanes:
            continue
        chain = [index[a]]
        for level in range(layer[a] + 1, layer[b]):
            v = len(names)
            names.append(("~", v - len(nodes)))
            up.append([])
            down.append([])
            rows[level].append(v)
            chain.append(v)
        chain.append(index[b])
        chains.append(chain)
        for u, v in zip(chain, chain[1:], strict=False):
            down[u].append(v)
            up[v].append(u)
    if sweeps > 0:
        rows = reduce_crossings(rows, up, down, sweeps, transpose_width, chains)
    if compact:
        return _compact_layout(nodes, edges, rows, x_gap, y_gap)
    x = _coordinates(rows, up, down, x_gap, len(names))
    paths = dict(zip((k for k in range(len(edges)) if k not in lanes), chains, strict=True))
    if lanes:
        x = _add_lanes(edges, sorted(lanes), layer, index, names, rows, up, down, x, x_gap, paths)
    positions = [(0.0, 0.0)] * len(names)
    for layer_index, row in enumerate(rows):
        for v in row:
            positions[v] = (x[v], layer_index * y_gap)
    drawn = tuple((edge, tuple(positions[v] for v in paths[k])) for k, edge in enumerate(edges))
    width = max((p[0] for p in positions), default=0.0)
    segments = tuple(
        (names[u], names[v])
        for k in range(len(edges))
        for u, v in zip(paths[k], paths[k][1:], strict=False)
    )
    return Layout(
        {n: positions[i] for i, n in enumerate(nodes)},
        drawn,
        tuple(tuple(names[v] for v in r) for r in rows),
        segments,
        width,
        (depth - 1) * y_gap if depth else 0.0,
    )


def _add_lanes(
    edges: list[Edge],
    lanes: list[int],
    layer: dict[Node, int],
    index: dict[Node, int],
    names: list[Node],
    rows: list[list[int]],
    up: list[list[int]],
    down: list[list[int]],
    x: list[float],
    gap: float,
    paths: dict[int, list[int]],
) -> list[float]:
    """Put each lane edge on its side and track: a point where it reaches its track, one where
    it leaves it (both added to `rows`, `names` and `paths`), straight down in between. Lanes
    lie outside the body's widest extent, so they cross nothing but each other's ends."""
    position = [0] * len(names)
    for row in rows:
        for i, v in enumerate(row):
            position[v] = i
    ends = [(index[a], layer[a], index[b], layer[b]) for a, b in (edges[k] for k in lanes)]
    cost = body_crossings(rows, up, down, position, ends)
    side, track = assign_lanes([e[1] for e in ends], [e[3] for e in ends], cost)
    right = max(x, default=0.0)
    shift = (max((t for s, t in zip(side, track, strict=True) if s == 0), default=-1) + 1) * gap
    x = [value + shift for value in x]
    by_row: dict[int, list[tuple[float, int]]] = {}
    for k, (u, lu, v, lv), s, t in zip(lanes, ends, side, track, strict=True):
        at = shift + right + (t + 1) * gap if s else shift - (t + 1) * gap
        first, last = len(names), len(names) + 1
        for level in (lu + 1, lv - 1):
            names.append(("~", len(names) - len(index)))
            x.append(at)
            by_row.setdefault(level, []).append((at, len(names) - 1))
        paths[k] = [u, first, last, v]
    for level, extra in by_row.items():
        extra.sort()
        rows[level] = [v for at, v in extra if at < shift] + rows[level]
        rows[level] += [v for at, v in extra if at >= shift]
    return x


def _coordinates(
    rows: list[list[int]], up: list[list[int]], down: list[list[int]], gap: float, count: int
) -> list[float]:
    """x per vertex: start from order, then pull each toward its neighbours' mean, keeping order."""
    x = [0.0] * count
    for row in rows:
        for i, v in enumerate(row):
            x[v] = i * gap
    for direction in (up, down, up, down):
        for row in rows if direction is up else reversed(rows):
            wanted = []
            for v in row:
                near = direction[v]
                wanted.append(sum(x[m] for m in near) / len(near) if near else x[v])
            # Keep the order and the gap: left-to-right minimum, then a right-to-left pass.
            placed: list[float] = []
            for w in wanted:
                placed.append(max(w, placed[-1] + gap) if placed else w)
            # The push went right only; pull back so the row is centred on what it wanted.
            shift = (sum(placed) - sum(wanted)) / len(placed) if placed else 0.0
            for v, value in zip(row, placed, strict=True):
                x[v] = value - shift
    low = min(x, default=0.0)
    return [v - low for v in x]


def _compact_layout(
    nodes: list[Node], edges: list[Edge], rows: list[list[int]], gap: float, y_gap: float
) -> Layout:
    """The layout with the dummy vertices taken out: within as many columns as the widest layer
    has nodes, each layer in its order, its nodes pulled toward their neighbours' mean; a
    long edge's dummies would only widen the drawing with empty columns."""
    count = len(nodes)
    rows = [[v for v in row if v < count] for row in rows]
    index = {n: i for i, n in enumerate(nodes)}
    near: list[list[int]] = [[] for _ in nodes]
    for a, b in edges:
        near[index[a]].append(index[b])
        near[index[b]].append(index[a])
    last = max((len(r) for r in rows), default=1) - 1.0
    x = [0.0] * count
    for row in rows:  # start centred
        for i, v in enumerate(row):
            x[v] = i + (last - len(row) + 1) / 2
    # Rows of one vertex (most rows of a group) as (vertex, its neighbours); the others with
    # their neighbours and the rightmost place each may take.
    plan = [(row[0], near[row[0]]) if len(row) == 1
            else (row, [near[v] for v in row], [last - (len(row) - 1 - i) for i in range(len(row))])
            for row in rows]  # fmt: skip
    # min() and max() of two as comparisons (`b if b < a else a` is min(a, b), ties and all):
    # this loop runs up to four times over every vertex of every group shape, and the calls
    # were most of its time. A sweep that moves nothing ends it: each place is a function of
    # the places around it, so the sweeps left would move nothing either (no -0.0 or NaN arise
    # here, so == is sameness).
    at = x.__getitem__
    for sweep in range(4):
        moved = False
        for step in plan if sweep % 2 == 0 else reversed(plan):
            if len(step) == 2:  # one vertex: toward its neighbours' mean, within [0, last]
                v, around = step
                wanted = sum(map(at, around)) / len(around) if around else x[v]
                wanted = last if last < wanted else wanted
                wanted = 0.0 if 0.0 > wanted else wanted
                if wanted != x[v]:
                    x[v], moved = wanted, True
                continue
            row, nears, highest = step
            # Keep the order, a column apart, within [0, last]: right to left, then left to right.
            placed = []
            for v, around, high in zip(row, nears, highest, strict=True):
                wanted = sum(map(at, around)) / len(around) if around else x[v]
                placed.append(high if high < wanted else wanted)
            for i in range(len(placed) - 2, -1, -1):
                value, bound = placed[i], placed[i + 1] - 1
                placed[i] = bound if bound < value else value
            low = 0.0
            for v, value in zip(row, placed, strict=True):
                low = low if low > value else value
                if low != x[v]:
                    x[v], moved = low, True
                low += 1
        if not moved:
            break
    positions: dict[Node, Point] = {}
    for level, row in enumerate(rows):
        for v in row:
            positions[nodes[v]] = (x[v] * gap, level * y_gap)
    return Layout(
        positions,
        tuple(((a, b), (positions[a], positions[b])) for a, b in edges),
        tuple(tuple(nodes[v] for v in row) for row in rows),
        tuple(edges),
        last * gap,
        (len(rows) - 1) * y_gap if rows else 0.0,
    )


def count_crossings(layers: Sequence[Sequence[Node]], edges: Iterable[tuple[Node, Node]]) -> int:
    """Edge crossings between adjacent layers (edges must join adjacent layers: use dummies)."""
    index = {n: (li, i) for li, row in enumerate(layers) for i, n in enumerate(row)}
    by_gap: dict[int, list[tuple[int, int]]] = {}
    for a, b in edges:
        (la, ia), (lb, ib) = index[a], index[b]
        if lb == la + 1:
            by_gap.setdefault(la, []).append((ia, ib))
        elif la == lb + 1:
            by_gap.setdefault(lb, []).append((ib, ia))
    return sum(_inversions([b for _, b in sorted(pairs)]) for pairs in by_gap.values())


def _inversions(values: list[float]) -> int:
    """Pairs i < j with values[i] > values[j], by merge sort: O(n log n)."""
    if len(values) < 2:
        return 0
    mid = len(values) // 2
    left, right = values[:mid], values[mid:]
    count = _inversions(left) + _inversions(right)
    left.sort()
    right.sort()
    j = 0
    for v in left:
        while j < len(right) and right[j] < v:
            j += 1
        count += j
    return count
