"""The user's own steps, timed as they run: a window of real steps once compiling has stopped.

A step runs from one `optimizer.step()` to the next (torch's global optimizer hook sees every
optimizer). Once `settle` steps in a row have run without a new trace record (nothing compiled,
nothing autotuned), the next `steps` steps are timed as they are (a stopwatch: CUDA events on a
GPU); the `steps` after them with every compiled kernel wrapped (a clock around each call on a
CPU), or `PROFILED_STEPS` of them on a GPU (profiler ranges, where the profiler also sees every
other kernel), for the split.
Then, if asked, one step and `eager_steps` more run with torch.compile's stance set to
"force_eager" (the same code, not compiled; the first is eager's warm-up, untimed), unless an
eager step may not fit in the device's memory (eager_memory_guard.py). Nothing here may break
the user's step: any error ends the window with a note.
"""

from __future__ import annotations

import contextlib
import enum
import statistics
import time
from collections.abc import Iterator
from typing import Any

import torch

from ...model.measured.timing import OptimizerSeen, RealSteps, Sample
from ..session import BEFORE_THE_BLOCK, CaptureSession
from ..torch_bridge import cuda_event, cuda_initialized
from .eager_memory_guard import cuda_memory_reading, eager_memory_verdict
from .kernel_timer import CallLog, wrapped_kernels
from .profiler_places import profile_with_stacks
from .profiler_times import detaching_cupti, start_profile
from .step_boundaries import hearing_steps
from .step_context import optimizer_seen, step_settings
from .step_split import by_graph, device_split, graph_gaps, kernel_figures, with_role

# Steps in the profiled split window on a GPU. The step that ends it pays for the profile (the
# profiler's stop with Python stacks, then the analysis): on an H200, 10 steps froze that step
# 22.8 s on a ResNet-50, 14.7 s on a GPT-2 124M, 12.6 s on a per-parameter AdamW loop; 3 steps
# 6.9, 5.2 and 5.2 s, with the budget within 1.3% of the stopwatch either way
# (benchmarks/RESULTS.md, "The step budget against a stopwatch"). A kernel's device time varies
# little from step to step: the clean window's 10 walls give the step, these give its parts.
PROFILED_STEPS = 3


class Phase(enum.Enum):
    """Where the timer is in the user's steps."""

    SETTLING = "settling"  # until `settle` steps in a row ran with nothing compiling
    WALL = "wall"  # timing the steps as they are (the stopwatch)
    SPLIT = "split"  # timing steps with every compiled kernel wrapped, for the split
    EAGER_WARM = "eager_warm"  # one step under "force_eager", untimed: eager's own warm-up
    EAGER = "eager"  # timing steps under "force_eager"
    DONE = "done"


# Where each phase may go next; any may go to DONE (the last window ended, an error, the block
# ended). Back to SETTLING: something compiled inside a window, which starts over.
NEXT = {
    Phase.SETTLING: {Phase.WALL},
    Phase.WALL: {Phase.SPLIT, Phase.SETTLING, Phase.EAGER_WARM},  # no kernels: no split
    Phase.SPLIT: {Phase.SETTLING, Phase.EAGER_WARM},
    Phase.EAGER_WARM: {Phase.EAGER},
    Phase.EAGER: set(),
    Phase.DONE: set(),
}


