"""One Capture from the ranks of a distributed job: saved live captures or TORCH_TRACE logs."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from .capture import Capture

# What `write_rank` names a rank's capture in the shared folder.
RANK_FILE = "compilescope_rank_{rank}.json"
_RANK_FILE = re.compile(r"^compilescope_rank_(\d+)\.json$")


def write_rank(capture: Capture, folder: str | os.PathLike) -> Path:
    """Save one rank's capture (from `capturing()` inside a rank) where `merge_ranks` finds it."""
    capture = getattr(capture, "capture", capture)  # what capturing() yielded, or a Capture
    if len(capture.ranks) > 1:
        raise ValueError(f"write_rank takes one rank's capture, not ranks {capture.ranks}")
    rank = capture.ranks[0] if capture.ranks else 0
    target = Path(folder) / RANK_FILE.format(rank=rank)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename, so a reader in another process never sees half a file.
    partial = target.with_suffix(".json.partial")
    partial.write_text(capture.to_json(), encoding="utf-8")
    partial.replace(target)
    return target


def merge_ranks(source: str | os.PathLike | Iterable[Capture]) -> Capture:
    """One Capture holding every rank, keyed as `load_trace` keys a folder of rank logs
    (`rank1:0/0`). `source` is a folder of `write_rank` files (or, when it holds none, of
    TORCH_TRACE logs), or the ranks' captures themselves. Timings stay with each rank's own
    capture: they are not merged."""
    if isinstance(source, (str, os.PathLike)):
        folder = Path(source)
        files = sorted(
            (int(m.group(1)), p)
            for p in (folder.iterdir() if folder.is_dir() else ())
            if (m := _RANK_FILE.match(p.name))
        )
        if not files:
            from ..trace.reader import load_trace  # the logs of the same job

            return load_trace(folder)
        captures = [Capture.from_json(p.read_text(encoding="utf-8")) for _, p in files]
        return _merge(captures, [rank for rank, _ in files], str(folder))
    captures = [getattr(c, "capture", c) for c in source]
    return _merge(captures, [None] * len(captures), "live")


def _merge(captures: list[Capture], named: list[int | None], source: str) -> Capture:
    if not captures:
        raise ValueError("merge_ranks: no captures to merge")
    compiles, ranks = [], []
    for index, (cap, name) in enumerate(zip(captures, named, strict=True)):
        # A capture made outside torch.distributed has no rank: its file name or place says.
        rank = cap.ranks[0] if len(cap.ranks) == 1 else (name if name is not None else index)
        if len(cap.ranks) > 1:
            compiles += list(cap.compiles)
            ranks += list(cap.ranks)
            continue
        ranks.append(rank)
        compiles += [
            c if c.id.rank == rank else replace(c, id=replace(c.id, rank=rank)) for c in cap
        ]
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"merge_ranks: rank {_first_repeat(ranks)} appears twice")
    order = {r: i for i, r in enumerate(sorted(ranks))}
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
    )


def _first_repeat(values: list[int]) -> int:
    seen: set[int] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return values[0]
