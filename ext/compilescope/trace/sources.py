"""Open what a user points at: a TORCH_TRACE log or folder, a folder of saved ranks, a saved capture."""

from __future__ import annotations

import os
from pathlib import Path

from ..model.capture import Capture
from ..model.serialize import FormatError
from .reader import TraceError, load_trace


def open_capture(path: str | os.PathLike[str]) -> Capture:
    """The Capture at `path`: a saved capture (`.json`, from `to_json` or `--json`), a folder of
    `write_rank` files, or TORCH_TRACE logs (a file or a folder, `.log` or `.log.gz`).
    Errors (FileNotFoundError, TraceError, FormatError) name the path."""
    where = Path(path)
    if not where.exists():
        raise FileNotFoundError(f"no such file or folder: {str(where)!r}")
    if where.is_file() and is_saved_capture(where):
        try:
            return Capture.from_json(where.read_bytes())
        except FormatError as error:
            raise FormatError(
                f"{str(where)!r} is not a capture compilescope can read: {error}"
            ) from None
    if where.is_dir():
        # Imported for a folder only: rank files bring the rank comparison's modules, which
        # a one-file log's report does not use (issue 34: a fresh process each time).
        from .rank_files import merge_ranks, rank_files, summary_files

        if rank_files(where) or summary_files(where):
            try:
                return merge_ranks(where)
            except FormatError as error:
                raise FormatError(f"{str(where)!r}: {error}") from None
            except ValueError as error:
                raise TraceError(str(error)) from None
    return load_trace(where)


def is_saved_capture(file: Path) -> bool:
    """A `.json` file, or one whose text starts as a JSON object (logs start with a glog line)."""
    if file.name.endswith(".json"):
        return True
    with file.open("rb") as handle:
        return b"".join(handle.read(256).split()).startswith(b'{"format"')
