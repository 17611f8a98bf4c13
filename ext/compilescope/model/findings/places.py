"""Where a finding is, in the user's own code: the innermost line outside libraries, and the cell."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..capture import Capture
from ..compile import Compile, Frame
from ..place import Place
from .parts import is_library

if TYPE_CHECKING:
    from ..measured.timing import (
        OptimizerSeen,  # measured times only: a log's report does not import it
    )


def place(loc: Place, capture: Capture, code: str = "") -> Place:
    """A place handed out of the capture: with its notebook cell when it is one (it then reads
    the same without the capture), its code when known."""
    return replace(
        loc,
        code=(loc.code or code or source_line(capture, loc.file, loc.line)).strip(),
        cell=loc.cell_in(capture.cells),
    )


def source_line(capture: Capture, file: str, line: int) -> str:
    """A line of a notebook cell kept in the capture ("" for other files: a log may come from
    another machine, so files are never read here)."""
    text = capture.sources.get(file)
    if not text:
        return ""
    lines = text.splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else ""


def user_loc(stack: Sequence[Place]) -> Place | None:
    """The innermost entry of a stack that is the user's own code."""
    for loc in reversed(stack):
        if loc.file and not is_library(loc.file):
            return loc
    return None


def split_places(
    location: Place | None, stack: Sequence[Place], capture: Capture
) -> tuple[Place | None, Place | None]:
    """(the user's line, the library line) for something that happened at `location` with the
    user stack `stack`; the library line is None when `location` is the user's own."""
    code = ""
    if location is not None:
        # The trace writes the line without its code or function; the stack's matching entry
        # has them (the function places the line among the profiler's, root_cause.py).
        same = next((s for s in stack if (s.file, s.line) == (location.file, location.line)), None)
        if same is not None:
            code = same.code
            location = replace(location, function=location.function or same.function)
        if not is_library(location.file):
            return place(location, capture, code), None
    user = user_loc(stack)
    at = place(location, capture, code) if location is not None else None
    return (place(user, capture) if user else None), at


def optimizer_place(o: OptimizerSeen, cells: dict[str, int]) -> Place | None:
    """The line of the user's code that builds an optimizer the real steps saw, when known."""
    if not o.file or not o.line:
        return None
    return Place(o.file, o.line, code=o.code, cell=cells.get(o.file))


def frame_places(frame: Frame, capture: Capture) -> tuple[Place | None, Place | None]:
    """(the user's line, the library frame) for a compiled frame: the frame itself when it is
    the user's; else the user's line in the stack that called into it."""
    if not frame.file:
        return None, None
    cell = frame.place.cell_in(capture.cells)
    if cell is not None:  # the frame is the cell's own code
        return replace(frame.place, cell=cell), None
    return split_places(frame.place, frame.stack, capture)


def frame_of(capture: Capture, compile_: Compile) -> Frame:
    """A compile's frame; a compile that failed before Dynamo logged its start (a recompile
    limit hit) borrows the frame of another compile of the same frame id."""
    if compile_.frame.function:
        return compile_.frame
    head = frame_key(compile_)
    for other in capture:
        if frame_key(other) == head and other.frame.function:
            return other.frame
    return compile_.frame


# (rank, compiled autograd id, frame id): see frame_key.
FrameKey = tuple[int | None, int | None, int | None]


def frame_key(compile_: Compile) -> FrameKey:
    """What identifies a frame across its compiles (recompiles and restarts)."""
    cid = compile_.id
    return (cid.rank, cid.compiled_autograd_id, cid.frame_id)


def in_function_of(where: str, place: Place) -> bool:
    """Whether a profiled function, "dir/file.py:12 fn" (its first line), holds the place."""
    location, _, function = where.rpartition(" ")
    if not function or function != place.function:
        return False
    prefix = re.sub(r"\d+$", "", place.label())  # "dir/file.py:" or "cell [3] line "
    first = location[len(prefix) :]
    return location.startswith(prefix) and first.isdigit() and int(first) <= place.line
