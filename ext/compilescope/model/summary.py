"""A short text summary of a capture, for a terminal or `print(cap)`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..common import SUMMARY_STAGES, human_bytes
from .breaks import reason_line
from .compile import FALLBACK_STATUS, counted_elsewhere
from .measured.compile_payback import compile_time_line
from .measured.held_memory import held_text, input_names
from .measured.step_budget import step_budget
from .measured.timing import RealSteps

if TYPE_CHECKING:
    from .breaks import Fallback, GraphBreak
    from .compile import Compile
    from .measured.timing import Timings
    from .ranks.log import RankLog, Skipped


class Summarized(Protocol):
    """What the text summary reads of a capture: a `Capture`, which calls `summarize` on itself
    (`str(cap)`), so this module below it names only what it reads."""

    @property
    def compiles(self) -> tuple[Compile, ...]: ...
    @property
    def torch_version(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def partial(self) -> str: ...
    @property
    def note(self) -> str: ...
    @property
    def cells(self) -> dict[str, int]: ...
    @property
    def timings(self) -> Timings | None: ...
    @property
    def skipped(self) -> tuple[Skipped, ...]: ...
    @property
    def rank_logs(self) -> tuple[RankLog, ...]: ...


def _compile_line(c: Compile, cells: dict[str, int], restart: bool = False) -> str:
    where = c.frame.label(cells)
    parts = []
    for kind, label in ((s.kind, s.short) for s in SUMMARY_STAGES):
        graphs = c.graphs.get(kind)
        if graphs:
            parts.append(f"{label} {sum(g.op_count for g in graphs)}")
    stages = ", ".join(parts)
    bits = [f"{str(c.id):>8}  {where}".rstrip()]
    if stages:
        bits.append(f"ops: {stages}")
    if c.kernels:
        bits.append(f"{len(c.kernels)} kernels")
    partition = c.partition
    if partition is not None and partition.saved:
        # The partition's prediction, and what the compiled code held when measured (live).
        held = (
            f", held {human_bytes(c.held.activation_bytes)}" if c.held and c.held.measured else ""
        )
        bits.append(
            f"activations {partition.activation_text()}{held}"
            f" (saved {len(partition.saved)}, {human_bytes(partition.saved_bytes)})"
        )
    if restart:  # torch logs a restarted frame's time under its first attempt
        bits.append("time in the first attempt's")
    elif c.compile_time_s is not None:
        bits.append(f"{c.compile_time_s:.2f} s")
    if c.status != "ok":
        bits.append(c.status.upper())
    if c.incomplete:  # the log ends inside it: its counts are of what was read, not the compile
        bits.append(f"INCOMPLETE: {c.incomplete}")
    return "  ".join(bits[:1]) + ("  |  " + "  |  ".join(bits[1:]) if bits[1:] else "")


def _at(brk: GraphBreak | Fallback, cells: dict[str, int]) -> str:
    return f" at {brk.location.label(cells)}" if brk.location else ""


def _break_counts(capture: Summarized) -> str:
    """ ", 2 graph breaks, 1 fallback to eager": breaks as Dynamo counts them; fallbacks apart."""
    breaks = sum(len(c.graph_breaks) for c in capture.compiles)
    fallbacks = sum(len(c.fallbacks) for c in capture.compiles)
    out = f", {breaks} graph break{'s' * (breaks != 1)}" if breaks or fallbacks else ""
    return out + (f", {fallbacks} fallback{'s' * (fallbacks != 1)} to eager" if fallbacks else "")


def summarize(capture: Summarized) -> str:
    """A few lines per compile id: frame, ops per stage, kernels, saved bytes, time, breaks."""
    head = f"compilescope capture: {len(capture.compiles)} compile ids{_break_counts(capture)}"
    if capture.torch_version:
        head += f", torch {capture.torch_version}"
    if capture.source and capture.source != "live":
        head += f", from {capture.source}"
    lines = [head]
    if capture.partial:
        lines.append(f"PARTIAL: {capture.partial}; what compiled before is shown")
    if capture.note:
        lines.append(f"note: {capture.note}")
    if line := compile_time_line(capture):
        lines.append(line)
    for c in capture.compiles:
        lines.append(_compile_line(c, capture.cells, counted_elsewhere(c, capture.compiles)))
        for brk in c.graph_breaks:
            lines.append(f"{'':10}graph break{_at(brk, capture.cells)}: {reason_line(brk.reason)}")
        for fb in c.fallbacks:  # not a break: Dynamo left code to eager there (model/breaks.py)
            lines.append(f"{'':10}{fb.what}{_at(fb, capture.cells)}: {reason_line(fb.cause)}")
        split = c.ddp_split
        if split is not None:
            parts = ", ".join(
                f"{p.name} ({len(p.parameters)} parameters, "
                f"{human_bytes(p.parameter_bytes) if p.parameter_bytes is not None else '?'})"
                for p in split.parts
            )
            lines.append(
                f"{'':10}DDPOptimizer split the graph in {len(split.parts)} at DDP's "
                f"gradient-bucket boundaries: {parts}"
            )
        for reason in c.recompile_reasons:
            lines.append(f"{'':10}recompiled: {reason.splitlines()[0][:100]}")
        held, partition = c.held, c.partition
        if (
            held
            and held.measured
            and partition
            and held.activation_bytes != partition.activation_bytes
        ):
            names = input_names(c.graph("dynamo_output_graph"), c.graph("aot_forward_graph"))
            lines.append(f"{'':10}{held_text(partition, held, names)}")
        if c.failure and c.status != FALLBACK_STATUS:  # a fallback is said above, not a failure
            lines.append(f"{'':10}failed: {c.failure.splitlines()[0][:100]}")
    if capture.timings is not None:
        for g in capture.timings.graphs:
            if g.compiled is None:
                lines.append(f"{str(g.compile_id):>8}  time: not measured ({g.note})")
                continue
            if g.eager is None:  # the eager arm did not fit or failed: the compiled one stands
                lines.append(
                    f"{str(g.compile_id):>8}  time: compiled {g.compiled.median_s * 1e3:.3f} ms"
                    f" (median of {g.compiled.repeats}); {g.note}"
                )
                continue
            speed = f", {g.speedup:.2f}x" if g.speedup else ""
            lines.append(
                f"{str(g.compile_id):>8}  time: eager {g.eager.median_s * 1e3:.3f} ms, compiled "
                f"{g.compiled.median_s * 1e3:.3f} ms{speed} (median of {g.compiled.repeats})"
            )
            eager_step, compiled_step = g.step_s("eager"), g.step_s()  # not None: see above
            if (
                g.eager_backward
                and g.compiled_backward
                and eager_step is not None
                and compiled_step is not None
            ):
                speed = f", {g.backward_speedup:.2f}x" if g.backward_speedup else ""
                lines.append(
                    f"{'':10}backward: eager {g.eager_backward.median_s * 1e3:.3f} ms, compiled "
                    f"{g.compiled_backward.median_s * 1e3:.3f} ms{speed}; step (fwd + bwd): "
                    f"eager {eager_step * 1e3:.3f} ms, compiled {compiled_step * 1e3:.3f} ms"
                )
    real = capture.timings.real_steps if capture.timings is not None else None
    if real is not None:
        lines += real_steps_lines(real)
    elif capture.timings is not None and capture.timings.real_steps_note:
        lines.append(f"real steps: not timed ({capture.timings.real_steps_note})")
    if capture.skipped:
        total = sum(s.count for s in capture.skipped)
        reasons = "; ".join(f"{s.count} {s.reason}" for s in capture.skipped)
        lines.append(f"skipped {total} unreadable log entries: {reasons}")
    for log in capture.rank_logs:  # a rank's log cut short: say where, not only what was lost
        if log.ends_early:
            lines.append(
                f"rank {log.rank}'s log ends early ({log.ends_early}); it stops "
                f"{log.where_it_ends()}"
            )
    return "\n".join(lines)


def real_steps_lines(real: RealSteps) -> list[str]:
    """The user's own steps in words: wall per step compiled and eager, and the step budget."""
    ms = 1e3
    eager = (
        f", eager {real.eager.median_s * ms:.3f} ms ({real.speedup:.2f}x)"
        if real.eager is not None and real.speedup
        else ""
    )
    lines = [
        f"real steps ({real.device}, median of {real.compiled.repeats}): compiled "
        f"{real.compiled.median_s * ms:.3f} ms per step{eager}"
    ]
    budget = step_budget(real)
    if budget:
        busy = f"; device busy {real.busy_s * ms:.3f} ms" if real.busy_s is not None else ""
        wrapped = (
            f" (measured with kernels wrapped: {real.split_wall.median_s * ms:.3f} ms a step)"
            if real.split_wall is not None
            else ""
        )
        lines.append(f"{'':10}step budget{wrapped}{busy}:")
        for part in budget:
            lines.append(f"{'':12}{part.name}: {part.seconds * ms:.3f} ms ({part.share:.0%})")
    parts = []
    for gap in sorted(real.gaps, key=lambda g: -g.seconds)[:3]:
        parts.append(
            f"between graphs {gap.before} -> {gap.after} ({gap.role}) {gap.seconds * ms:.3f} ms"
        )
    if parts:
        lines.append(f"{'':10}of which: {'; '.join(parts)}")
    if real.note:
        lines.append(f"{'':10}{real.note}")
    return lines
