"""Read TORCH_TRACE logs (one file, or a folder of ranks) into a Capture."""

from __future__ import annotations

import os
import re
import zlib
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..model.capture import Capture, RankLog, Skipped
from ..model.compile_id import CompileId
from .builder import CaptureBuilder
from .events import Event, SkipCounter, event_name, parse_text

_RANK_IN_NAME = re.compile(r"rank_(\d+)_")
_SUFFIXES = (".log", ".log.gz")


# What torch logs as a compile ends (its backward too, when compiled later), and the metrics
# of runtime work (autotuning at a first run) it logs under a compile already closed.
_CLOSING = (
    "compilation_metrics",
    "bwd_compilation_metrics",
    "compilation_metrics_runtime",
    "bwd_compilation_metrics_runtime",
)


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
    """Read a TORCH_TRACE file or folder; unreadable entries are counted in `capture.skipped`,
    and for each rank's log, where it ends and what of it was lost (`capture.rank_logs`)."""
    files = trace_files(path)
    ranks = [rank_of_log(file, index, len(files)) for index, file in enumerate(files)]
    capture, events = read_logs(files, ranks, str(path))
    if events == 0:
        raise no_events(str(path), sum(s.count for s in capture.skipped))
    return capture


def logs_bytes(path: str | os.PathLike[str]) -> int:
    """The size of the TORCH_TRACE logs at `path` (0 for anything else: a saved capture)."""
    try:
        return sum(f.stat().st_size for f in trace_files(path))
    except (OSError, ValueError):
        return 0


def rank_of_log(file: Path, index: int, count: int) -> int | None:
    """The rank of the `index`-th of `count` logs: from its name (`..._rank_3_...`), else its
    place (several logs without rank names are separate processes that must not share compile
    ids), else None (one log)."""
    match = _RANK_IN_NAME.search(file.name)
    return int(match.group(1)) if match else (index if count > 1 else None)


def no_events(path: str, unread: int | None = None) -> TraceError:
    """The error for logs that hold no structured-trace event at all (`unread`: lines)."""
    lines = f" {unread} lines could not be read" if unread is not None else ""
    return TraceError(
        f"{path!r} holds no structured-trace events (is it a TORCH_TRACE log?{lines})"
    )


def read_logs(files: list[Path], ranks: list[int | None], source: str) -> tuple[Capture, int]:
    """The Capture of `files`, the logs of `ranks` (None: a log of no rank), and the number of
    events read, without checking that there were any: an empty log is a RankLog of none."""
    events = 0
    builder = CaptureBuilder()
    skips = SkipCounter()
    logs = []
    cut_inside: set[CompileId] = set()
    for file, rank in zip(files, ranks, strict=True):
        builder.strings = {}  # each process interns its own file names
        mine = SkipCounter()
        log, cut = _read_log(file, rank, builder, mine)
        cut_inside |= cut
        events += log.events
        if rank is not None:
            logs.append(log)
        for reason, count in mine.counts.items():
            skips.counts[reason] += count
            skips.first_line.setdefault(reason, mine.first_line.get(reason))
    for reason, count in skips.counts.items():
        for _ in range(count):
            builder.skips.add(reason, skips.first_line.get(reason))
    capture = builder.build(source=source)
    compiles = tuple(
        replace(c, incomplete=_CUT_INSIDE) if c.id in cut_inside else c for c in capture.compiles
    )
    return replace(capture, compiles=compiles, rank_logs=tuple(logs)), events


_CUT_INSIDE = "the log ends inside it (no compilation_metrics): counts are of what was read"


