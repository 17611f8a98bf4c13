"""Where measuring's time goes, phase by phase: read by the benchmarks, never shown."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

# phase -> seconds, summed since the last reset (one capture's measuring)
SECONDS: dict[str, float] = {}


def reset() -> None:
    SECONDS.clear()


@contextmanager
def phase(name: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        SECONDS[name] = SECONDS.get(name, 0.0) + time.perf_counter() - start
