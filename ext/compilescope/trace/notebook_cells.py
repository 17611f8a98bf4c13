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


def typed_cell(number: int) -> str | None:
    """Cell `number` as the user typed it (IPython's raw input history), if this is IPython.

    The files a capture points at hold what ran: `%%compile_fx`'s cell wrapped as a function,
    or IPython's transformed cell (`get_ipython().run_cell_magic(...)`); the user typed this.
    """
    if "IPython" not in sys.modules:
        return None
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    history = getattr(getattr(get_ipython(), "history_manager", None), "input_hist_raw", None)
    if not isinstance(history, list) or not 0 < number < len(history):
        return None
    text = history[number]
    return text if isinstance(text, str) and text.strip() else None


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
