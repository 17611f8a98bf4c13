"""One Capture from the captures of a distributed job's ranks (trace/rank_files.py finds them on disk)."""

from __future__ import annotations

from dataclasses import replace

from ..capture import Capture, RankLog


def merge_captures(
    captures: list[Capture],
    named: list[int | None],
    source: str,
    files: list[str] | None = None,
    unread: tuple[RankLog, ...] = (),
) -> Capture:
    """One Capture holding every rank's compiles; `named` gives each capture's rank where its
    own record has none (a file name), else None (then its place in the list). `files` names
    each capture's file; `unread` are the rank files that could not be read."""
    if not captures:
        raise ValueError("merge_ranks: no captures to merge")
    compiles, ranks, logs = [], [], list(unread)
    for index, (cap, name) in enumerate(zip(captures, named, strict=True)):
        # A capture made outside torch.distributed has no rank: its file name or place says.
        rank = cap.ranks[0] if len(cap.ranks) == 1 else (name if name is not None else index)
        if len(cap.ranks) > 1:
            compiles += list(cap.compiles)
            ranks += list(cap.ranks)
            logs += list(cap.rank_logs)
            continue
        ranks.append(rank)
        logs += [replace(log, rank=rank) for log in cap.rank_logs] or [
            _saved_log(cap, rank, files[index] if files else "")
        ]
        compiles += [
            c if c.id.rank == rank else replace(c, id=replace(c.id, rank=rank)) for c in cap
        ]
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"merge_ranks: rank {_first_repeat(ranks)} appears twice")
    order: dict[int | None, int] = {r: i for i, r in enumerate(sorted(ranks))}
    compiles.sort(key=lambda c: order.get(c.id.rank, -1))  # stable: log order within a rank
    sizes = {c.world_size for c in captures if c.world_size is not None}
    return Capture(
        compiles=tuple(compiles),
        torch_version=next((c.torch_version for c in captures if c.torch_version), ""),
        source=source,
        ranks=tuple(sorted(ranks)),
        skipped=tuple(s for c in captures for s in c.skipped),
        global_artifacts=tuple(a for c in captures for a in c.global_artifacts),
        partial="; ".join(c.partial for c in captures if c.partial),
        sources={k: v for c in captures for k, v in c.sources.items()},
        cells={k: v for c in captures for k, v in c.cells.items()},
        world_size=max(sizes) if sizes else None,
        rank_logs=tuple(logs),
    )


def _saved_log(cap: Capture, rank: int, file: str) -> RankLog:
    """A saved rank capture as a rank report reads it: complete unless its code raised."""
    last = cap.compiles[-1].id if cap.compiles else None
    return RankLog(
        rank,
        file,
        events=len(cap.compiles),
        ends_early=f"its capture stops early: {cap.partial}" if cap.partial else "",
        last_compile_id=str(replace(last, rank=None)) if last is not None else "",
        last_event="compile" if last is not None else "",
        saved_capture=True,
    )


def _first_repeat(values: list[int]) -> int:
    seen: set[int] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return values[0]
