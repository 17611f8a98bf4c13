"""A capture session: listens to torch's structured trace while active, builds the Capture on the way out."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from ..model.capture import Capture
from ..model.compile_id import CompileId
from ..model.kernel import OutputCode
from ..model.measured.timing import RealSteps, Timings
from ..trace.builder import CaptureBuilder
from ..trace.events import event_from_record, event_name
from ..trace.notebook_cells import notebook_cell, typed_cell
from ..trace.output_code import split_output_code
from . import interrupts, torch_bridge, torch_support, torch_words
from .compiled_code.autotune_log import AutotuneRecords, hearing_autotune, with_autotune_records
from .compiled_code.cudagraphs import cudagraphs_on, with_cudagraphs
from .compiled_code.lazy_backward import lazy_backward_provenance, lazy_backward_provenance_starts
from .compiled_code.module_paths import with_module_paths
from .compiled_code.padding import reading_masks, with_padding
from .compiled_code.triton_ir import with_autotune_choices, with_triton_ir
from .distributed import rank_and_world_size
from .timing.measure import RecordedGraph, measure
from .trials.held_memory import HeldRecorder, with_held_memory
from .trials.partition_lab import JointRecorder, recording_partitions, with_partition_labs

_lock = threading.Lock()  # one capture at a time: torch's trace logger is process-wide


# What a capture of code compiled before the block can and cannot see, and how to see it all.
BEFORE_THE_BLOCK = (
    "nothing compiled inside the block: code compiled before it runs from torch.compile's "
    "cache, and its compile is not in this capture; call torch._dynamo.reset() first, or use "
    "capturing(reset=True), to capture it"
)


# What a capture that leaves torch's caches on (capturing()'s default) does not record for the
# compiles that missed the cache: each needs a setting or hook that is part of Inductor's cache
# key (capture_settings, session.active).
WARM_CAPTURE_NOTE = (
    "torch's caches were left on (as in your own run): the compiles that missed them were "
    "recorded without kernels' node and line maps, the AOT and post-grad graphs' module paths "
    "and the partition lab; `capturing(fresh=True)` records them, compiling cold"
)


class CaptureSession:
    """Collects trace records while active; `result` is the Capture once it has ended."""

    def __init__(
        self,
        cell_resolver: Callable[[str], int | None] | None = None,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
        timings: bool | int = False,
    ) -> None:
        self._records: list[tuple[dict[str, Any], str | None]] = []
        self._strings: dict[int, str] = {}
        self._cell_resolver = cell_resolver or notebook_cell
        self._on_event = on_event
        self.module_paths: dict[str, dict[str, str]] = {}  # compile id -> node -> module
        # compile id -> node -> module, for the joint graph's names (forward and backward)
        self.joint_paths: dict[str, dict[str, str]] = {}
        self.post_grad_paths: dict[str, list[dict[str, str]]] = {}  # one per post-grad graph
        self.cudagraphs: set[str] = set()  # compile ids Inductor compiled with CUDA graphs on
        self.padding: dict[str, dict[str, float]] = {}  # compile id -> mask input -> padded share
        self.recorded: dict[str, RecordedGraph] = {}  # compile id -> graph to time (if asked)
        # Time the compiled graphs after the code ran: True (time-boxed), an int (exactly that
        # many timed runs per measurement), or False.
        self.timings = timings
        self.joints = JointRecorder()  # the joint graphs, for re-partitioning later
        self.held = HeldRecorder()  # what each compiled forward saves (live/trials/held_memory.py)
        self._autotune = AutotuneRecords()  # what the autotuner benchmarked, while active
        self.result: Capture | None = None
        self._started = 0.0
        self._fresh = True  # torch's caches off for the capture (capture_settings)
        self._missing: list[str] = []  # features whose torch API is gone (torch_bridge.missing)

    def heard_module_paths(self, compile_id: str, paths: dict[str, str]) -> None:
        """The recording backend heard a Dynamo graph: its nodes' module paths."""
        self.module_paths[compile_id] = paths

    def keep_to_time(self, compile_id: str, graph: RecordedGraph) -> None:
        """The recording backend compiled a graph that the capture times after the code ran."""
        self.recorded[compile_id] = graph

    @property
    def heard(self) -> int:
        """How many trace records so far: a count that stops growing once compiling has."""
        return len(self._records)

    def output_code_so_far(self) -> dict[str, list[OutputCode]]:
        """Compile id -> the output modules Inductor has written so far (while still running)."""
        out: dict[str, list[OutputCode]] = {}
        for metadata, payload in list(self._records):
            if event_name(metadata) != "inductor_output_code":
                continue
            event = event_from_record(metadata, payload)
            if event is None:
                continue
            path = str(event.body.get("filename") or event.body.get("file_path") or "")
            cid = str(CompileId.from_metadata(event.metadata, event.rank))
            out.setdefault(cid, []).append(split_output_code(event.payload or "", path))
        return out

    def _sink(self, metadata: dict[str, Any], payload: str | None) -> None:
        self._records.append((metadata, payload))
        if event_name(metadata) == "inductor_output_code" and cudagraphs_on():
            # Heard inside Inductor's compile, where mode="reduce-overhead" patches its config
            # (a warm capture has no graph-pass hooks: the trace is what it always hears).
            compile_id = torch_bridge.current_compile_id()
            if compile_id is not None:
                self.cudagraphs.add(compile_id)
        if self._on_event is not None:
            try:
                self._on_event(event_name(metadata) or "", metadata)
            except Exception:  # progress display must never break torch's compile
                self._on_event = None

    def _hear_joint(self, graph: object) -> None:
        compile_id = torch_bridge.current_compile_id()
        if compile_id is not None:
            self.joint_paths[compile_id] = torch_bridge.graph_module_paths(graph)

    def _hear_post_grad(self, graph: object) -> None:
        lazy_backward_provenance_starts()
        compile_id = torch_bridge.current_compile_id()
        if compile_id is not None:
            paths = torch_bridge.graph_module_paths(graph)
            self.post_grad_paths.setdefault(compile_id, []).append(paths)

    @contextlib.contextmanager
    def active(
        self,
        extra_settings: dict[str, object] | None = None,
        steps: Callable[[], tuple[RealSteps | None, str]] | None = None,
        fresh: bool = True,
    ) -> Iterator[CaptureSession]:
        """Listen and hold capture settings inside; the Capture is built on the way out, with
        what `steps` gives back (the user's own steps, timed while the block ran, or why not:
        `RealStepTimer.outcome`), whichever of them ends first.

        If the code inside raises (KeyboardInterrupt too), the capture holds what compiled
        before, with `partial` naming the exception, and the exception propagates.
        """
        if not _lock.acquire(blocking=False):
            raise RuntimeError("a compilescope capture is already running; captures do not nest")
        partial = ""
        self._fresh = fresh
        self._started = time.time() - 1.0  # file times are coarse: a second's margin
        try:
            self._strings = torch_bridge.interned_strings()
            optional = torch_support.optional  # a feature whose torch API is gone: a note

            def keyed(
                feature: str, hook: Callable[[], contextlib.AbstractContextManager[object]]
            ) -> contextlib.AbstractContextManager[object]:
                return optional(feature, hook) if fresh else contextlib.nullcontext()

            with (
                # A Ctrl-C that Python dropped in a weakref callback mid-compile: raised again.
                interrupts.redelivered(),
                torch_support.noting_missing() as self._missing,
                # torch's warnings: for the view, not stderr. First: the settings of a fresh
                # capture make torch speak too (its vector-ISA check imports cpp_extension,
                # which warns "No CUDA runtime is found" on a CPU machine with a CUDA build).
                optional("torch's warnings by compile id", torch_words.listening) as said,
                torch_bridge.capture_settings(extra_settings, fresh=fresh),
                torch_bridge.listening(self._sink),
                # Inductor's pass and partitioner hooks go into its cache keys, and ours do not
                # pickle: with them, nothing would hit the user's cache ("Failed to pickle
                # cache key", torch/_inductor/codecache.py). A warm capture leaves them out.
                keyed(
                    "module paths of the AOT and post-grad graphs",
                    lambda: torch_bridge.graph_pass_listeners(
                        self._hear_joint, self._hear_post_grad
                    ),
                ),
                optional("node maps of lazily lowered backward kernels", lazy_backward_provenance),
                keyed("the partition lab", lambda: recording_partitions(self.joints)),
                optional("the autotuner's records", hearing_autotune) as autotune,
                optional("padding masks", lambda: reading_masks(self.padding)),
            ):
                self._autotune = autotune or AutotuneRecords()
                try:
                    yield self
                except BaseException as error:
                    partial = f"{type(error).__name__} raised before the code finished"
                    raise
                finally:
                    self.result = self._build(partial)
                    if self.timings and not partial:
                        # Timed after the user's code finished, on the graphs alone.
                        repeats = None if self.timings is True else int(self.timings)
                        timings = measure(self.recorded, self.result, repeats=repeats)
                        self.result = replace(self.result, timings=timings)
                    if steps is not None:
                        self.result = with_real_steps(self.result, *steps())
                    if said is not None and said.items:
                        self.result = replace(self.result, messages=said.messages())
                    self.recorded = {}
        finally:
            _lock.release()

    def _no_lab(self) -> str:
        """Why a compile has no partition lab, where the capture left the partitioner alone."""
        if self._fresh:
            return ""
        return (
            "torch's caches were left on (capturing()'s default), and hearing the partitioner "
            "would change their keys: capturing(fresh=True) keeps the joint graph"
        )

    @staticmethod
    def _compiled_cold(capture: Capture) -> bool:
        """Some compile missed (or bypassed) torch's caches: Inductor compiled it here."""
        return any(e.result != "hit" for c in capture for e in c.cache_events)

    def _build(self, partial: str) -> Capture:
        builder = CaptureBuilder(strings=self._strings, cell_resolver=self._cell_resolver)
        builder.torch_version = torch_bridge.torch_version()
        rank, world_size = rank_and_world_size()
        for metadata, payload in self._records:
            event = event_from_record(metadata, payload)
            if event is not None:
                # torch leaves the rank out of some records (suppress_context): the same
                # compile id must not come out twice, once with and once without it.
                event.rank = rank
                builder.add(event)
        self._records = []  # the capture holds what matters; drop the raw records
        capture = replace(
            builder.build(source="live"), partial=partial, caches="fresh" if self._fresh else "user"
        )
        if not capture.compiles and not partial:
            capture = replace(capture, note=BEFORE_THE_BLOCK)
        if rank is not None:  # torch puts the rank in each record; the world size it does not
            capture = replace(capture, ranks=(rank,), world_size=world_size)
        sources, cells = self._cell_sources(capture)
        # The builder knows the cells of the frames and breaks; these add the cells of kernels'
        # lines and of the callers of torch's frames.
        capture = replace(capture, sources=sources, cells={**capture.cells, **cells})
        # What only live objects add, each on its own: one whose torch API is gone (or that
        # fails) leaves the capture as it was, with a note saying what is missing.
        for feature, add in (
            ("Triton IR", lambda c: with_triton_ir(c, self._started)),
            ("the autotuner's choices", with_autotune_choices),
            ("the autotuner's records", lambda c: with_autotune_records(c, self._autotune)),
            ("the partition lab", lambda c: with_partition_labs(c, self.joints, self._no_lab())),
            ("memory held for backward", lambda c: with_held_memory(c, self.held)),
            ("CUDA graphs", lambda c: with_cudagraphs(c, self.cudagraphs)),
            ("padding", lambda c: with_padding(c, self.padding)),
            (
                "module paths",
                lambda c: with_module_paths(
                    c, self.module_paths, self.joint_paths, self.post_grad_paths
                ),
            ),
        ):
            try:
                capture = add(capture)
            except Exception as error:  # never the user's result: the rest of it stands
                torch_support.missing(feature, error)
        self.joints = JointRecorder()  # the labs own the records now; the session lets go
        warm = () if self._fresh or not self._compiled_cold(capture) else (WARM_CAPTURE_NOTE,)
        if self._missing or warm:
            notes = (capture.note, *self._missing, *warm)
            capture = replace(capture, note="; ".join(filter(None, notes)))
        return capture

    def _cell_sources(self, capture: Capture) -> tuple[dict[str, str], dict[str, int]]:
        """The code and number of the notebook cells the capture points at (frames, graph
        breaks, kernels' source lines: a model defined in one cell and run in another)."""
        import linecache

        files = (
            {c.frame.file for c in capture}
            | {b.location.file for c in capture for b in c.breaks_and_fallbacks if b.location}
            # a break inside a library: the user's own line is further up its stack
            | {loc.file for c in capture for b in c.breaks_and_fallbacks for loc in b.user_stack}
            | {loc.file for c in capture for k in c.kernels for loc in k.source_lines}
            # torch.compile(module) compiles a frame inside torch; the cell that called it counts
            | {caller.file for c in capture if c.frame.in_torch and (caller := c.frame.caller())}
        )
        sources, cells = {}, {}
        for file in sorted(f for f in files if f):
            number = self._cell_resolver(file)
            if number is not None:
                lines = linecache.getlines(file)
                if lines:
                    sources[file] = "".join(lines)
                    cells[file] = number
        # A `%%compile_fx` cell is two files of one number: the magic's (the cell as a function,
        # lines as typed) and IPython's one-liner that called the magic. Show one, as typed;
        # the one-liner keeps its number (a frame called from it is named by the cell).
        for file, number in cells.items():
            typed = typed_cell(number)
            if typed is None:
                continue
            twin = sum(n == number for n in cells.values()) > 1
            if twin and sources[file].startswith("get_ipython().run_cell_magic("):
                del sources[file]
            else:
                sources[file] = typed
        return sources, cells


def with_real_steps(capture: Capture, real: RealSteps | None, note: str = "") -> Capture:
    """The capture with its real-step timings (on the synthetic ones, where those were made),
    or with why none were taken."""
    if real is None and not note:
        return capture
    device = real.device if real is not None else torch_bridge.default_device()
    timings = capture.timings or Timings(device=device)
    return replace(capture, timings=replace(timings, real_steps=real, real_steps_note=note))
