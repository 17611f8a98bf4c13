"""One compilation (one compile id): frame, Dynamo result, AOTAutograd graphs, Inductor output."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..common import KIND_ALIASES, OWN_HOOK_REASON
from .breaks import Fallback, break_message, fallback_scope
from .breaks import GraphBreak as GraphBreak  # defined here before breaks.py: still importable
from .compile_id import CompileId
from .findings.parts import is_library
from .graph import Graph
from .kernel import Kernel, OutputCode
from .partition import (
    SWEEP_BUDGETS,
    BudgetSweep,
    Partition,
    PartitionLab,
    Repartition,
    RepartitionUnavailable,
    check_repartition_args,
    partition_between,
    sweep_from,
)
from .place import Place

if TYPE_CHECKING:
    # Imported where used: a log holds no held memory (live captures measure it), and a
    # DDP split is asked for by the rank report; `compilescope report LOG` (a fresh process
    # each time, issue 34) imports neither. serialize resolves `HeldMemory` for its hints.
    from .ddp import DdpSplit
    from .measured.held_memory import HeldMemory


@dataclass(frozen=True)
class Frame:
    """The Python frame Dynamo compiled: its first line, and the user's stack that led there.
    (A notebook cell's number is the capture's, by file: `Capture.cells`.)"""

    function: str = ""
    file: str = ""
    line: int = 0
    stack: tuple[Place, ...] = ()  # the user's stack that triggered the compile

    @property
    def place(self) -> Place:
        """The frame's first line (a cell's lines count from 1, as a file's)."""
        return Place(self.file, self.line, self.function)

    @property
    def in_torch(self) -> bool:
        """A frame of torch's own code: `torch.compile(module)` compiles a wrapper in
        torch/_dynamo/external_utils.py (`inner`), not the module's forward."""
        path = self.file.replace("\\", "/")
        return "/torch/_dynamo/" in path or any(
            f"{d}/torch/" in path for d in ("site-packages", "dist-packages")
        )

    def caller(self) -> Place | None:
        """The innermost line of the stack outside installed packages, the standard library and
        compilescope (whose `capture()` and magic make the call for the user, in IPython's
        run_cell): where the user's code made the call."""
        for loc in reversed(self.stack):
            if loc.file and not is_library(loc.file):
                return loc
        return None

    def label(self, cells: Mapping[str, int] | None = None) -> str:
        """How to name this frame to a person: its function and line, or the notebook cell's
        line it is (`cells`: the capture's cell numbers by file), or, for a frame inside torch
        or another installed library, the user's line that led into it ("wrapped_func
        (utils/deprecation.py:121) called at cell [2] line 3")."""
        own = f"{self.function} ({self.place.label(cells)})"
        if self.place.cell_in(cells) is not None:
            return own
        if not self.function:
            return ""
        if not (self.in_torch or is_library(self.file)):
            return own
        caller = self.caller()
        if caller is None:
            return own
        where = caller.label(cells)
        if self.in_torch:
            what = "compiled module" if self.function == "inner" else f"torch's {self.function}"
            return f"{what} called at {where}"
        return f"{own} called at {where}"


OWN_HOOK_STATUS = "eager at compilescope's hook"
FALLBACK_STATUS = "eager (fallback)"


@dataclass(frozen=True)
class Symbol:
    """A symbolic size created by the shape environment."""

    name: str
    source: str = ""
    value: str = ""
    range: str = ""
    location: Place | None = None


@dataclass(frozen=True)
class ShapeGuard:
    """A guard on symbolic sizes, as the sympy expression torch printed."""

    expr: str
    location: Place | None = None


@dataclass(frozen=True)
class StageTime:
    """A timed stage of the compile (torch's `dynamo_timed` events), in microseconds."""

    name: str
    start_us: float
    duration_us: float
    depth: int = 0


@dataclass(frozen=True)
class CacheEvent:
    """A cache lookup torch logged, e.g. ("fx_graph_cache", "miss")."""

    cache: str
    result: str


