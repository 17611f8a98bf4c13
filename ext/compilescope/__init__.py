"""compilescope: see what torch.compile did to your code, stage by stage."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model.capture import Capture, Skipped
from .model.compile_id import CompileId
from .model.serialize import FormatError
from .trace.reader import TraceError, load_trace

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .live.session import capture, capturing


def __getattr__(name: str):
    # The live capture imports torch; keep `import compilescope` light for log readers.
    if name in ("capture", "capturing"):
        from .live import session as live

        return getattr(live, name)
    raise AttributeError(f"module 'compilescope' has no attribute {name!r}")


__all__ = [
    "Capture",
    "CompileId",
    "FormatError",
    "Skipped",
    "TraceError",
    "capture",
    "capturing",
    "load_trace",
]


def load_ipython_extension(ipython) -> None:
    """`%load_ext compilescope`: registers the %%compile_fx magic."""
    from .magic import load_ipython_extension as load

    load(ipython)


def last():
    """The capture of the most recent %%compile_fx cell (None before the first)."""
    from .magic import last as _last

    return _last()
