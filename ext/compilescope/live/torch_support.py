"""What this torch supports: the oldest release a live capture runs on, and the features whose private torch API is missing, said in the capture."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import TypeVar

import torch

_R = TypeVar("_R")


def torch_version() -> str:
    return str(torch.__version__)


# The oldest release the supported-versions matrix passes (README "Torch versions"): 2.8-2.10
# record graph breaks, restarts and stage graphs differently from what the capture reads (2.8:
# 60+ failures, and re-partitioning crashed the interpreter; 2.9: the post-grad graph missing;
# 2.10: a loop's break recorded as a restart), so a live capture refuses them by name instead.
OLDEST_TORCH = (2, 11)


def check_supported() -> None:
    """Raise RuntimeError, naming the version, on a torch older than OLDEST_TORCH."""
    parts = re.match(r"(\d+)\.(\d+)", torch_version())
    if parts and (int(parts[1]), int(parts[2])) < OLDEST_TORCH:
        oldest = ".".join(map(str, OLDEST_TORCH))
        raise RuntimeError(
            f"compilescope's live capture needs torch >= {oldest}; this is torch "
            f"{torch_version()} (pip install 'torch>={oldest}'). Reading TORCH_TRACE logs "
            "(compilescope.load_trace, `compilescope report`) works with any torch."
        )


# What a capture could not do on this torch (a private API moved or went): each feature says so
# once, in words the capture shows (`Capture.note`), and the rest of the capture goes on.
_missing: list[str] | None = None


@contextlib.contextmanager
def noting_missing() -> Iterator[list[str]]:
    """Collect, inside the block, the features that found their torch API missing."""
    global _missing
    outer, _missing = _missing, []
    try:
        yield _missing
    finally:
        _missing = outer


def missing(feature: str, error: BaseException | str) -> None:
    """`feature` is not available on this torch: say so in the capture being made."""
    why = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    note = f"{feature}: not available on torch {torch_version()} ({why})"
    if _missing is not None and note not in _missing:
        _missing.append(note)


@contextlib.contextmanager
def optional(
    feature: str, manager: Callable[[], contextlib.AbstractContextManager[_R]]
) -> Iterator[_R | None]:
    """`manager()` entered, or, where entering it reaches a torch API that is not there, None
    and a note that `feature` is not available (the capture goes on without it)."""
    with contextlib.ExitStack() as stack:
        try:
            entered: _R | None = stack.enter_context(manager())
        except (AttributeError, ImportError, TypeError, NotImplementedError) as error:
            missing(feature, error)
            entered = None
        yield entered
