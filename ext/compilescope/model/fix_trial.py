"""A fix tried: the capture before and after it, side by side, in the figures a fix should move."""

from __future__ import annotations

from dataclasses import dataclass

from .capture import Capture
from .finding import Finding, Fix
from .speedup import StepSpeedup


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
    times = [c.compile_time_s for c in compiles if c.compile_time_s is not None]
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
        compile_s=sum(times) if times else None,
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

    def rows(self) -> list[tuple[str, int | float | None, int | float | None]]:
        """(figure, before, after) for each headline figure."""
        a = headline(self.before).as_row()
        b = headline(self.after).as_row() if self.after is not None else {}
        return [(name, a[name], b.get(name)) for name in a]

    @property
    def step_speedup(self) -> StepSpeedup | None:
        """The user's real steps before and after the fix (a cell that ran a loop), with the
        verdict diff gives: a fix is a measured win only when this says "faster"."""
        if self.after is None:
            return None
        return StepSpeedup.from_timings(self.before.timings, self.after.timings)

    def summary(self) -> str:
        lines = [f"tried: {self.fix.title}"]
        lines += [f"  {line}" for line in self.fix.python().splitlines()]
        if self.after is None:
            lines.append(f"  the second capture failed: {self.error}")
            return "\n".join(lines)
        width = max(len(name) for name, _, _ in self.rows())
        lines.append(f"  {'':<{width}}  {'before':>10}  {'after':>10}")
        for name, x, y in self.rows():
            lines.append(f"  {name:<{width}}  {_text(x):>10}  {_text(y):>10}")
        if self.step_speedup is not None:
            lines.append(f"  real steps: {self.step_speedup.text()}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:  # what a terminal and a notebook's text/plain show: the table
        return self.summary()


def _text(value: int | float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if isinstance(value, float) else str(value)
