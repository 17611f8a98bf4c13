"""Two records' texts (a break's whole reason, a recompile's guard) told apart in one line."""

from __future__ import annotations

import difflib

_WIDTH = 160  # characters of one line shown; a reason's hint can run to several hundred


def headline(record: object) -> str:
    """The first line of a record, shortened; a multi-line one is marked with `...`."""
    lines = str(record).strip().splitlines() or [""]
    more = " ..." if len(lines) > 1 else ""
    return _short(lines[0]) + more


def text_difference(p: str, q: str) -> str:
    """`is A vs B` when the first lines differ; else the record named by its first line and
    the first lines (two at most) where the two part: two breaks at one user line differ only
    past torch's generic first line ("Encountered graph break when attempting to trace ...")."""
    a, b = _lines(p), _lines(q)
    if not a or not b or a[0] != b[0]:
        return f"is {headline(p)!r} vs {headline(q)!r}"
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            return f"({headline(a[0])}) differs: {_part(a[i1:i2])!r} vs {_part(b[j1:j2])!r}"
    return f"({headline(a[0])}) differs in spacing only"


def _lines(text: str) -> list[str]:
    # Blank lines and indentation carry nothing two ranks could disagree on.
    return [line.strip() for line in text.splitlines() if line.strip()]


def _part(lines: list[str]) -> str:
    return " / ".join(_short(line) for line in lines[:2]) if lines else "(nothing)"


def _short(line: str) -> str:
    return line if len(line) <= _WIDTH else line[: _WIDTH - 3] + "..."
