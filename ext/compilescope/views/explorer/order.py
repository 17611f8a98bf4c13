"""Crossing reduction for the layered layout: the order of the vertices within each layer."""

from __future__ import annotations

from bisect import bisect_right, insort
from typing import Any

# Crossing reduction costs about 1 us per vertex visit in CPython (a sweep visits every vertex,
# dummies included; re-routing an edge visits every segment of the gaps it spans). Big graphs
# get fewer passes: at most about this many visits in all, the same on every run.
_WORK_BUDGET = 3_000_000
_REROUTE_PASSES = 2
_MIN_CHAIN = 3  # re-route every edge with at least one dummy (source, dummy, target)


def reduce_crossings(
    rows: list[list[int]],
    up: list[list[int]],
    down: list[list[int]],
    sweeps: int,
    transpose_width: int,
    chains: list[list[int]],
) -> list[list[int]]:
    """Order each layer to have few crossings; returns the best order found.

    1. Start from a depth-first order from the sources (dot's initial order) and keep the input
       order as a fallback, whichever crosses less.
    2. Alternate down and up barycenter sweeps; after each, transpose neighbours in layers of at
       most `transpose_width` vertices while that lowers their crossings (Gansner et al.),
       recount crossings where layers changed (bilayer counts, O(E log V)) and keep the best
       order; stop after four sweeps without improvement or after `sweeps` down+up rounds.
    3. Re-route every long edge on its least-crossing path (`_reroute_long_edges`), then
       transpose; up to `_REROUTE_PASSES` times, while it helps.
    All of it within `_WORK_BUDGET` visits, so bigger graphs get fewer sweeps and less
    re-routing (`layout_lanes` keeps the vertices here to about 30,000 where it can).
    """
    size = sum(len(r) for r in rows) or 1
    position = [0] * len(up)
    _renumber(rows, position)
    best_count = _total_crossings(rows, down, position)
    best = [r[:] for r in rows]
    rows = _depth_first_order(rows, up, down)
    _renumber(rows, position)
    gaps = _gap_crossings(rows, down, position)
    count = sum(gaps)
    if count < best_count:
        best_count, best = count, [r[:] for r in rows]
    # Work is counted in vertex (or segment) visits, so big graphs do less of it, the same way
    # on every run: a quarter of the budget at most for the first sweeps, the rest for re-routing.
    budget = _WORK_BUDGET
    rounds = max(2, min(2 * sweeps, budget // (4 * size)))
    best, best_count = _sweep(
        rows, up, down, position, rounds, transpose_width, best, best_count, gaps
    )
    budget -= rounds * size
    # Re-draw long edges on their best routes; repeat while it helps. (Sweeping again after it
    # found nothing more on the test graphs, so the budget goes to re-routing.)
    for _ in range(_REROUTE_PASSES):
        if not best_count or budget <= 0:
            break
        rows = [r[:] for r in best]
        budget -= _reroute_long_edges(rows, up, down, chains, budget)
        _renumber(rows, position)
        if transpose_width > 1:
            _transpose(rows, up, down, position, transpose_width, [True] * len(rows))
        count = _total_crossings(rows, down, position)
        if count >= best_count:
            break
        best, best_count = rows, count
    return best


def _sweep(
    rows: list[list[int]],
    up: list[list[int]],
    down: list[list[int]],
    position: list[int],
    rounds: int,
    transpose_width: int,
    best: list[list[int]],
    best_count: int,
    gaps: list[int],
) -> tuple[list[list[int]], int]:
    """Barycenter sweeps (down, up, ...) from `rows`, with transposition; the best order seen.
    `gaps`: crossings per gap between layers of `rows`, recounted only where a layer changed."""
    stale = 0
    for step in range(rounds):
        if not best_count:
            break
        changed = [False] * len(rows)
        if step % 2 == 0:
            for i in range(1, len(rows)):
                changed[i] = _barycenter(rows[i], up, position)
        else:
            for i in range(len(rows) - 2, -1, -1):
                changed[i] = _barycenter(rows[i], down, position)
        if transpose_width > 1:
            _transpose(rows, up, down, position, transpose_width, changed)
        for i in range(len(gaps)):
            if changed[i] or changed[i + 1]:
                gaps[i] = _bilayer_crossings(rows[i], down, position, len(rows[i + 1]))
        count = sum(gaps)
        if count < best_count:
            best_count, best, stale = count, [r[:] for r in rows], 0
        else:
            stale += 1
            if stale >= 4:
                break
    return best, best_count


def _reroute_long_edges(
    rows: list[list[int]],
    up: list[list[int]],
    down: list[list[int]],
    chains: list[list[int]],
    budget: int,
) -> int:
    """Re-draw each long edge on its best path, the rest held still (the order changes in place).

    Barycenter sweeps move a dummy one layer at a time, so a long edge rarely gets across the
    path it runs beside. Here each edge with dummies is taken out and put back on the route that
    crosses the fewest other segments, by dynamic programming down its layers (one step per
    layer): the state at a layer is the slot the dummy takes in that layer, and a step's cost
    is the number of segments of that gap it crosses, from a 2-D prefix sum of the gap's
    segments. Ties go to the leftmost slot, which stacks long edges on one side. The current
    route is one candidate, so crossings never go up. Stops after about `budget` segment visits
    (returns how many it made). Narrow layers step in plain Python (`_route_small`), wide ones
    with numpy (`_route_numpy`, imported only then); both give the same route.
    """
    position = [0] * len(up)
    _renumber(rows, position)
    layer_of = [0] * len(up)
    for li, row in enumerate(rows):
        for v in row:
            layer_of[v] = li
    gone = [False] * len(up)
    spent = 0
    for chain in chains:
        if spent > budget:
            break
        if len(chain) < _MIN_CHAIN:
            continue
        first = layer_of[chain[0]]
        dummies = chain[1:-1]
        for d in dummies:
            gone[d] = True
            row = rows[layer_of[d]]
            del row[position[d]]
            for i in range(position[d], len(row)):
                position[row[i]] = i
        gaps = range(first, first + len(chain) - 1)
        small = all((len(rows[g]) + 1) * (len(rows[g + 1]) + 1) <= _SMALL_GAP for g in gaps)
        route = _route_small if small else _route_numpy
        slots, visits = route(rows, down, position, gone, chain, first)
        spent += visits
        for d, slot in zip(dummies, slots, strict=True):
            gone[d] = False
            row = rows[layer_of[d]]
            row.insert(slot, d)
            for i in range(slot, len(row)):
                position[row[i]] = i
    return spent


# Gaps of at most this many (slots above) x (slots below) step in plain Python: numpy's import
# (40 ms, 20 MB) and its per-call overhead cost more than the loops there.
_SMALL_GAP = 256

# A route: the slot of each dummy of a chain, and the segment visits it took.
_Route = tuple[list[int], int]


def _route_small(
    rows: list[list[int]],
    down: list[list[int]],
    position: list[int],
    gone: list[bool],
    chain: list[int],
    first: int,
) -> _Route:
    """`_route_numpy`'s dynamic programme in plain Python (the same integers, the same ties)."""
    spent = 0
    cost: list[int] = []
    choices: list[list[int]] = []
    last = len(chain) - 2
    for step in range(last + 1):
        top, below = rows[first + step], rows[first + step + 1]
        width = len(below)
        # g[i][j]: the other segments leaving above index i and arriving before slot j.
        g = [[0] * (width + 1)]
        visits = 0
        for u in top:
            counts = [0] * (width + 1)
            for v in down[u]:
                if not gone[v]:
                    counts[position[v] + 1] += 1
                    visits += 1
            above, run, row = g[-1], 0, [0] * (width + 1)
            for j in range(1, width + 1):
                run += counts[j]
                row[j] = above[j] + run
            g.append(row)
        spent += visits + len(top) + 20  # as `_route_numpy` counts them
        bottom = g[-1]
        if step == 0:  # from the source, fixed at index t, to a slot below
            t = position[chain[0]]
            at, next_ = g[t], g[t + 1]
            cost = [(at[-1] - at[j]) + (bottom[j] - next_[j]) for j in range(width + 1)]
        elif step == last:  # from a slot above to the target, fixed at index t
            t = position[chain[-1]]
            cost = [
                c + (r[-1] - r[t + 1]) + (bottom[t] - r[t]) for c, r in zip(cost, g, strict=True)
            ]
        else:
            start = [c + r[-1] for c, r in zip(cost, g, strict=True)]
            picks, best_costs = [], []
            for j in range(width + 1):
                best, pick = start[0] - 2 * g[0][j], 0
                for i in range(1, len(start)):
                    value = start[i] - 2 * g[i][j]
                    if value < best:
                        best, pick = value, i
                picks.append(pick)
                best_costs.append(best + bottom[j])
            choices.append(picks)
            cost = best_costs
    # Walk back from the target.
    slots = [min(range(len(cost)), key=cost.__getitem__)]
    for picked in reversed(choices):
        slots.append(picked[slots[-1]])
    slots.reverse()
    return slots, spent


def _route_numpy(
    rows: list[list[int]],
    down: list[list[int]],
    position: list[int],
    gone: list[bool],
    chain: list[int],
    first: int,
) -> _Route:
    """The least-crossing slot of each dummy of `chain` (its dummies out of `rows`), numpy
    one step per layer. For a gap, g[i, j] counts the other segments leaving above index i and
    arriving before slot j."""
    import numpy as np

    spent = 0
    cost: Any = None  # a numpy array from the first step on (chains have several)
    choices = []
    last = len(chain) - 2
    for step in range(last + 1):
        top, below = rows[first + step], rows[first + step + 1]
        width = len(below)
        flat = [i * width + position[v] for i, u in enumerate(top) for v in down[u] if not gone[v]]
        spent += len(flat) + len(top) + 20  # about 20 visits of numpy overhead
        g = np.zeros((len(top) + 1, width + 1), dtype=np.int64)
        if flat:
            g[1:, 1:] = (
                np.bincount(flat, minlength=len(top) * width)
                .reshape(len(top), width)
                .cumsum(0)
                .cumsum(1)
            )
        if step == 0:  # from the source, fixed at index t, to a slot below
            t = position[chain[0]]
            cost = (g[t, -1] - g[t, :]) + (g[-1, :] - g[t + 1, :])
        elif step == last:  # from a slot above to the target, fixed at index t
            t = position[chain[-1]]
            cost = cost + (g[:, -1] - g[:, t + 1]) + (g[-1, t] - g[:, t])
        else:
            options = cost[:, None] + (g[:, -1:] + g[-1:, :] - 2 * g)
            choices.append(options.argmin(0))
            cost = options.min(0)
    # Walk back from the target.
    slots = [int(cost.argmin())]
    for pick in reversed(choices):
        slots.append(int(pick[slots[-1]]))
    slots.reverse()
    return slots, spent


def _renumber(rows: list[list[int]], position: list[int]) -> None:
    for row in rows:
        for i, v in enumerate(row):
            position[v] = i


def _depth_first_order(
    rows: list[list[int]], up: list[list[int]], down: list[list[int]]
) -> list[list[int]]:
    """Each vertex takes the next place in its layer as a depth-first walk from the sources
    (in input order) reaches it, so a path and its branches stay side by side."""
    layer_of = [0] * len(up)
    for li, row in enumerate(rows):
        for v in row:
            layer_of[v] = li
    placed = [False] * len(up)
    ordered: list[list[int]] = [[] for _ in rows]
    for row in rows:
        for root in row:
            if placed[root] or up[root]:
                continue
            stack = [root]
            while stack:
                v = stack.pop()
                if placed[v]:
                    continue
                placed[v] = True
                ordered[layer_of[v]].append(v)
                stack.extend(w for w in down[v] if not placed[w])
    return ordered


def _barycenter(row: list[int], neighbours: list[list[int]], position: list[int]) -> bool:
    """Sort a layer by the mean place of each vertex's neighbours; lone vertices keep theirs.
    Says whether the order changed."""
    keys: list[tuple[float, int]] = []
    for i, v in enumerate(row):
        near = neighbours[v]
        if not near:
            keys.append((i, i))
        elif len(near) == 1:
            keys.append((position[near[0]], i))
        else:
            keys.append((sum(position[m] for m in near) / len(near), i))
    order = sorted(range(len(row)), key=keys.__getitem__)
    if all(i == j for i, j in enumerate(order)):
        return False
    row[:] = [row[i] for i in order]
    for i, v in enumerate(row):
        position[v] = i
    return True


def _pair_crossings(left: list[int], right: list[int], position: list[int]) -> int:
    """Crossings between the edges of two neighbouring vertices, `left` placed first."""
    count = 0
    for a in left:
        pa = position[a]
        for b in right:
            if pa > position[b]:
                count += 1
    return count


def _transpose(
    rows: list[list[int]],
    up: list[list[int]],
    down: list[list[int]],
    position: list[int],
    limit: int,
    changed: list[bool],
) -> None:
    """Swap neighbours in a layer while that lowers crossings with both adjacent layers
    (layers of more than `limit` vertices are left alone: the pass is quadratic in degree)."""
    for li, row in enumerate(rows):
        if not 1 < len(row) <= limit:
            continue
        improved = True
        passes = 0
        while improved and passes < 4:
            improved = False
            passes += 1
            for i in range(len(row) - 1):
                u, v = row[i], row[i + 1]
                now = _pair_crossings(up[u], up[v], position) + _pair_crossings(
                    down[u], down[v], position
                )
                if not now:
                    continue
                swapped = _pair_crossings(up[v], up[u], position) + _pair_crossings(
                    down[v], down[u], position
                )
                if swapped < now:
                    row[i], row[i + 1] = v, u
                    position[u], position[v] = i + 1, i
                    improved = changed[li] = True


def _total_crossings(rows: list[list[int]], down: list[list[int]], position: list[int]) -> int:
    return sum(_gap_crossings(rows, down, position))


def _gap_crossings(rows: list[list[int]], down: list[list[int]], position: list[int]) -> list[int]:
    return [
        _bilayer_crossings(rows[i], down, position, len(rows[i + 1])) for i in range(len(rows) - 1)
    ]


def _bilayer_crossings(
    row: list[int], down: list[list[int]], position: list[int], below: int
) -> int:
    """Crossings between a layer and the next: edges in order of their upper end, each counting
    the earlier edges that end further right (kept sorted with bisect: layers here are narrow,
    so this beats an accumulator tree in CPython). O(E log V) comparisons."""
    seen: list[int] = []
    total = 0
    for u in row:
        near = down[u]
        if len(near) == 1:
            p = position[near[0]]
            at = bisect_right(seen, p)
            total += len(seen) - at
            seen.insert(at, p)
        elif near:
            ends = sorted(position[v] for v in near)
            for p in ends:
                total += len(seen) - bisect_right(seen, p)
            for p in ends:
                insort(seen, p)
    return total
