"""A distributed job's ranks on disk: `write_rank` saves one (its capture and its summary),
`merge_ranks` reads them back as one Capture, `compare_saved_ranks` compares their summaries."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from ..model.capture import Capture, RankLog
from ..model.compile import Compile
from ..model.compile_id import CompileId
from ..model.ranks.compare import RankRecord, records_of
from ..model.ranks.merge import merge_captures
from ..model.ranks.report import RankReport, compare_records
from ..model.ranks.summary import RankSummary
from .reader import load_trace

# What `write_rank` names a rank's capture and its summary in the shared folder.
RANK_FILE = "compilescope_rank_{rank}.json"
SUMMARY_FILE = "compilescope_rank_{rank}.summary.json"
_RANK_FILE = re.compile(r"^compilescope_rank_(\d+)\.json(?:\.partial)?$")
_SUMMARY_FILE = re.compile(r"^compilescope_rank_(\d+)\.summary\.json(?:\.partial)?$")


def write_rank(capture: Capture, folder: str | os.PathLike[str], *, full: bool = True) -> Path:
    """Save one rank's capture (from `capturing()` inside a rank, or `load_trace` of its own
    log) where `merge_ranks` finds it, and its summary (what a rank report needs: a few KB),
    which `compare_saved_ranks`, `python -m compilescope ranks` and `report` read instead of the
    capture. `full=False` writes the summary alone (jobs of hundreds of ranks). Returns the
    capture's path (the summary's without `full`)."""
    capture = getattr(capture, "capture", capture)  # what capturing() yielded, or a Capture
    if len(capture.ranks) > 1:
        raise ValueError(f"write_rank takes one rank's capture, not ranks {capture.ranks}")
    rank = capture.ranks[0] if capture.ranks else 0
    target = Path(folder) / RANK_FILE.format(rank=rank)
    summary = Path(folder) / SUMMARY_FILE.format(rank=rank)
    target.parent.mkdir(parents=True, exist_ok=True)
    if full:
        _write_whole(target, capture.to_json())
    # The summary last: a rank with a summary has everything written that it meant to write.
    saved = merge_captures([capture], [rank], str(folder), [(target if full else summary).name])
    record = records_of(saved)[rank]
    _write_whole(summary, RankSummary(record, saved.world_size, saved.torch_version).to_json())
    return target if full else summary


def _write_whole(target: Path, text: str) -> None:
    # Write then rename, so a reader in another process never sees half a file.
    partial = target.with_name(target.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(target)


def merge_ranks(source: str | os.PathLike[str] | Iterable[Capture]) -> Capture:
    """One Capture holding every rank, keyed as `load_trace` keys a folder of rank logs
    (`rank1:0/0`). `source` is a folder of `write_rank` files (or, when it holds none, of
    TORCH_TRACE logs), or the ranks' captures themselves. Timings stay with each rank's own
    capture: they are not merged."""
    if isinstance(source, (str, os.PathLike)):
        folder = Path(source)
        files = rank_files(folder)
        if not files:
            if summary_files(folder):
                raise ValueError(
                    f"{str(folder)!r} holds only rank summaries (write_rank(..., full=False)): "
                    "compare them with compare_saved_ranks, `python -m compilescope ranks` "
                    "or `report --pages`"
                )
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


def compare_saved_ranks(
    folder: str | os.PathLike[str], world_size: int | None = None
) -> RankReport:
    """The rank report of a folder of `write_rank` files, read from the ranks' summaries only
    (a rank saved without one, by an older version, is read whole). A rank's whole capture is
    opened only to name the first differing node where two groups' graphs differ, and only
    when it was written (`full=True`); else the report names the differing graph."""
    records, size = rank_records(Path(folder))
    size = world_size if world_size is not None else size
    return compare_records(records, size, str(folder), SavedRanks(Path(folder)))


def rank_records(folder: Path) -> tuple[dict[int, RankRecord], int | None]:
    """Each rank's record in a `write_rank` folder (from its summary where there is one), and
    the largest world size the ranks knew."""
    summaries: dict[int, Path] = {}
    wholes: dict[int, list[Path]] = {}
    for rank, path in [*summary_files(folder), *rank_files(folder)]:
        if path.name.endswith(".summary.json"):
            summaries[rank] = path
        else:  # a whole capture, or a file (capture or summary) write_rank had not finished
            wholes.setdefault(rank, []).append(path)
    records: dict[int, RankRecord] = {}
    sizes: set[int] = set()
    unread: list[RankLog] = []
    for rank in sorted({*summaries, *wholes}):
        unfinished = wholes.get(rank, [])
        if unfinished and all(p.name.endswith(".partial") for p in unfinished):
            # Killed while writing (a summary left beside it is an older run's).
            why = "its saved capture was never finished (write_rank stopped midway)"
            unread.append(RankLog(rank, unfinished[0].name, ends_early=why, saved_capture=True))
            continue
        if rank in summaries:
            try:
                summary = RankSummary.from_json(summaries[rank].read_bytes())
            except (OSError, ValueError) as error:  # FormatError is a ValueError
                why = f"its summary cannot be read ({type(error).__name__}: {error})"
                unread.append(
                    RankLog(rank, summaries[rank].name, ends_early=why, saved_capture=True)
                )
                continue
            records[rank] = summary.record
            sizes |= {summary.world_size} if summary.world_size is not None else set()
            continue
        whole = [p for p in wholes[rank] if p.name.endswith(".json")]
        try:
            capture = merge_ranks_files(folder, [(rank, whole[0])])
        except (OSError, ValueError) as error:
            why = f"its saved capture cannot be read ({type(error).__name__}: {error})"
            unread.append(RankLog(rank, whole[0].name, ends_early=why, saved_capture=True))
            continue
        records[rank] = records_of(capture)[rank]
        sizes |= {capture.world_size} if capture.world_size is not None else set()
    if not records:
        why = unread[0].ends_early if unread else "it holds no write_rank files"
        raise ValueError(f"no readable rank summary or capture in {str(folder)!r}: {why}")
    records |= records_of(Capture(rank_logs=tuple(unread)))
    return dict(sorted(records.items())), max(sizes) if sizes else None


def merge_ranks_files(folder: Path, files: list[tuple[int, Path]]) -> Capture:
    """The captures of `files` ((rank, path) of finished `write_rank` files) as one Capture."""
    captures = [Capture.from_json(path.read_text(encoding="utf-8")) for _, path in files]
    ranks: list[int | None] = [rank for rank, _ in files]
    return merge_captures(captures, ranks, str(folder), [path.name for _, path in files])


class SavedRanks:
    """A compile of any rank, from its whole `write_rank` capture, read only when asked (the
    rank report names the first differing node of two groups' graphs); KeyError where a rank
    left only its summary. The last two read are kept."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.read = folder, {}  # type: Path, dict[int, Capture]

    def __getitem__(self, key: CompileId) -> Compile:
        rank = key.rank if key.rank is not None else 0
        if rank not in self.read:
            path = self.folder / RANK_FILE.format(rank=rank)
            if not path.is_file():
                raise KeyError(f"rank {rank} left only its summary")
            if len(self.read) >= 2:
                self.read.pop(next(iter(self.read)))
            self.read[rank] = merge_ranks_files(self.folder, [(rank, path)])
        return self.read[rank][key]


def summary_files(folder: Path) -> list[tuple[int, Path]]:
    """(rank, path) of the rank summaries `write_rank` wrote in `folder`, half-written ones
    included."""
    found = (
        (int(m.group(1)), p)
        for p in (folder.iterdir() if folder.is_dir() else ())
        if (m := _SUMMARY_FILE.match(p.name))
    )
    return sorted(found)


def rank_files(folder: Path) -> list[tuple[int, Path]]:
    """(rank, path) of the `write_rank` files in `folder`, half-written ones included."""
    found = (
        (int(m.group(1)), p)
        for p in (folder.iterdir() if folder.is_dir() else ())
        if (m := _RANK_FILE.match(p.name))
    )
    return sorted(found)
