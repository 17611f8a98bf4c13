"""A distributed job's ranks on disk: `write_rank` saves one, `merge_ranks` reads them back as one Capture."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from ..model.capture import Capture, RankLog
from ..model.merge import merge_captures
from .reader import load_trace

# What `write_rank` names a rank's capture in the shared folder.
RANK_FILE = "compilescope_rank_{rank}.json"
_RANK_FILE = re.compile(r"^compilescope_rank_(\d+)\.json(?:\.partial)?$")


def write_rank(capture: Capture, folder: str | os.PathLike[str]) -> Path:
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


def merge_ranks(source: str | os.PathLike[str] | Iterable[Capture]) -> Capture:
    """One Capture holding every rank, keyed as `load_trace` keys a folder of rank logs
    (`rank1:0/0`). `source` is a folder of `write_rank` files (or, when it holds none, of
    TORCH_TRACE logs), or the ranks' captures themselves. Timings stay with each rank's own
    capture: they are not merged."""
    if isinstance(source, (str, os.PathLike)):
        folder = Path(source)
        files = rank_files(folder)
        if not files:
            return load_trace(folder)
        captures, ranks, names, unread = [], [], [], []
        for rank, path in files:
            if path.name.endswith(".partial"):
                if not any(r == rank and not p.name.endswith(".partial") for r, p in files):
                    why = "its saved capture was never finished (write_rank stopped midway)"
                    unread.append(RankLog(rank, path.name, ends_early=why, saved_capture=True))
                continue
            try:
                captures.append(Capture.from_json(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as error:  # FormatError is a ValueError
                why = f"its saved capture cannot be read ({type(error).__name__}: {error})"
                unread.append(RankLog(rank, path.name, ends_early=why, saved_capture=True))
                continue
            ranks.append(rank)
            names.append(path.name)
        if not captures:
            raise ValueError(f"no readable rank capture in {str(folder)!r}: {unread[0].ends_early}")
        return merge_captures(captures, list(ranks), str(folder), names, tuple(unread))
    captures = [getattr(c, "capture", c) for c in source]
    return merge_captures(captures, [None] * len(captures), "live")


def rank_files(folder: Path) -> list[tuple[int, Path]]:
    """(rank, path) of the `write_rank` files in `folder`, half-written ones included."""
    found = (
        (int(m.group(1)), p)
        for p in (folder.iterdir() if folder.is_dir() else ())
        if (m := _RANK_FILE.match(p.name))
    )
    return sorted(found)
