"""Keep what torch and its profiler print while compilescope measures out of the user's output."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def silenced() -> Iterator[list[str]]:
    """Inside, Python and OS-level stdout/stderr go to a buffer; yields a list that holds the
    text afterwards. Only around compilescope's own measuring, never around user code: the
    profiler's kineto writes to fd 2 itself (e.g. "USDT: ... profiler_start" on torch 2.13 CPU
    builds), and Jupyter's kernel forwards fd-level output into the cell."""
    held: list[str] = []
    saved_fds = []
    text = io.StringIO()
    with tempfile.TemporaryFile(mode="w+b") as sink:
        try:
            for stream, fd in ((sys.stdout, 1), (sys.stderr, 2)):
                with contextlib.suppress(Exception):
                    stream.flush()
                try:
                    saved_fds.append((fd, os.dup(fd)))
                    os.dup2(sink.fileno(), fd)
                except OSError:  # no such descriptor (an embedded interpreter): Python only
                    pass
            with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
                yield held
        finally:
            for fd, copy in reversed(saved_fds):
                os.dup2(copy, fd)
                os.close(copy)
            sink.seek(0)
            held.append(sink.read().decode("utf-8", "replace"))
            held.append(text.getvalue())
