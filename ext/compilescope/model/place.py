"""A place in the code (a file's line, or a notebook cell's line) and how it reads to a person."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..common import short_path


@dataclass(frozen=True)
class Place:
    """A line of code, as torch records it in `# File: path:line in fn, code: ...`.

    A capture keeps the number of each notebook cell once, by file (`Capture.cells`): a label
    is given those numbers. `cell` is set only on a place handed out of a capture with its
    cell looked up (a finding's places), so that it reads the same without the capture.
    """

    file: str
    line: int
    function: str = ""
    code: str = ""
    cell: int | None = None

    def cell_in(self, cells: Mapping[str, int] | None = None) -> int | None:
        """The number of the notebook cell this line is in, if it is one."""
        return self.cell if self.cell is not None else (cells or {}).get(self.file)

    def label(self, cells: Mapping[str, int] | None = None) -> str:
        """How a person finds the line: "cell [3] line 2" in a notebook cell (whose file name
        changes at every run), else "dir/file.py:12"."""
        number = self.cell_in(cells)
        if number is not None:
            return cell_label(number, self.line)
        return f"{short_path(self.file)}:{self.line}"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" + (f" in {self.function}" if self.function else "")


def cell_label(number: int, line: int | None = None) -> str:
    """A notebook cell as IPython numbers it, "cell [3]", or a line of it, "cell [3] line 2":
    the one place this is written (the widget's JS has its own, format.js:formatCell)."""
    return f"cell [{number}]" + (f" line {line}" if line is not None else "")
