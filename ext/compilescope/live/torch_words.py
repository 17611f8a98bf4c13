"""What torch says during a capture (its loggers' warnings, Python warnings raised in torch),
kept for the view instead of spilled on stderr; the user's own prints and warnings pass."""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from ..model.capture import TorchMessage


class _Said:
    """Collects messages, each said once (a repeat counts), in the order first said."""

    def __init__(self) -> None:
        # (message, compile id, level, origin) -> (where first said, how often)
        self.items: dict[tuple[str, str, str, str], tuple[str, int]] = {}

    def add(self, message: str, compile_id: str, level: str, origin: str, where: str) -> None:
        key = (message, compile_id, level, origin)
        first, count = self.items.get(key, (where, 0))
        self.items[key] = (first, count + 1)  # a repeat keeps its place and first `where`

    def messages(self) -> tuple[TorchMessage, ...]:
        return tuple(
            TorchMessage(m, compile_id=c, level=lv, origin=o, where=w, count=n)
            for (m, c, lv, o), (w, n) in self.items.items()
        )


def _compile_id() -> str:
    try:
        from torch._guards import CompileContext

        trace = CompileContext.current_trace_id()
    except Exception:  # noqa: BLE001  (a torch without it: the message still counts)
        return ""
    return str(trace) if trace is not None else ""


def _short(path: str) -> str:
    marker = f"{os.sep}torch{os.sep}"
    return "torch/" + path.split(marker, 1)[1] if marker in path else os.path.basename(path)


class _Keep(logging.Filter):
    """On torch's own stderr handlers: keep WARNING and above for the view, drop them there.
    Lower levels are what a user asked for with TORCH_LOGS: they still go to stderr."""

    def __init__(self, said: _Said) -> None:
        super().__init__()
        self.said = said

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not record.name.startswith("torch"):
            return True
        if record.name == "torch.__trace":
            return True
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001  (a bad format string: show it as torch would fail it)
            return True
        where = f"{_short(record.pathname)}:{record.lineno}"
        self.said.add(text, _compile_id(), record.levelname, record.name, where)
        return False


def _torch_handlers() -> list[logging.Handler]:
    found: dict[int, logging.Handler] = {}
    names = ["torch"] + [n for n in logging.root.manager.loggerDict if n.startswith("torch.")]
    for name in names:
        logger = logging.getLogger(name)
        for handler in logger.handlers:
            found[id(handler)] = handler
    return list(found.values())


@contextmanager
def listening() -> Iterator[_Said]:
    """Inside: torch's warnings and log warnings are collected (`.messages()`), not printed.

    Python warnings raised in torch's code are kept; any other warning (the user's own, a
    library's) is shown as usual, when it happens. Handlers, filters and showwarning are
    restored on the way out, on errors too.
    """
    import torch

    said = _Said()
    keep = _Keep(said)
    handlers = _torch_handlers()
    for handler in handlers:
        handler.addFilter(keep)
    torch_dir = os.path.dirname(torch.__file__) + os.sep
    show = warnings.showwarning

    def hook(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if str(filename).startswith(torch_dir):
            where = f"{_short(filename)}:{lineno}"
            said.add(str(message), _compile_id(), "WARNING", category.__name__, where)
        else:  # not torch's: the user sees it where and when it happens, as without us
            show(message, category, filename, lineno, file, line)

    try:
        with warnings.catch_warnings():  # restores showwarning (and filters) on the way out
            warnings.showwarning = hook
            yield said
    finally:
        for handler in handlers:
            handler.removeFilter(keep)