class RealStepTimer:
    """Follows the user's steps inside a capture and times one window of them."""

    def __init__(
        self,
        session: CaptureSession,
        steps: int = 10,
        eager_steps: int = 5,
        settle: int = 2,
        say_no_optimizer: bool = False,
    ) -> None:
        self.session = session
        # A loop under capturing(): if it ran no optimizer step at all, the capture says so. A
        # single call with no optimizer step (capture(), most cells) needs no word.
        self.say_no_optimizer = say_no_optimizer
        self._outcome: tuple[RealSteps | None, str] | None = None
        self.steps, self.eager_steps, self.settle = steps, eager_steps, settle
        self._split_steps = steps  # PROFILED_STEPS where the window is profiled (a GPU)
        self.state = Phase.SETTLING
        self.result: RealSteps | None = None
        self.notes: list[str] = []
        self._quiet = 0
        self._heard = -1
        self._gpu = False
        self._marks: list[Any] = []
        self._eager_marks: list[Any] = []
        self._wrapping: contextlib.ExitStack | None = None
        self._log_dicts: list[dict[tuple[str, str], CallLog]] = []
        self._timeline: list[tuple[str, float, float]] = []  # (label, began, ended) per call
        self._prof: Any = None
        self._cupti: Any = None
        self._stance: Any = None
        self._compiled: dict[str, Any] = {}
        self._step_context: dict[str, Any] = {}
        self._walls: list[float] = []
        self._boundaries = 0  # optimizer steps ended so far
        self._optimizers: dict[int, OptimizerSeen] = {}  # id -> each optimizer stepped eagerly
        self._opt_starts: list[tuple[int, Any]] = []  # (its step's index, mark) in the window
        self._first: dict[str, int] = {}  # window -> index of its first step (0-based)
        self._compiled_at = 0  # optimizer steps ended when the compiled windows were done
        # Several optimizers stepping in one training step (a GAN's two, a recommender's
        # sparse and dense ones) each end an optimizer step: the training step ends with the
        # optimizer that stepped first (the lead), and the others' ends are not boundaries
        # (counted as boundaries, the blind round's DLRM read half its step: 0.50x the
        # stopwatch). None: a compiled optimizer step, never announced, which always counts.
        self._lead: int | None = None
        self._stepping: int | None = None  # the eager optimizer whose step is running
        self._ends: dict[int, Any] = {}  # index in _opt_starts -> a non-lead step's own end

    def _go(self, phase: Phase) -> None:
        if phase is not Phase.DONE and phase not in NEXT[self.state]:
            raise RuntimeError(f"real-step timer: {self.state.value} -> {phase.value}")
        self.state = phase

    # --- the user's steps ----------------------------------------------------------------------
    def boundary(self) -> None:
        """One optimizer step has ended: a step boundary, if it is the lead optimizer's."""
        if self.state is Phase.DONE:
            return
        who, self._stepping = self._stepping, None
        if who is not None and self._lead is None:
            self._lead = who
        if who is not None and who != self._lead:
            if self.state is Phase.WALL and self._opt_starts:
                self._ends[len(self._opt_starts) - 1] = self._now()
            return
        try:
            self._advance()
        except Exception as error:  # the user's training goes on; the window says why it ended
            self.notes.append(f"real-step timing stopped: {type(error).__name__}: {error}")
            self._close_window()
            self._leave_eager()
            self._go(Phase.DONE)

    def starting(self, optimizer: object) -> None:
        """An optimizer step starts in eager code: who it is, and when (in the clean window)."""
        if self.state is Phase.DONE:
            return
        try:
            self._stepping = id(optimizer)
            if id(optimizer) not in self._optimizers:
                self._optimizers[id(optimizer)] = optimizer_seen(optimizer)
            if self.state is Phase.WALL:
                self._opt_starts.append((len(self._marks), self._now()))
        except Exception as error:  # never the user's step
            self.notes.append(f"optimizer timing stopped: {type(error).__name__}: {error}")

    def _optimizer_time(self) -> float | None:
        """Median wall time per step inside eager optimizer steps (start to the step's end)."""
        per_step: dict[int, float] = {}
        for n, (index, start) in enumerate(self._opt_starts):
            if 0 < index < len(self._marks):
                end = self._ends.get(n, self._marks[index])
                took = start.elapsed_time(end) / 1e3 if self._gpu else end - start
                per_step[index] = per_step.get(index, 0.0) + took
        if not per_step:
            return None
        # a step with no eager optimizer step spent nothing there
        values = [per_step.get(i, 0.0) for i in range(1, len(self._marks))]
        return statistics.median(values)

    def _advance(self) -> None:
        self._boundaries += 1
        heard = self.session.heard
        compiling = heard != self._heard
        self._heard = heard
        if self.state in (Phase.WALL, Phase.SPLIT) and compiling:
            # A recompile (or autotuning) inside the window: start over once it settles.
            self.notes.append("something compiled during the timed steps; timed later steps")
            self._opt_starts, self._ends = [], {}
            self._close_window()
            self._quiet = 0
            self._go(Phase.SETTLING)
            return
        if self.state is Phase.SETTLING:
            self._quiet = 0 if compiling else self._quiet + 1
            if self._quiet >= self.settle:
                self._gpu = torch.cuda.is_available() and cuda_initialized()
                self._marks, self._opt_starts, self._ends = [self._now()], [], {}
                self._first["compiled"] = self._boundaries  # the next step's index
                self._go(Phase.WALL)
        elif self.state is Phase.WALL:
            self._marks.append(self._now())
            if len(self._marks) > self.steps:
                self._walls = self._durations(self._marks)  # synchronizes: events are done
                self._step_context = {
                    "optimizer_s": self._optimizer_time(),
                    "settings": step_settings(self._gpu),
                }
                self._open_window()
        elif self.state is Phase.SPLIT:
            self._marks.append(self._now())
            if len(self._marks) == 2:  # sizes (bytes, FLOPs) from the first step's calls only
                for log in self._logs().values():
                    log.sizing = False
            if len(self._marks) > self._split_steps:
                self._finish_compiled()
        elif self.state is Phase.EAGER_WARM:  # the first eager step pays eager's own warm-up
            self._eager_marks = [self._now()]
            self._first["eager"] = self._boundaries
            self._go(Phase.EAGER)
        elif self.state is Phase.EAGER:
            self._eager_marks.append(self._now())
            if len(self._eager_marks) > self.eager_steps:
                self._leave_eager()
                self._finish_eager()
                self._go(Phase.DONE)

    def _split_length(self) -> int:
        """Steps of the split window: fewer where it is profiled (a GPU; see PROFILED_STEPS)."""
        gpu = self._gpu or (torch.cuda.is_available() and cuda_initialized())
        return min(self.steps, PROFILED_STEPS) if gpu else self.steps

    def _now(self) -> Any:
        if self._gpu:
            event = cuda_event()
            event.record()
            return event
        return time.perf_counter()

    def _durations(self, marks: list[Any]) -> list[float]:
        if self._gpu:
            torch.cuda.synchronize()
            return [a.elapsed_time(b) / 1e3 for a, b in zip(marks, marks[1:], strict=False)]
        return [b - a for a, b in zip(marks, marks[1:], strict=False)]

    # --- the compiled window -------------------------------------------------------------------
    def _open_window(self) -> None:
        codes = self.session.output_code_so_far()
        if not any(code.kernels for cs in codes.values() for code in cs) and not self._gpu:
            # Nothing to split by graph: the steps are still timed whole, and eagerly after.
            self.notes.append(
                "no kernel compiled inside the block: the steps are timed whole, not split"
                + ("" if codes or self.session.heard else f" ({BEFORE_THE_BLOCK})")
            )
            walls = self._walls
            self._compiled = {
                "compiled": Sample(statistics.median(walls), min(walls), max(walls), len(walls)),
                "first_step": self._first.get("compiled"),
                "step_walls": tuple(walls),
            }
            self._after_compiled()
            return
        # On a GPU the profiler splits a step with no compiled kernel too: what ran outside
        # the graphs (eager ops, copies, collectives) is the whole budget.
        stack = contextlib.ExitStack()
        self._log_dicts, self._timeline = [], []
        for cid, cs in codes.items():
            labelled = [with_role(code, cid) for code in cs]
            # Filled as kernels are called (an extern kernel's log on its first call): read
            # at the end of the window, not now.
            wrapping = wrapped_kernels(labelled, self._gpu, self._timeline)
            self._log_dicts.append(stack.enter_context(wrapping))
        self._wrapping = stack
        if self._gpu:
            # With Python stacks: they name the user's function of each eager op outside the
            # graphs (what they cost is in these steps' walls, not in the step's time).
            self._split_steps = self._split_length()
            self._prof = profile_with_stacks()
            self._cupti = detaching_cupti()
            self._cupti.__enter__()
            start_profile(self._prof)
        self._marks = [self._now()]
        self._go(Phase.SPLIT)

    def _detach_cupti(self) -> None:
        if self._cupti is not None:
            cupti, self._cupti = self._cupti, None
            cupti.__exit__(None, None, None)

    def _logs(self) -> dict[tuple[str, str, str], CallLog]:
        """(compile id, role, kernel) -> what its wrapper saw."""
        return by_graph(self._log_dicts)

    def _close_window(self) -> None:
        if self._prof is not None:
            with contextlib.suppress(Exception):
                self._prof.stop()
        self._detach_cupti()
        if self._wrapping is not None:
            self._wrapping.close()
            self._wrapping = None

    def _finish_compiled(self, then_eager: bool = True) -> None:
        # The wall time comes from the steps before, run without wrappers or profiler; the
        # split from these, where every kernel was wrapped.
        walls = self._walls
        split_walls = self._durations(self._marks)
        prof, self._prof = self._prof, None
        if prof is not None:
            prof.stop()
        self._detach_cupti()
        if self._wrapping is not None:
            self._wrapping.close()
            self._wrapping = None
        steps = len(split_walls)
        kernels, shares = kernel_figures(self._logs(), prof, steps)
        # The split adds up to the clean steps' wall time: kernel times are the kernels' own
        # (device time on a GPU, unchanged by our ranges); what the wrappers and the profiler
        # cost the CPU shows as split_wall - compiled, not as time between kernels.
        wall = statistics.median(walls)
        graphs_s = sum(g.seconds for g in shares)
        split = device_split(prof, wall, graphs_s, steps)
        if graphs_s > wall:  # medians of calls against a median step: noise, never negative
            self.notes.append(
                f"the kernels' medians add up to {graphs_s * 1e3:.3f} ms, more than the step's "
                f"{wall * 1e3:.3f} ms: a noisy machine"
            )
            split["between_s"] = 0.0
        self._compiled = {
            "compiled": Sample(statistics.median(walls), min(walls), max(walls), len(walls)),
            "split_wall": Sample(
                statistics.median(split_walls), min(split_walls), max(split_walls), steps
            ),
            "first_step": self._first.get("compiled"),
            "step_walls": tuple(walls),
            "graphs": tuple(shares),
            "kernels": tuple(kernels),
            "gaps": graph_gaps(self._timeline, steps),
            **split,
        }
        self._timeline = []
        self._after_compiled(then_eager)

    def _after_compiled(self, then_eager: bool = True) -> None:
        """The compiled steps are timed: publish them, then run the eager steps if they fit
        (and the code goes on: `then_eager`)."""
        self._compiled_at = self._boundaries  # optimizer steps it took, for a note if cut short
        reading = self._memory_reading() if self.eager_steps > 0 and then_eager else None
        too_big = eager_memory_verdict(*reading) if reading else None
        if too_big:
            self.notes.append(too_big)
        self._publish()
        if self.eager_steps > 0 and not too_big and then_eager:
            self._enter_eager()
        else:
            self._go(Phase.DONE)

    def _memory_reading(self) -> tuple[int, int, int] | None:
        """(allocated now, at a step boundary; the peak so far; free on the device and in the
        allocator's cache), on a GPU; None on a CPU, where nothing is guarded."""
        return cuda_memory_reading() if self._gpu else None

    # --- the eager window ----------------------------------------------------------------------
    def _enter_eager(self) -> None:
        try:
            self._stance = torch.compiler.set_stance("force_eager")
        except RuntimeError as error:  # e.g. the optimizer step itself is compiled
            self.notes.append(f"eager steps skipped: {error}")
            self._go(Phase.DONE)
            return
        self._go(Phase.EAGER_WARM)

    def _leave_eager(self) -> None:
        if self._stance is not None:
            stance, self._stance = self._stance, None
            stance.__exit__(None, None, None)  # back to the stance the user had

    def _finish_eager(self) -> None:
        walls = self._durations(self._eager_marks)
        self._compiled["eager"] = Sample(
            statistics.median(walls), min(walls), max(walls), len(walls)
        )
        self._compiled["eager_first_step"] = self._first.get("eager")
        self._compiled["eager_walls"] = tuple(walls)
        self._publish()

    def _publish(self) -> None:
        device = "cuda" if self._gpu else "cpu"
        self.result = RealSteps(
            device=device,
            note="; ".join(self.notes),
            optimizers=tuple(self._optimizers.values()),
            **self._step_context,
            **self._compiled,
        )

    @property
    def steps_seen(self) -> int:
        """Optimizer steps that ended while the code ran."""
        return self._boundaries

    # --- start and end -------------------------------------------------------------------------
    def outcome(self) -> tuple[RealSteps | None, str]:
        """The timed steps, or why none were timed ("" where nothing needs saying); the first
        call ends the windows (see `finish`), later ones return the same."""
        if self._outcome is None:
            real = self.finish()
            note = ""
            if real is None and (self.steps_seen or self.say_no_optimizer):
                note = "; ".join(self.notes)
            self._outcome = (real, note)
        return self._outcome

    def finish(self) -> RealSteps | None:
        """The block has ended: put back what is still changed; the result, if a window ran."""
        self._close_window()
        if self.state in (Phase.EAGER, Phase.EAGER_WARM):
            self._leave_eager()
            if self.state is Phase.EAGER and len(self._eager_marks) > 2:
                self._finish_eager()
            else:
                ran = max(len(self._eager_marks) - 1, 0) if self.state is Phase.EAGER else 0
                needed = self._compiled_at + 1 + self.eager_steps
                self.notes.append(
                    f"the code ended after {self._boundaries} optimizer steps, before the eager "
                    f"steps were timed: after the compiled ones they need 1 step to warm up and "
                    f"{self.eager_steps} timed, and {ran} ran; {needed} steps in all would do"
                )
        elif self.state is Phase.SPLIT and len(self._marks) > 2:
            # A short loop (a notebook's 20 steps): the stopwatch's steps are all timed, the
            # split from the steps there were; no eager steps to compare with.
            self.notes.append(
                f"the code ended after {self._boundaries} optimizer steps: the split is from "
                f"{len(self._marks) - 1} steps (of {self._split_steps}), and no eager steps were "
                f"timed ({self._boundaries + self._split_steps - len(self._marks) + 2 + self.eager_steps} steps "
                "in all would do)"
            )
            self._finish_compiled(then_eager=False)
        elif self.state is Phase.WALL and len(self._marks) > 3:
            # Fewer steps than the window: the ones there were, timed whole (not split).
            self._walls = self._durations(self._marks)
            self._step_context = {
                "optimizer_s": self._optimizer_time(),
                "settings": step_settings(self._gpu),
            }
            walls = self._walls
            self._compiled = {
                "compiled": Sample(statistics.median(walls), min(walls), max(walls), len(walls)),
                "first_step": self._first.get("compiled"),
                "step_walls": tuple(walls),
            }
            needed = (
                self._boundaries
                + (self.steps - len(walls))
                + self._split_length()
                + 1
                + self.eager_steps
            )
            self.notes.append(
                f"the code ended after {self._boundaries} optimizer steps: {len(walls)} steps "
                f"timed whole (of {self.steps}), not split, and no eager steps "
                f"({needed} steps in all would do)"
            )
            self._publish()
        elif self.state in (Phase.SETTLING, Phase.WALL, Phase.SPLIT) and self.result is None:
            self.notes.append(
                f"the code ended after {self._boundaries} optimizer step"
                f"{'' if self._boundaries == 1 else 's'}, before a window of "
                f"real steps ran: it needs {self.settle} steps in a row with nothing compiling, "
                f"then {self.steps} timed and {self._split_length()} more for the split"
                if self._heard >= 0
                else "no optimizer.step() ran: real steps are counted from one to the next"
            )
        if self.result is not None:
            self._publish()
        return self.result


@contextlib.contextmanager
def following_steps(timer: RealStepTimer | None) -> Iterator[None]:
    """Inside, the timer hears the user's steps (None: nothing is followed); on the way out
    its windows end (the stance and the profiler are put back at once), its outcome kept."""
    if timer is None:
        yield
        return
    try:
        # a compiled optimizer step calls it too, and compiles as without it (step_boundaries)
        with hearing_steps(timer.boundary, timer.starting):
            yield
    finally:
        timer.outcome()


__all__ = ["RealStepTimer", "following_steps"]
