"""What a log reader could not read, and how one rank's record ends (a rank report's limits)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Skipped:
    """Log content that could not be read, counted by reason (nothing is silently dropped)."""

    reason: str
    count: int
    first_line: int | None = None  # 1-based line of the first occurrence, in logs


@dataclass(frozen=True)
class RankLog:
    """One rank's log (or saved capture) as it was read: a rank report compares a rank only as
    far as this says its record goes, and never calls what lies past that a divergence."""

    rank: int
    file: str = ""  # the log or saved capture it was read from
    events: int = 0  # structured-trace events read (compiles, for a saved capture)
    skipped: tuple[Skipped, ...] = ()  # what of this file could not be read
    ends_early: str = ""  # why the record stops before the rank's own end ("" when it does not)
    last_line: int | None = None  # the line of the last event read
    last_compile_id: str = ""  # the last compile it logged, without the rank ("" if none)
    last_event: str = ""  # torch's name of the last event of that compile
    damaged: tuple[str, ...] = ()  # compile ids (without the rank) with entries lost mid-log
    saved_capture: bool = False  # read from a saved capture (write_rank), not a TORCH_TRACE log

    @property
    def empty(self) -> bool:
        """Nothing at all could be read from it."""
        return self.events == 0

    @property
    def complete(self) -> bool:
        """Read to its end, every entry of it."""
        return not self.ends_early and not self.damaged and self.events > 0

    def where_it_ends(self) -> str:
        """`inside compile 4/0, after aot_forward_graph (line 1187)`: where the record stops."""
        if self.saved_capture:
            return f"after compile {self.last_compile_id}" if self.last_compile_id else "at once"
        if not self.last_event:
            return "before any event"
        at = f" (readable up to line {self.last_line})" if self.last_line else ""
        if not self.last_compile_id:
            return f"after {self.last_event}{at}, outside any compile"
        return f"in compile {self.last_compile_id}, after its {self.last_event}{at}"
