"""A distributed job's ranks on disk: `write_rank` saves one, `merge_ranks` reads them back as one Capture."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from ..model.capture import Capture
from ..model.merge import merge_captures
from .reader import load_trace

# What `write_rank` names a rank's capture in the shared folder.
RANK_FILE = "compilescope_rank_{rank}.json"
_RANK_FILE = re.compile(r"^compilescope_rank_(\d+)\.json$")


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
        files = sorted(
            (int(m.group(1)), p)
            for p in (folder.iterdir() if folder.is_dir() else ())
            if (m := _RANK_FILE.match(p.name))
        )
        if not files:
            return load_trace(folder)
        captures = [Capture.from_json(p.read_text(encoding="utf-8")) for _, p in files]
        return merge_captures(captures, [rank for rank, _ in files], str(folder))
    captures = [getattr(c, "capture", c) for c in source]
    return merge_captures(captures, [None] * len(captures), "live")
