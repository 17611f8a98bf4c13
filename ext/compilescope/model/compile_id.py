"""Compile ids, written and parsed exactly as tlparse writes them (`0/0`, `1/0_1`, `!0/2/0`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TypeVar

_PATTERN = re.compile(
    r"^(?:\[?rank(?P<rank>\d+)\]?:)?\[?(?:!(?P<ca>\d+)/)?(?P<frame>-|\d+)/(?P<fcid>-|\d+)"
    r"(?:_(?P<attempt>\d+))?\]?$"
)


_FROM_METADATA: dict[tuple[object, ...], CompileId] = {}

_Heard = TypeVar("_Heard")


@dataclass(frozen=True, order=True)
class CompileId:
    """torch's CompileId plus the rank that logged it; None where torch gave nothing."""

    rank: int | None = None
    compiled_autograd_id: int | None = None
    frame_id: int | None = None
    frame_compile_id: int | None = None
    attempt: int = 0

    def __str__(self) -> str:
        # tlparse: "[!{ca}/]{frame}/{frame_compile}[_{attempt}]", "-" for a missing part.
        text = "" if self.compiled_autograd_id is None else f"!{self.compiled_autograd_id}/"
        text += "-" if self.frame_id is None else str(self.frame_id)
        text += "/" + ("-" if self.frame_compile_id is None else str(self.frame_compile_id))
        if self.attempt:
            text += f"_{self.attempt}"
        if self.rank is not None:
            text = f"rank{self.rank}:{text}"
        return text

    @property
    def is_global(self) -> bool:
        """Events logged outside any compilation (tlparse's `-/-`)."""
        return self.frame_id is None and self.compiled_autograd_id is None

    @classmethod
    def parse(cls, text: str) -> CompileId:
        """Read `0/0`, `[0/0_1]`, `!1/0/0`, `rank1:0/0`; raises ValueError naming the text."""
        match = _PATTERN.match(text.strip())
        if not match:
            raise ValueError(f"not a compile id: {text!r} (expected a form like '0/0' or '1/0_1')")

        def num(group: str) -> int | None:
            value = match.group(group)
            return None if value in (None, "-") else int(value)

        return cls(
            rank=num("rank"),
            compiled_autograd_id=num("ca"),
            frame_id=num("frame"),
            frame_compile_id=num("fcid"),
            attempt=num("attempt") or 0,
        )

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, object], rank: int | None = None) -> CompileId:
        """The id of one structured-trace record (its `frame_id`, `attempt`, ... fields)."""
        get = metadata.get
        key = (
            get("rank"), get("compiled_autograd_id"), get("frame_id"),
            get("frame_compile_id"), get("attempt"), rank,
        )  # fmt: skip
        try:
            # A log has tens of thousands of records and a few hundred ids: make each once.
            return _FROM_METADATA[key]
        except (KeyError, TypeError):  # TypeError: an unhashable value in a malformed record
            pass
        made = cls._from_metadata(metadata, rank)
        if len(_FROM_METADATA) < 100_000:
            try:
                _FROM_METADATA[key] = made
            except TypeError:
                pass
        return made

    @classmethod
    def _from_metadata(cls, metadata: Mapping[str, object], rank: int | None) -> CompileId:

        def opt_int(key: str) -> int | None:
            value = metadata.get(key)
            return value if isinstance(value, int) else None

        rank_in_record = opt_int("rank")
        return cls(
            rank=rank_in_record if rank_in_record is not None else rank,
            compiled_autograd_id=opt_int("compiled_autograd_id"),
            frame_id=opt_int("frame_id"),
            frame_compile_id=opt_int("frame_compile_id"),
            attempt=opt_int("attempt") or 0,
        )


def heard_for(table: Mapping[str, _Heard], cid: CompileId) -> _Heard | None:
    """What a live listener kept for compile `cid`, in a table keyed by the ids it heard.
    Listeners hear CompileContext's id, which has no rank and no restart attempt (`0/0`), while
    the trace records the attempt that produced the graph (`0/0_1`, e.g. after a graph break):
    the id with its attempt first, then without."""
    return table.get(str(replace(cid, rank=None))) or table.get(
        str(replace(cid, rank=None, attempt=0))
    )
