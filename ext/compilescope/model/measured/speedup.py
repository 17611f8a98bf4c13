"""Whether the user's real steps got faster between two captures: a ratio, its interval, a verdict."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .timing import RealSteps, Timings

# A ratio whose whole interval lies within this much of 1 is not called a change: the interval
# holds the spread of the steps inside each capture, not the drift between two runs of the
# same code (another process on a shared CPU, clocks, a GPU warming), which is a few percent.
NOISE = 0.03
# Two-sided 95% (normal quantile) for the rank interval below.
_Z = 1.959964

FASTER, SLOWER, WITHIN_NOISE, NOT_MEASURED = "faster", "slower", "within noise", "not measured"


@dataclass(frozen=True)
class StepSpeedup:
    """Before's compiled real-step median over after's: above 1, the after steps are faster.

    `low`, `high`: a 95% interval for the ratio (see `ratio_interval`); `verdict` is "faster"
    only when the whole interval lies above 1 + NOISE, "slower" when below 1 / (1 + NOISE),
    else "within noise"; "not measured" when a capture has no real steps (`note` says why).
    `note` also says when the captures ran on different devices or a window was disturbed."""

    before_s: float | None
    after_s: float | None
    ratio: float | None
    low: float | None
    high: float | None
    verdict: str
    note: str = ""
    steps: tuple[int, int] = (0, 0)  # how many timed steps each median is of
    # The two captures' compile time (s), where known: a fix that compiles longer (max-autotune)
    # is worth it only after enough steps (`payback`).
    compile_s: tuple[float | None, float | None] = (None, None)

    @property
    def faster(self) -> bool:
        """A measured win: the only verdict a fix may be presented as helping by."""
        return self.verdict == FASTER

    @classmethod
    def from_real_steps(
        cls,
        before: RealSteps | None,
        after: RealSteps | None,
        before_note: str = "",
        after_note: str = "",
    ) -> StepSpeedup:
        """Compare two windows of real steps; `*_note`: why a capture has none, where it has none."""
        if before is None or after is None:
            missing = [
                f"{side}: no real steps timed" + (f" ({why})" if why else "")
                for side, steps, why in (
                    ("before", before, before_note),
                    ("after", after, after_note),
                )
                if steps is None
            ]
            return cls(
                before.compiled.median_s if before else None,
                after.compiled.median_s if after else None,
                None,
                None,
                None,
                NOT_MEASURED,
                "; ".join(missing),
            )
        a, b = before.compiled, after.compiled
        if a.median_s <= 0 or b.median_s <= 0:
            return cls(a.median_s, b.median_s, None, None, None, NOT_MEASURED, "a median of 0 s")
        ratio = a.median_s / b.median_s
        walls_a, walls_b = _walls(before), _walls(after)
        if walls_a and walls_b:
            low, high = ratio_interval(walls_a, walls_b)
        else:
            # Saved without each step's time: the extremes of any one before step over any
            # one after step, the widest the ratio of two steps can be.
            low, high = a.min_s / b.max_s, a.max_s / b.min_s
        # The ratio of medians and the pairwise interval's centre can differ on a skewed sample:
        # the interval is widened to hold the figure it is shown beside.
        low, high = min(low, ratio), max(high, ratio)
        notes = _device_note(before, after)
        for side, real in (("before", before), ("after", after)):
            if real.note:  # a window something disturbed: a recompile, a noisy machine
                notes.append(f"{side} steps: {real.note}")
        return cls(
            a.median_s,
            b.median_s,
            ratio,
            low,
            high,
            verdict(low, high),
            "; ".join(notes),
            (len(walls_a) or a.repeats, len(walls_b) or b.repeats),
        )

    @classmethod
    def from_timings(cls, before: Timings | None, after: Timings | None) -> StepSpeedup | None:
        """Two captures' timings compared; None when neither followed the user's steps at all."""
        real_a = before.real_steps if before else None
        real_b = after.real_steps if after else None
        note_a = before.real_steps_note if before else ""
        note_b = after.real_steps_note if after else ""
        if real_a is None and real_b is None and not (note_a or note_b):
            return None
        return cls.from_real_steps(real_a, real_b, note_a, note_b)

    def with_compile_times(self, before: float | None, after: float | None) -> StepSpeedup:
        """The same comparison, knowing each capture's compile time."""
        return replace(self, compile_s=(before, after))

    def payback(self) -> str:
        """What a longer compile buys, in words: after how many steps the time per step saved
        makes up for it ("" where compiling did not take longer, or was not measured)."""
        a, b = self.compile_s
        if a is None or b is None or b <= a or self.before_s is None or self.after_s is None:
            return ""
        extra = b - a
        saved = self.before_s - self.after_s
        if self.verdict != FASTER or saved <= 0:
            return f"compiling took {extra:.1f} s longer, for no measured gain per step"
        steps = math.ceil(extra / saved)
        return (
            f"compiling took {extra:.1f} s longer; {saved * 1e3:.3f} ms saved per step pays "
            f"it back after {steps:,} steps"
        )

    def text(self) -> str:
        """One line, e.g. "step speedup 1.02x [0.97, 1.08]: within noise (3.064 -> 3.003 ms ...)"."""
        if self.ratio is None or self.low is None or self.high is None:
            return "step speedup: not measured" + (f" ({self.note})" if self.note else "")
        words = {
            FASTER: "faster",
            SLOWER: "slower: the steps after take longer",
            WITHIN_NOISE: "within noise: no measured change",
        }[self.verdict]
        where = [f"{_ms(self.before_s)} -> {_ms(self.after_s)} ms per step"]
        if all(self.steps):
            where.append(f"medians of {self.steps[0]} and {self.steps[1]} steps")
        line = f"step speedup {self.ratio:.2f}x [{self.low:.2f}, {self.high:.2f}]: {words}"
        extras = [x for x in (self.payback(), self.note) if x]
        return f"{line} ({', '.join(where)})" + "".join(f"; {x}" for x in extras)

    def __str__(self) -> str:
        return self.text()


