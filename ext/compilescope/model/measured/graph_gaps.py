"""The time between compiled graphs in the user's steps, from the order in which their kernels ran."""

from __future__ import annotations

from collections.abc import Iterable

from .timing import GraphGap

# One kernel call as the split's wrappers saw it: (compile id, role, began, ended), in seconds
# on one host clock.
Call = tuple[str, str, float, float]


def gaps_between_graphs(calls: Iterable[Call], steps: int) -> tuple[GraphGap, ...]:
    """Per (graph before, graph after, role): the host time per step from the last kernel call
    of one graph to the first of the next one of the same role.

    Consecutive calls of one graph are one run of it; a run of another graph of the same role
    that follows is the gap's other side. Gaps between roles (a forward's last kernel and the
    backward's first: the loss, autograd) are not between graphs of one kind and are left out.
    """
    runs: list[Call] = []  # one per run of a graph: its first call's start, last call's end
    for cid, role, began, ended in sorted(calls, key=lambda c: c[2]):
        if runs and runs[-1][:2] == (cid, role):
            runs[-1] = (cid, role, runs[-1][2], max(runs[-1][3], ended))
        else:
            runs.append((cid, role, began, ended))
    total: dict[tuple[str, str, str], list[float]] = {}
    for a, b in zip(runs, runs[1:], strict=False):
        if a[1] != b[1] or a[0] == b[0]:
            continue
        total.setdefault((a[0], b[0], a[1]), []).append(max(b[2] - a[3], 0.0))
    per = max(steps, 1)
    return tuple(
        GraphGap(before, after, role, sum(values) / per, len(values) / per)
        for (before, after, role), values in sorted(total.items())
    )
