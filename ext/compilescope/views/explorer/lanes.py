"""Very long edges of the layered layout drawn as straight lanes beside it, not dummy chains."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported only where a graph has lanes (most have none): 20 MB
    import numpy as np

# In FX graphs a few hundred edges (an input or activation used thousands of layers apart) can
# hold almost all the dummy vertices (20,000 nodes: 368 edges, 2.55 of 2.58 million dummies).
# Above `limit` vertices the longest edges leave the dummy model, longest first, until the rest
# fits. Only edges over `_MIN_SPAN` layers: a lane beside the whole drawing suits a far jump,
# not a skip of a few layers. At most `_MAX_LANES` (the side choice is quadratic in lanes).
_MIN_SPAN = 64
_MAX_LANES = 4000
_SIDE_PASSES = 20


def pick_lane_edges(spans: list[int], vertices: int, limit: int) -> list[int]:
    """Indices of the edges to draw in lanes (`spans`: dummies per edge; `vertices`: nodes plus
    all dummies): the longest first, while more than `limit` vertices would remain."""
    chosen: list[int] = []
    for i in sorted(range(len(spans)), key=lambda i: (-spans[i], i)):
        if vertices <= limit or spans[i] <= _MIN_SPAN or len(chosen) >= _MAX_LANES:
            break
        chosen.append(i)
        vertices -= spans[i]
    return chosen


def assign_lanes(
    tops: list[int], bottoms: list[int], body_cost: np.ndarray
) -> tuple[list[int], list[int]]:
    """Side (0: left, 1: right) and track (0: next to the drawing) of each lane edge, the edge
    running from layer `tops[i]` to layer `bottoms[i]`.

    A lane leaves its source for its track in the first gap and comes back in the last; on one
    side, tracks ordered shorter-inside make two lanes cross once when their spans interleave
    (a < a' < b < b') and never when nested or apart. So each edge takes the side where it
    interleaves least, plus `body_cost[i, side]`: the body segments its two ends cross there.
    Greedy, longest first, then single moves while they help (a two-page book embedding).
    """
    import numpy as np

    a, b = np.asarray(tops), np.asarray(bottoms)
    count = len(a)
    inter = (a[:, None] < a[None, :]) & (a[None, :] < b[:, None]) & (b[:, None] < b[None, :])
    inter = (inter | inter.T).astype(np.int32)
    order = sorted(range(count), key=lambda i: (a[i] - b[i], i))
    side = np.full(count, -1)
    for i in order:
        left = int(inter[i][side == 0].sum()) + body_cost[i, 0]
        right = int(inter[i][side == 1].sum()) + body_cost[i, 1]
        side[i] = 0 if left <= right else 1
    for _ in range(_SIDE_PASSES):
        moved = False
        for i in order:
            same = int(inter[i][side == side[i]].sum()) + body_cost[i, side[i]]
            other = int(inter[i][side != side[i]].sum()) + body_cost[i, 1 - side[i]]
            if other < same:
                side[i] = 1 - side[i]
                moved = True
        if not moved:
            break
    # Shortest first, each on the first track outside every lane it overlaps on its side (lanes
    # whose layer ranges touch never share a track, so their ends stay apart).
    track = np.zeros(count, dtype=np.int64)
    placed = np.zeros(count, dtype=bool)
    for i in reversed(order):
        near = placed & (side == side[i]) & (a <= b[i]) & (a[i] <= b)
        track[i] = int(track[near].max()) + 1 if near.any() else 0
        placed[i] = True
    return side.tolist(), track.tolist()


def body_crossings(
    rows: list[list[int]],
    up: list[list[int]],
    down: list[list[int]],
    position: list[int],
    ends: list[tuple[int, int, int, int]],
) -> np.ndarray:
    """For each lane edge (source, its layer, target, its layer): the body segments its first
    and last stretch cross if its lane is on the left (column 0) or on the right (column 1).
    Going right from source u, it crosses every segment of that gap leaving a vertex right of u;
    coming back from the right to target v, every segment arriving right of v."""
    import numpy as np

    out_left, in_left = [], []  # per layer: segments leaving / arriving left of each index
    for row in rows:
        outs, ins, o, n = [0], [0], 0, 0
        for v in row:
            o += len(down[v])
            n += len(up[v])
            outs.append(o)
            ins.append(n)
        out_left.append(outs)
        in_left.append(ins)
    cost = np.zeros((len(ends), 2), dtype=np.int64)
    for k, (u, lu, v, lv) in enumerate(ends):
        outs, ins = out_left[lu], in_left[lv]
        pu, pv = position[u], position[v]
        cost[k, 0] = outs[pu] + ins[pv]
        cost[k, 1] = (outs[-1] - outs[pu + 1]) + (ins[-1] - ins[pv + 1])
    return cost