def verdict(low: float, high: float, noise: float = NOISE) -> str:
    """The verdict on an interval: faster only when all of it is above 1 by more than `noise`."""
    if low > 1 + noise:
        return FASTER
    if high < 1 / (1 + noise):
        return SLOWER
    return WITHIN_NOISE


def ratio_interval(before: list[float], after: list[float], z: float = _Z) -> tuple[float, float]:
    """A 95% interval for before / after from every pair of one before step and one after step.

    The ratios of all n*m pairs, sorted; the interval drops the k smallest and k largest, k from
    the Mann-Whitney statistic's normal approximation (the Hodges-Lehmann/Moses interval, on a
    log scale). No resampling, so no seed: the same steps give the same interval; and by ranks,
    so one step the OS interrupted moves it little. Few steps give the widest interval: the
    smallest and largest pairwise ratio."""
    n, m = len(before), len(after)
    ratios = sorted(x / y for x in before for y in after)
    # The interval's lower end is the c-th smallest ratio (from 1), its upper the c-th largest.
    c = int(n * m / 2 - z * math.sqrt(n * m * (n + m + 1) / 12))
    k = min(max(c, 1) - 1, (n * m - 1) // 2)  # ratios left out at each end
    return ratios[k], ratios[n * m - 1 - k]


def _walls(real: RealSteps) -> list[float]:
    return [w for w in real.step_walls if w > 0]


def _device_note(before: RealSteps, after: RealSteps) -> list[str]:
    # The device's name where it was read (a later RealSteps has settings.device_name), else
    # its kind: an H100 against an H200 is no measure of a fix either.
    names = [_device_of(r) for r in (before, after)]
    if names[0] == names[1]:
        return []
    return [f"the captures ran on different devices (before {names[0]}, after {names[1]})"]


def _device_of(real: RealSteps) -> str:
    settings = getattr(real, "settings", None)
    name = getattr(settings, "device_name", "") if settings is not None else ""
    return f"{real.device}: {name}" if name else real.device


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"
