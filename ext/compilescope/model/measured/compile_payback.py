"""Does compiling pay: the compile time against what each compiled step (or call) saves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .compile_budget import Compiles, compile_budget

if TYPE_CHECKING:  # a log's report (no measured times) does not import the timing model
    from .timing import Timings


@dataclass(frozen=True)
class PayBack:
    """Compile time against the time one compiled step saves over eager, both measured."""

    compile_s: float  # the capture's compile time (compile_budget's figure)
    saved_s: float  # per step (or call): eager minus compiled; negative where compiled is slower
    unit: str  # "step": the loop's own steps, timed; "call": the graphs timed alone
    compiled_s: float
    eager_s: float

    @property
    def steps(self) -> float | None:
        """Steps (or calls) after which the compile time is paid back; None: never."""
        return self.compile_s / self.saved_s if self.saved_s > 0 else None

    def sentence(self) -> str:
        units = f"{self.unit}s"
        each = (
            f"compiling took {self.compile_s:.1f} s; a compiled {self.unit} takes "
            f"{self.compiled_s * 1e3:.3f} ms against {self.eager_s * 1e3:.3f} ms eager"
        )
        steps = self.steps
        if steps is None:
            return f"Compiling does not pay back: {each}, so no number of {units} makes up for it."
        return (
            f"Compiling pays back after {_count(steps)} {units}: {each} "
            f"({self.saved_s * 1e3:.3f} ms saved per {self.unit})."
        )


def _count(steps: float) -> str:
    n = int(steps) + 1
    return f"{n:,}" if n < 1_000_000 else f"{n / 1e6:.1f} million"


def pay_back(capture: Compiles, compile_s: float | None = None) -> PayBack | None:
    """Where both a compiled and an eager time were measured: the loop's own steps (real
    steps), else the compiled graphs timed alone (forward, and backward where timed) as one
    call of the code. None where either is missing or nothing was compiled. `compile_s`: the
    capture's compile time where the caller has its budget already."""
    seconds = compile_s if compile_s is not None else compile_budget(capture).seconds
    timings: Timings | None = getattr(capture, "timings", None)  # a rank's report has none
    if timings is None or seconds <= 0:
        return None
    real = timings.real_steps
    if real is not None and real.eager is not None and real.eager.median_s > 0:
        compiled, eager = real.compiled.median_s, real.eager.median_s
        return PayBack(seconds, eager - compiled, "step", compiled, eager)
    compiled = eager = 0.0
    for g in timings.graphs:
        pairs = ((g.eager, g.compiled), (g.eager_backward, g.compiled_backward))
        for e, c in pairs:
            if e is not None and c is not None:
                eager += e.median_s
                compiled += c.median_s
    if eager <= 0:
        return None
    return PayBack(seconds, eager - compiled, "call", compiled, eager)


def compile_time_line(capture: Compiles) -> str:
    """The capture's compile time in one line, cold or warm, and whether it pays back ("" when
    nothing was timed)."""
    budget = compile_budget(capture)
    if budget.seconds <= 0:
        return ""
    label = f" ({budget.label})" if budget.label else ""
    line = f"compile time {budget.seconds:.2f} s{label}"
    paid = pay_back(capture, budget.seconds)
    return f"{line}. {paid.sentence()}" if paid is not None else line
