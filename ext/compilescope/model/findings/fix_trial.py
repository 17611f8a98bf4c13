"""A fix tried: the capture before and after it, side by side, in the figures a fix should move."""

from __future__ import annotations

from dataclasses import dataclass

from ...common import human_bytes, milliseconds
from ..capture import Capture
from ..compile import compile_seconds
from ..measured.speedup import StepSpeedup
from .parts import Finding, Fix
from .ranked import findings, where_text


@dataclass(frozen=True)
class Headline:
    """What a capture adds up to: the figures a fix is judged by (None: not measured)."""

    compile_ids: int
    graph_breaks: int
    restarts: int
    recompiles: int
    graphs: int
    compile_s: float | None
    step_s: float | None  # compiled forward + backward of every timed graph (median runs)
    # Activation memory of every partition: as the partitioner predicts it, and as the compiled
    # code held it over one run (live captures; None where not measured). A memory budget fix
    # compiles again, so both are figures of real compiles.
    predicted_bytes: int | None = None
    held_bytes: int | None = None

    def as_row(self) -> dict[str, int | float | None]:
        return {
            "compile ids": self.compile_ids,
            "graph breaks": self.graph_breaks,
            "restarts": self.restarts,
            "recompiles": self.recompiles,
            "graphs": self.graphs,
            "compile time (s)": self.compile_s,
            "compiled step (s)": self.step_s,
            "activations, predicted (B)": self.predicted_bytes,
            "activations, held (B)": self.held_bytes,
        }


def headline(capture: Capture) -> Headline:
    """The capture's headline figures (a restart is a compile id torch tried again)."""
    compiles = list(capture)
    partitions = [p for c in compiles if (p := c.partition) is not None]
    held = [c.held for c in compiles if c.partition is not None and c.held and c.held.measured]
    if len(held) != len(partitions):
        held = []  # a figure of every partition, or none
    step = None
    if capture.timings is not None:
        parts = [
            s.median_s
            for g in capture.timings.graphs
            for s in (g.compiled, g.compiled_backward)
            if s is not None
        ]
        step = sum(parts) if parts else None
    return Headline(
        compile_ids=len(compiles),
        graph_breaks=sum(len(c.graph_breaks) for c in compiles),
        restarts=sum(1 for c in compiles if c.restart_reasons),
        recompiles=sum(1 for c in compiles if c.recompile_reasons),
        graphs=sum(1 for c in compiles if c.graphs.get("dynamo_output_graph")),
        compile_s=compile_seconds(compiles),
        step_s=step,
        predicted_bytes=sum(p.activation_bytes for p in partitions) if partitions else None,
        held_bytes=sum(h.activation_bytes for h in held) if partitions and held else None,
    )


@dataclass(frozen=True, repr=False)
class FixTrial:
    """`fix` of `finding`, applied while the same code was captured again. `after` is None when
    the second capture failed; `error` then says why (the settings were restored either way)."""

    finding: Finding
    fix: Fix
    before: Capture
    after: Capture | None
    error: str = ""
    # `before` is a second capture of the code without the fix, made for the trial (try_fix's
    # baseline, the default): its compile time is not the first capture's, which also paid
    # torch's one-time start-up. False: `before` is the capture the finding came from.
    rerun_baseline: bool = True

    def rows(self) -> list[tuple[str, int | float | None, int | float | None]]:
        """(figure, before, after) for each headline figure."""
        a = headline(self.before).as_row()
        b = headline(self.after).as_row() if self.after is not None else {}
        return [(name, a[name], b.get(name)) for name in a]

    def changes(self) -> list[tuple[str, str, str, str]]:
        """(figure, before, after, change) in words: bytes and times in human units, and which
        way the figure moved ("up 18%", "down from 3 to 1", "same"); '-' where not measured."""
        out = []
        for name, a, b in self.rows():
            base = name.split(" (")[0]
            unit = "B" if name.endswith("(B)") else "s" if name.endswith("(s)") else ""
            out.append((base, _human(a, unit), _human(b, unit), _change(a, b)))
        return out

    def left(self) -> list[str]:
        """What the fix left: each cause of graph breaks still found after it, with where."""
        if self.after is None:
            return []
        return [
            f"{f.what} ({where_text(f)})" if where_text(f) else f.what
            for f in findings(self.after)
            if f.counts.breaks
        ]

    def baseline_text(self) -> str:
        """What "before" is, in words."""
        if self.rerun_baseline:
            return (
                "before: your code captured again without the fix, just before the trial, so "
                "compile times compare like with like (the first capture also paid torch's "
                "one-time start-up)"
            )
        return "before: the capture the finding came from"

    @property
    def step_speedup(self) -> StepSpeedup | None:
        """The user's real steps before and after the fix (a cell that ran a loop), with the
        verdict diff gives: a fix is a measured win only when this says "faster"."""
        if self.after is None:
            return None
        speedup = StepSpeedup.from_timings(self.before.timings, self.after.timings)
        if speedup is None:
            return None
        compile_s = (headline(self.before).compile_s, headline(self.after).compile_s)
        return speedup.with_compile_times(*compile_s)

    def summary(self) -> str:
        lines = [f"tried: {self.fix.title}"]
        lines += [f"  {line}" for line in self.fix.python().splitlines()]
        if self.after is None:
            lines.append(f"  the second capture failed: {self.error}")
            return "\n".join(lines)
        changes = self.changes()
        width = max(len(name) for name, *_ in changes)
        lines.append(f"  {'':<{width}}  {'before':>10}  {'after':>10}")
        for name, x, y, change in changes:
            lines.append(f"  {name:<{width}}  {x:>10}  {y:>10}  {change}")
        lines.append(f"  {self.baseline_text()}")
        left = self.left()
        lines.append(f"  left: {'; '.join(left)}" if left else "  left: no graph breaks")
        if self.step_speedup is not None:
            lines.append(f"  real steps: {self.step_speedup.text()}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:  # what a terminal and a notebook's text/plain show: the table
        return self.summary()


def _human(value: int | float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "B":
        return human_bytes(value)
    if unit == "s":
        return milliseconds(value) if value < 1 else f"{value:.1f} s"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _change(before: int | float | None, after: int | float | None) -> str:
    """ "up 18%", "down 75%", "same"; a count moves "down 3"; '' where one is missing."""
    if before is None or after is None:
        return ""
    if after == before:
        return "same"
    way = "up" if after > before else "down"
    if isinstance(before, int) and isinstance(after, int) and max(before, after) < 100:
        return f"{way} {abs(after - before)}"  # a count: "down 3"
    if before == 0:
        return way
    return f"{way} {abs(after - before) / before:.0%}"
