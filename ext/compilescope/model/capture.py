"""The capture: every compilation of a run (live or from a log), in torch's own vocabulary."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, cast

from . import serialize
from .compile import Compile, GraphBreak
from .compile_id import CompileId
from .ranks.log import RankLog, Skipped

if TYPE_CHECKING:
    # Imported where used: `compilescope report LOG` of one rank (a fresh process each time,
    # issue 34) neither compares ranks, nor prints a summary, nor has measured times; together
    # they are a fifth of its imports. serialize resolves `Timings` for its type hints itself.
    from .measured.timing import Timings
    from .ranks.report import RankReport

__all__ = ["Capture", "RankLog", "Skipped", "TorchMessage"]


@dataclass(frozen=True)
class TorchMessage:
    """A warning or log line torch emitted while capturing, kept for the view instead of stderr."""

    message: str
    compile_id: str = ""  # the compile it was said in ("" outside any)
    level: str = "WARNING"
    origin: str = ""  # the logger (`torch._dynamo...`) or the warning's category
    where: str = ""  # torch's file and line that said it
    count: int = 1  # the same message said this many times


@dataclass(frozen=True)
class Capture:
    """All compilations torch logged while capturing, keyed by compile id (tlparse's form)."""

    compiles: tuple[Compile, ...] = ()
    torch_version: str = ""
    source: str = ""  # "live", or the log path it was read from
    ranks: tuple[int, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    global_artifacts: tuple[str, ...] = ()  # events logged outside any compile id (`-/-`)
    partial: str = ""  # why the capture stops early (the code raised), "" when complete
    timings: Timings | None = None  # measured after the run, when asked for
    sources: dict[str, str] = field(default_factory=dict)  # notebook cell file -> its code
    cells: dict[str, int] = field(default_factory=dict)  # notebook cell file -> its number
    messages: tuple[TorchMessage, ...] = ()  # what torch said (warnings, log lines) meanwhile
    world_size: int | None = None  # processes in the distributed job, when known
    # Per rank log (or saved rank capture) read: where each ends, what of it could not be read.
    rank_logs: tuple[RankLog, ...] = ()
    # What the capture could not see, and how to see it (e.g. code compiled before the block).
    note: str = ""
    # torch's compile caches while capturing: "fresh" (compilescope turned them off and
    # compiled into a fresh folder: every stage compiled, cold), "user" (left as the user had
    # them: a warm cache hits), "" (a log: not known).
    caches: str = ""

    # --- lookup -----------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Compile]:
        return iter(self.compiles)

    def __len__(self) -> int:
        return len(self.compiles)

    def __getitem__(self, key: str | CompileId | int) -> Compile:
        """`cap["0/0"]`, `cap["rank1:0/0"]`, `cap[CompileId(...)]`, or by position `cap[0]`."""
        if isinstance(key, int):
            return self.compiles[key]
        wanted = CompileId.parse(key) if isinstance(key, str) else key
        for compile_ in self.compiles:
            if compile_.id == wanted:
                return compile_
        if wanted.rank is None and len(self.ranks) == 1:
            # One rank's capture (live, in a torchrun job): `cap["0/0"]` means its `rank1:0/0`.
            return self[replace(wanted, rank=self.ranks[0])]
        known = ", ".join(str(c.id) for c in self.compiles) or "none"
        raise KeyError(f"no compile {str(wanted)!r} in this capture (compile ids: {known})")

    @property
    def compile_ids(self) -> tuple[str, ...]:
        return tuple(str(c.id) for c in self.compiles)

    @property
    def graph_breaks(self) -> tuple[tuple[CompileId, GraphBreak], ...]:
        return tuple((c.id, b) for c in self.compiles for b in c.graph_breaks)

    @property
    def several_ranks(self) -> bool:
        """A job of several ranks, as far as this capture knows: ranks with compiles or logs,
        or (for logs and merged ranks, not one rank's own live capture) a world size of 2+."""
        known = set(self.ranks) | {log.rank for log in self.rank_logs}
        return len(known) > 1 or (self.source != "live" and (self.world_size or 0) > 1)

    def rank(self, rank: int) -> Capture:
        """The compilations of one rank of a multi-process log."""
        compiles = tuple(c for c in self.compiles if c.id.rank == rank)
        logs = tuple(log for log in self.rank_logs if log.rank == rank)
        return Capture(
            compiles,
            self.torch_version,
            self.source,
            (rank,),
            world_size=self.world_size,
            # A rank's own unreadable entries where the reader counted them per rank.
            skipped=tuple(s for log in logs for s in log.skipped) if logs else self.skipped,
            sources=self.sources,
            cells=self.cells,
            rank_logs=logs,
        )

    def compare_ranks(self, world_size: int | None = None) -> RankReport:
        """The ranks grouped by what they compiled, and where each group parts from the others
        (a RankReport: print it, or show it in a notebook)."""
        from .ranks.report import compare_ranks  # see the imports at the top

        return compare_ranks(self, world_size)

    # --- JSON --------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        body = cast("dict[str, Any]", serialize.encode(self))  # a dataclass encodes to a dict
        return {"format": serialize.FORMAT, "version": serialize.VERSION, **body}

    def to_json(self, indent: int | None = None) -> str:
        """The capture as JSON (format `compilescope.capture`, described by capture.schema.json)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> Capture:
        """Read `to_json` output; FormatError says what is wrong and where."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise serialize.FormatError(f"not JSON: {error}") from None
        if not isinstance(data, dict) or data.get("format") != serialize.FORMAT:
            raise serialize.FormatError(
                f"not a compilescope capture (no 'format': {serialize.FORMAT!r})"
            )
        version = data.get("version")
        if not isinstance(version, int) or version > serialize.VERSION:
            raise serialize.FormatError(
                f"capture format version {version!r} is newer than this compilescope reads "
                f"({serialize.VERSION}); upgrade compilescope"
            )
        body = {k: v for k, v in data.items() if k not in ("format", "version")}
        return cast(Capture, serialize.decode(cls, _cells_kept_once(body)))

    # --- text --------------------------------------------------------------------------------
    def summary(self) -> str:
        from .summary import summarize  # see the imports at the top

        return summarize(self)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:  # what a terminal shows
        return self.summary()

    # --- drawn (by views/: see Drawing) ------------------------------------------------------
    def to_html(
        self, path: str | os.PathLike[str] | None = None, before: Capture | None = None
    ) -> str:
        """The standalone, offline HTML report (the interactive view inlined, a script-free one
        beside it), as `DataFrame.to_html` does: written to `path` (returns the path), or
        returned as a string without one. With `before`, it also holds the diff from that
        capture to this one. The same as `compilescope.to_html(cap, path)`."""
        return _drawing().report(self, path, before)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        # IPython's rich display, as anywidget objects have it: a notebook shows the widget
        # that %%compile_fx shows (with its script-free HTML); a terminal prints repr.
        return _drawing().bundle(self, include, exclude)


def _cells_kept_once(body: dict[str, Any]) -> dict[str, Any]:
    """A capture saved before the cell numbers were kept once (`cells`, by file) wrote them on
    each frame (`cell`, `cell_line`) and each graph break and fallback (`cell`): read into
    `cells`, where the capture keeps them now."""
    cells, compiles = body.get("cells"), body.get("compiles")
    found: dict[str, int] = {}
    # Anything malformed is left as it is, for decode to say what is wrong and where.
    for c in compiles if isinstance(compiles, list) else ():
        if not isinstance(c, dict):
            continue
        frame = c.get("frame")
        records = [frame] if isinstance(frame, dict) else []
        for key in ("graph_breaks", "fallbacks"):
            breaks = c.get(key)
            records += [
                {**b, "file": b["location"].get("file")}
                for b in (breaks if isinstance(breaks, list) else ())
                if isinstance(b, dict) and isinstance(b.get("location"), dict)
            ]
        for record in records:
            file, number = record.get("file"), record.get("cell")
            if isinstance(file, str) and isinstance(number, int):
                found.setdefault(file, number)
    if not found or not isinstance(cells, (dict, type(None))):
        return body
    return {**body, "cells": {**found, **(cells or {})}}


class Drawing(Protocol):
    """How a capture is drawn. views/ draws and model/ never imports views/ (one direction of
    flow), so the package's __init__ hands its drawing in at import: `draw_with`."""

    def report(
        self, capture: Capture, path: str | os.PathLike[str] | None, before: Capture | None
    ) -> str:
        """The offline HTML report, written to `path` (returns the path) or returned."""
        ...

    def bundle(self, capture: Capture, include: Any, exclude: Any) -> Any:
        """IPython's MIME bundle (the widget) where the front end shows HTML; else None."""
        ...


_DRAWING: list[Drawing] = []


def draw_with(drawing: Drawing) -> None:
    """Draw captures with `drawing` (compilescope/__init__.py calls this at import)."""
    _DRAWING[:] = [drawing]


def _drawing() -> Drawing:
    if not _DRAWING:  # cannot happen through `import compilescope...`: the package runs first
        raise RuntimeError("compilescope's views are not set up: `import compilescope` first")
    return _DRAWING[0]