@dataclass(frozen=True)
class Compile:
    """Everything torch logged under one compile id."""

    id: CompileId
    frame: Frame = field(default_factory=Frame)
    graphs: dict[str, tuple[Graph, ...]] = field(default_factory=dict)
    output_code: tuple[OutputCode, ...] = ()
    graph_breaks: tuple[GraphBreak, ...] = ()  # the breaks Dynamo's counter counts
    fallbacks: tuple[Fallback, ...] = ()  # where Dynamo left code to eager instead (breaks.py)
    guards: str = ""  # Dynamo's guard tree text (dynamo_cpp_guards_str)
    recompile_reasons: tuple[str, ...] = ()
    restart_reasons: tuple[str, ...] = ()
    failure: str | None = None
    symbols: tuple[Symbol, ...] = ()
    shape_guards: tuple[ShapeGuard, ...] = ()
    stage_times: tuple[StageTime, ...] = ()
    cache_events: tuple[CacheEvent, ...] = ()
    # compilation_metrics, as torch logged them
    metrics: dict[str, Any] = field(default_factory=dict)
    backward_metrics: dict[str, Any] = field(default_factory=dict)  # bwd_compilation_metrics
    artifacts: tuple[str, ...] = ()  # every event name logged under this id, in order
    repros: tuple[str, ...] = ()  # torch's fx_graph_runnable scripts, one per compiled graph
    # Why its record is incomplete ("" when whole): the log ends inside it, before the
    # compilation_metrics torch closes every compile with; its counts are of what was read.
    incomplete: str = ""

    def __post_init__(self) -> None:
        # A capture saved before fallbacks had their own field holds them among the breaks.
        if any(fallback_scope(b.reason) for b in self.graph_breaks):
            records = [break_message(b.reason, b.location, b.user_stack, b.text)
                       for b in self.graph_breaks]  # fmt: skip
            breaks = tuple(r for r in records if isinstance(r, GraphBreak))
            fallbacks = tuple(r for r in records if isinstance(r, Fallback))
            object.__setattr__(self, "graph_breaks", breaks)
            object.__setattr__(self, "fallbacks", self.fallbacks + fallbacks)

    def graph(self, kind: str) -> Graph | None:
        """The (first) graph of a kind, by torch's event name; None when not logged."""
        found = self.graphs.get(kind) or self.graphs.get(KIND_ALIASES.get(kind, ""))
        return found[0] if found else None

    @property
    def breaks_and_fallbacks(self) -> tuple[GraphBreak | Fallback, ...]:
        """Every graph-break message Dynamo logged (its `dynamo_graph_break_reason` events)."""
        return (*self.graph_breaks, *self.fallbacks)

    @property
    def kernels(self) -> tuple[Kernel, ...]:
        return tuple(k for code in self.output_code for k in code.kernels)

    # What a live capture keeps to run the partitioners again (None for logs and JSON), and
    # the re-partitions made so far: a saved capture keeps those results, not the graph.
    lab: PartitionLab | None = field(
        default=None, compare=False, repr=False, metadata={"json": False}
    )
    repartitions: tuple[Repartition, ...] = field(
        default=(), compare=False, metadata={"json_from": "repartition_results"}
    )
    lab_note: str = ""  # why this compile cannot be re-partitioned, when it cannot
    # The partitioner this compile ran and its activation memory budget, when known (live).
    partitioner: str = ""
    memory_budget: float | None = None
    # What the compiled forward really saved for backward over one run (live captures): the
    # partition's prediction misses copies Inductor makes after it (model/measured/held_memory.py).
    held: HeldMemory | None = None

    @cached_property
    def partition(self) -> Partition | None:
        """What the forward saves for the backward (the backward's non-tangent inputs), what is
        real activation memory among it, and what the backward recomputes. Worked out once per
        Compile (its fields do not change): a report asks for it a few times per compile."""
        backward = self.graph("aot_backward_graph")
        if backward is None:
            return None
        return partition_between(
            self.graph("aot_forward_graph"),
            backward,
            partitioner=self.partitioner,
            memory_budget=self.memory_budget,
        )

    @property
    def repartition_results(self) -> tuple[Repartition, ...]:
        """Re-partitions made so far: those read from JSON, then those the live lab made."""
        made = self.lab.results if self.lab is not None else ()
        seen = {(r.partitioner, r.memory_budget) for r in made}
        return tuple(
            r for r in self.repartitions if (r.partitioner, r.memory_budget) not in seen
        ) + tuple(made)

    def repartition(
        self, partitioner: str = "min_cut", memory_budget: float | None = None
    ) -> Partition:
        """Run AOTAutograd's partitioner again on this compile's captured joint graph.

        `partitioner` is "min_cut" (Inductor's, rematerializing) or "default"; `memory_budget`
        in [0, 1] is torch._functorch.config.activation_memory_budget for min_cut (None: no
        budget, torch's default). No user code runs. Results already made (also those kept in
        a saved capture) come back without running anything.
        """
        budget = check_repartition_args(partitioner, memory_budget)
        for made in self.repartition_results:
            if (made.partitioner, made.memory_budget) == (partitioner, budget):
                return made.partition
        if self.lab is None:
            raise RepartitionUnavailable(
                f"compile {self.id} cannot be re-partitioned: {self.lab_reason}"
            )
        return self.lab.repartition(partitioner, budget)

    @property
    def lab_reason(self) -> str:
        """Why this compile cannot be re-partitioned ("" when it can)."""
        if self.lab is not None:
            return ""
        return self.lab_note or (
            "its joint graph was not kept (only live captures keep it; "
            "a log or a saved capture holds the results already made)"
        )

    def budget_sweep(self, budgets: tuple[float | None, ...] = SWEEP_BUDGETS) -> BudgetSweep | None:
        """Re-partition with min-cut at each activation memory budget, and with the default
        partitioner: activation memory against what the backward recomputes. None when
        `budgets` (with any re-partitions made before) holds fewer than two budgets."""
        for budget in budgets:
            self.repartition("min_cut", budget)
        self.repartition("default")
        return self.sweep()

    def sweep(self) -> BudgetSweep | None:
        """The budget sweep as far as it was made (also from a saved capture); None if not."""
        return sweep_from(self.repartition_results, self.partition)

    @property
    def status(self) -> str:
        """ok, failed, restarted (Dynamo restarted analysis), empty (nothing compiled),
        "eager (fallback)": Dynamo skipped the frame at a graph break it could not handle and
        runs it eagerly, or "eager at compilescope's hook": Dynamo left the frame to eager at
        one of compilescope's own optimizer-step hooks (the rest of torch's step wrapper,
        which compiles nothing)."""
        if self.failure:
            if OWN_HOOK_REASON in self.failure:
                return OWN_HOOK_STATUS
            return FALLBACK_STATUS if any(f.scope == "frame" for f in self.fallbacks) else "failed"
        if (self.restart_reasons or self.graph_breaks or self.fallbacks) and not self.graphs:
            return "restarted"  # Dynamo hit a break, and compiles again as attempt _1
        if not self.graphs and not self.output_code:
            return "empty"
        return "ok"

    @property
    def ddp_split(self) -> DdpSplit | None:
        """How Dynamo's DDPOptimizer split this compile's graph (a DdpSplit), or None."""
        from .ddp import ddp_split  # see the imports at the top

        return ddp_split(str(self.id), self.graphs)

    @property
    def compile_time_s(self) -> float | None:
        """Its compile time: torch's top-level stages (the frame's compile and its lazily
        compiled backward), else the metrics' frame time (model/measured/compile_budget.py). A restart
        (`0/0_1`) repeats its first attempt's: sum a capture's with `compile_seconds`."""
        return compile_time(self)


def compile_time(c: Compile) -> float | None:
    """The one definition of a compile id's compile time: torch's top-level stages (the frame's
    compile and, at its first run, the lazily compiled backward, where max-autotune's
    benchmarking mostly is), else the compilation metrics' frame time; None where neither was
    logged."""
    top = [s.duration_us for s in c.stage_times if s.depth == 0]
    if top:
        return sum(top) / 1e6
    value = c.metrics.get("entire_frame_compile_time_s")
    return float(value) if isinstance(value, (int, float)) else None


def counted_elsewhere(c: Compile, compiles: Iterable[Compile]) -> bool:
    """A restart whose time torch logged under its first attempt: its stages under `0/0`, its
    metrics under `0/0_1`. Counted once, under the first."""
    if c.stage_times or not c.id.attempt:
        return False
    first = replace(c.id, attempt=0)
    return any(o.id == first and any(s.depth == 0 for s in o.stage_times) for o in compiles)


def compile_seconds(compiles: Iterable[Compile]) -> float | None:
    """These compiles' compile time, each counted once (None where none was logged)."""
    compiles = list(compiles)
    times = [compile_time(c) for c in compiles if not counted_elsewhere(c, compiles)]
    known = [t for t in times if t is not None]
    return sum(known) if known else None
