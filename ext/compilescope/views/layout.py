"""Layered drawing of a dataflow graph, computed once in Python for the widget and static pictures.

Longest-path layering, dummy nodes on long edges, barycentric crossing reduction, then
coordinates pulled toward their neighbours. Written for FX graphs: flat DAGs of thousands of
nodes, where dagre, elkjs and Graphviz take seconds to minutes.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

Node = Hashable


@dataclass(frozen=True)
class Layout:
    """Where each node sits, and the polyline of each edge (through its dummy points)."""

    positions: dict  # node -> (x, y)
    edges: tuple  # ((source, target), ((x, y), ...)) in input order
    layers: tuple  # tuple of layers, each a tuple of node ids (dummies as ("~", i))
    segments: tuple  # edges split at dummies: each joins adjacent layers
    width: float
    height: float

    @property
    def crossings(self) -> int:
        return count_crossings(self.layers, self.segments)

    @property
    def edge_length(self) -> float:
        """Total length of the drawn edges (polylines through their dummy points)."""
        total = 0.0
        for _, points in self.edges:
            for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
                total += ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
        return total


def _layers_longest_path(nodes: Sequence[Node], edges: Sequence[tuple[Node, Node]]) -> dict:
    preds: dict = {n: [] for n in nodes}
    succs: dict = {n: [] for n in nodes}
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
    layer: dict = {}
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
    sweeps: int = 4,
    x_gap: float = 1.0,
    y_gap: float = 1.0,
) -> Layout:
    """Lay out a DAG. Nodes keep their input order as the first guess within each layer."""
    nodes = list(dict.fromkeys(nodes))
    known = set(nodes)
    edges = [(a, b) for a, b in edges if a in known and b in known and a != b]
    layer = _layers_longest_path(nodes, edges)
    depth = max(layer.values(), default=-1) + 1
    rows: list[list] = [[] for _ in range(depth)]
    for n in nodes:
        rows[layer[n]].append(n)
    # Long edges become chains through one dummy per layer crossed.
    up: dict = {}  # node -> neighbours one layer above
    down: dict = {}
    chains = []
    dummy_count = 0
    for a, b in edges:
        chain = [a]
        for level in range(layer[a] + 1, layer[b]):
            d = ("~", dummy_count)
            dummy_count += 1
            rows[level].append(d)
            chain.append(d)
        chain.append(b)
        chains.append(chain)
        for u, v in zip(chain, chain[1:], strict=False):
            down.setdefault(u, []).append(v)
            up.setdefault(v, []).append(u)
    position = {n: i for row in rows for i, n in enumerate(row)}

    def reorder(row: list, neighbours: dict) -> None:
        def key(item):
            index, n = item
            near = neighbours.get(n)
            # Barycenter of the neighbours; nodes without any keep their place.
            return (sum(position[m] for m in near) / len(near) if near else index, index)

        row[:] = [n for _, n in sorted(enumerate(row), key=key)]
        for i, n in enumerate(row):
            position[n] = i

    for _ in range(sweeps):
        for row in rows[1:]:
            reorder(row, up)
        for row in reversed(rows[:-1]):
            reorder(row, down)
    x = _coordinates(rows, up, down, x_gap)
    positions = {
        n: (x[n], layer_index * y_gap) for layer_index, row in enumerate(rows) for n in row
    }
    drawn = tuple(((c[0], c[-1]), tuple(positions[n] for n in c)) for c in chains)
    width = max((p[0] for p in positions.values()), default=0.0)
    segments = tuple(pair for c in chains for pair in zip(c, c[1:], strict=False))
    return Layout(
        {n: positions[n] for n in nodes},
        drawn,
        tuple(tuple(r) for r in rows),
        segments,
        width,
        (depth - 1) * y_gap if depth else 0.0,
    )


def _coordinates(rows: list[list], up: dict, down: dict, gap: float) -> dict:
    """x per node: start from order, then pull each toward its neighbours' mean, keeping order."""
    x = {n: i * gap for row in rows for i, n in enumerate(row)}
    for direction in (up, down, up, down):
        for row in rows if direction is up else reversed(rows):
            wanted = []
            for n in row:
                near = direction.get(n)
                wanted.append(sum(x[m] for m in near) / len(near) if near else x[n])
            # Keep the order and the gap: left-to-right minimum, then a right-to-left pass.
            placed = []
            for w in wanted:
                placed.append(max(w, placed[-1] + gap) if placed else w)
            # The push went right only; pull back so the row is centred on what it wanted.
            shift = (sum(placed) - sum(wanted)) / len(placed) if placed else 0.0
            placed = [p - shift for p in placed]
            for n, value in zip(row, placed, strict=True):
                x[n] = value
    low = min(x.values(), default=0.0)
    return {n: v - low for n, v in x.items()}


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


def _inversions(values: list[int]) -> int:
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
