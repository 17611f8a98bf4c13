"""Which notebook cell a file name is: IPython's own map of compiled cells, else its naming pattern."""

from __future__ import annotations

import re
import sys

# `<ipython-input-12-0a1b2c>`: IPython's name for the code of cell 12.
_IPYTHON_CELL = re.compile(r"<ipython-input-(\d+)-[0-9a-f]+>")


def ipython_cell(filename: str) -> int | None:
    """The execution count of a cell from the filename IPython compiled it under, if it says."""
    match = _IPYTHON_CELL.search(filename)
    return int(match.group(1)) if match else None


def notebook_cell(filename: str) -> int | None:
    """The notebook cell a file name belongs to: IPython's own map, else its naming pattern."""
    if "IPython" not in sys.modules:  # not in IPython; importing it would cost 50 ms for nothing
        return ipython_cell(filename)
    try:
        from IPython import get_ipython
    except ImportError:
        return ipython_cell(filename)
    shell = get_ipython()
    # IPython >= 8 maps the file names of compiled cells to execution counts here.
    mapping = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if isinstance(mapping, dict) and filename in mapping:
        return int(mapping[filename])
    return ipython_cell(filename)
