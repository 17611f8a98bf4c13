"""What Inductor's runtime autotuner benchmarked: each Triton kernel's configs, their times, the winner.

Inductor's CachingAutotuner (torch/_inductor/runtime/triton_heuristics.py, torch 2.8 to 2.13)
logs every config it benchmarked, with its time, registers and spills, and then the best one,
at DEBUG on its module's logger, when a kernel first runs. The capture hears those records
(structured: the log call's arguments) with its own handler, and turns them into plain data
at once: no config object outlives the record.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterator
from dataclasses import replace

from ...model.capture import Capture
from ...model.kernel import AutotuneChoice

LOGGER = "torch._inductor.runtime.triton_heuristics"
_BENCHMARKED = "Benchmark all input configs for %s, get:"
_CHOICE_PREFIX = "%s: %f, nreg %d, nspill %d"
_BEST = "Best config for %s:"


class AutotuneRecords(logging.Handler):
    """Kernel name -> the configs benchmarked for it, in order, the chosen one marked."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.kernels: dict[str, list[AutotuneChoice]] = {}
        self._current: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._hear(record)
        except Exception:  # a record of another shape (torch changed it): skip it
            self._current = None

    def _hear(self, record: logging.LogRecord) -> None:
        msg, args = str(record.msg), record.args
        if not isinstance(args, tuple):
            return
        if msg.startswith(_BENCHMARKED) and args:
            self._current = str(args[0])
            self.kernels[self._current] = []
        elif msg.startswith(_CHOICE_PREFIX) and self._current and len(args) >= 4:
            config, ms, nreg, nspill = args[:4]
            time = float(ms) if isinstance(ms, (int, float)) else None
            time = time if time is not None and math.isfinite(time) else None
            self.kernels[self._current].append(
                AutotuneChoice(str(config), time, _int(nreg), _int(nspill))
            )
        elif msg.startswith(_BEST) and len(args) >= 2:
            name, best = str(args[0]), str(args[1])
            self.kernels[name] = [
                replace(c, chosen=c.config == best) for c in self.kernels.get(name, [])
            ]
            self._current = None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None


@contextlib.contextmanager
def hearing_autotune() -> Iterator[AutotuneRecords]:
    """Inside, the autotuner's benchmark records are kept; its logger is as it was afterwards
    (its records stay out of the user's handlers: they are DEBUG noise to everyone else)."""
    logger = logging.getLogger(LOGGER)
    records = AutotuneRecords()
    level, propagate = logger.level, logger.propagate
    logger.addHandler(records)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield records
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)
        logger.propagate = propagate


def with_autotune_records(capture: Capture, records: AutotuneRecords) -> Capture:
    """Each Triton kernel with the configs its autotuner benchmarked (matched by name)."""
    heard = {name: tuple(choices) for name, choices in records.kernels.items() if choices}
    if not heard:
        return capture
    compiles = []
    for c in capture:
        codes = []
        for code in c.output_code:
            kernels = tuple(
                replace(k, autotune=heard[k.name]) if k.name in heard else k for k in code.kernels
            )
            codes.append(replace(code, kernels=kernels))
        compiles.append(replace(c, output_code=tuple(codes)))
    return replace(capture, compiles=tuple(compiles))