def _read_log(
    file: Path, rank: int | None, builder: CaptureBuilder, skips: SkipCounter
) -> tuple[RankLog, set[CompileId]]:
    """Feed one log's events to `builder`; what it read, where it ends and what it lost, and
    the compiles it ends inside."""
    try:
        text, cut = _read(file)
    except OSError as error:
        skips.add(f"file cannot be read ({type(error).__name__}: {error})", None)
        log = RankLog(
            rank or 0, file.name, ends_early="the file cannot be read", skipped=_of(skips)
        )
        return log, set()
    if cut:  # a cut-off .gz: keep what was read before it
        skips.add(f"file ends early ({cut})", None)
    events, last, seen = 0, None, 0
    damaged: set[str] = set()
    at_last: Counter[str] = Counter()
    # The last compile logged (its record's header), and compiles whose metrics came last;
    # keyed by the header's id fields (a CompileId per event would cost a tenth of the read).
    opened: dict[str, Any] = {}
    closed: set[tuple[object, ...]] = set()
    headers: dict[tuple[object, ...], dict[str, Any]] = {}  # every compile's first event
    for event in parse_text(text, skips, rank):
        if skips.total != seen:
            # Entries lost mid-log: they belong to the compile before them or the one after.
            damaged |= {_bare_id(event), *((_bare_id(last),) if last is not None else ())}
            seen, at_last = skips.total, Counter(skips.counts)
        events += 1
        builder.add(event)
        last = event
        meta = event.metadata
        key = _id_key(meta)
        if key[:2] != (None, None) and event.name != "chromium_event":
            opened = meta  # chromium events time stages: not where a log ends
            headers.setdefault(key, meta)
            if event.name in _CLOSING:
                closed.add(key)
            else:  # more of it after its metrics (a lazy backward compile): open again
                closed.discard(key)
    last_compile = _bare_id(Event("", opened)) if opened else ""
    named = event_name(opened) or "" if opened else ""
    ends = []
    if cut:
        ends.append(f"the compressed file ends early ({cut})")
    trailing = [reason for reason in skips.counts if skips.counts[reason] > at_last[reason]]
    if trailing and last is not None:
        ends.append(f"what follows line {last.line} cannot be read ({'; '.join(trailing)})")
    if text and not text.endswith("\n"):
        ends.append("its last line is cut off (no newline at its end)")
    if opened and _id_key(opened) not in closed and not ends:
        ends.append(
            f"torch logs compilation_metrics as each compile ends, and its last compile "
            f"({last_compile}) has none: the log stops inside it"
        )
    last_line = last.line if last is not None else None
    for header in skips.dropped:  # records dropped for their payload name their compile
        if last_line is not None and header["line"] < last_line:
            damaged.add(str(replace(CompileId.from_metadata(header, rank), rank=None)))
    cut_inside: set[CompileId] = set()
    if ends:
        keys = _cut_inside(headers, closed, _id_key(opened) if opened else None)
        cut_inside = {CompileId.from_metadata(headers[k], rank) for k in keys}
    log = RankLog(
        rank=rank or 0,
        file=file.name,
        events=events,
        skipped=_of(skips),
        ends_early="; ".join(ends),
        last_line=last_line,
        last_compile_id=last_compile,
        last_event=named,
        damaged=tuple(sorted(damaged - {"-/-", ""})),
    )
    return log, cut_inside


def _cut_inside(
    headers: dict[tuple[object, ...], dict[str, Any]],
    closed: set[tuple[object, ...]],
    last: tuple[object, ...] | None,
) -> list[tuple[object, ...]]:
    """The compiles a log that ends early ends inside: the last one logged when its closing
    metrics were not read, and any Dynamo compile left open without a later attempt (a
    restarted attempt and compiled autograd's own id are never closed, in whole logs too)."""
    found = []
    for key in headers:
        if key in closed:
            continue
        superseded = any(o[:3] == key[:3] and _attempt(o) > _attempt(key) for o in headers)
        if key == last or (key[1] is not None and not superseded):
            found.append(key)
    return found


def _attempt(key: tuple[object, ...]) -> int:
    return key[3] if isinstance(key[3], int) else 0  # runtime metrics log no attempt


def _id_key(meta: dict[str, Any]) -> tuple[object, ...]:
    get = meta.get
    return (get("compiled_autograd_id"), get("frame_id"), get("frame_compile_id"), get("attempt"))


def _bare_id(event: Event) -> str:
    cid = CompileId.from_metadata(event.metadata, None)
    return "" if cid.is_global else str(replace(cid, rank=None))


def _of(skips: SkipCounter) -> tuple[Skipped, ...]:
    return tuple(Skipped(r, n, skips.first_line.get(r)) for r, n in skips.counts.items())
