"""Read TORCH_TRACE logs (one file, or a folder of ranks) into a Capture."""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path

from ..model.capture import Capture
from .builder import CaptureBuilder
from .events import SkipCounter, parse_text

_RANK_IN_NAME = re.compile(r"rank_(\d+)_")
_SUFFIXES = (".log", ".log.gz")


class TraceError(ValueError):
    """A path that holds no readable TORCH_TRACE log."""


def trace_files(path: str | os.PathLike[str]) -> list[Path]:
    """The log files under `path` (a file, or a folder as TORCH_TRACE fills it)."""
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"no such TORCH_TRACE file or folder: {str(root)!r}")
    if root.is_file():
        return [root]
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith(_SUFFIXES))
    if not files:
        raise TraceError(f"no TORCH_TRACE logs (*.log, *.log.gz) in folder {str(root)!r}")
    return files


def _read(file: Path) -> tuple[str, str]:
    """The whole text of a log (gzip or plain) and, for a gzip cut short, why it stops.

    One read and one decode per file: reading line by line cost more than parsing."""
    data = file.read_bytes()
    cut = ""
    if file.name.endswith(".gz"):
        parts = []
        while data:  # gzip files may hold several members, one after another
            stream = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                parts.append(stream.decompress(data))
            except zlib.error as error:
                cut = f"{type(error).__name__}: {error}"
                break
            if not stream.eof:
                cut = "EOFError: compressed data ends before its end-of-stream marker"
                break
            data = stream.unused_data
        data = b"".join(parts)
    return data.decode("utf-8", errors="replace"), cut


def load_trace(path: str | os.PathLike[str]) -> Capture:
    """Read a TORCH_TRACE file or folder; unreadable entries are counted in `capture.skipped`."""
    files = trace_files(path)
    builder = CaptureBuilder()
    skips = SkipCounter()
    events_seen = 0
    for index, file in enumerate(files):
        match = _RANK_IN_NAME.search(file.name)
        # Several logs without rank names (separate processes) still must not share compile ids.
        rank = int(match.group(1)) if match else (index if len(files) > 1 else None)
        builder.strings = {}  # each process interns its own file names
        try:
            text, cut = _read(file)
        except OSError as error:
            skips.add(f"file cannot be read ({type(error).__name__}: {error})", None)
            continue
        if cut:  # a cut-off .gz: keep what was read before it
            skips.add(f"file ends early ({cut})", None)
        for event in parse_text(text, skips, rank):
            events_seen += 1
            builder.add(event)
        del text  # before the next file is read: peak memory is one file, not all of them
    if events_seen == 0:
        raise TraceError(
            f"{str(path)!r} holds no structured-trace events "
            f"(is it a TORCH_TRACE log? {sum(skips.counts.values())} lines could not be read)"
        )
    for reason, count in skips.counts.items():
        for _ in range(count):
            builder.skips.add(reason, skips.first_line.get(reason))
    return builder.build(source=str(path))
