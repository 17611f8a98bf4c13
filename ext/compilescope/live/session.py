"""Live capture: `capturing()` around any code, and `capture(fn, *args)` that compiles and runs."""

from __future__ import annotations

import contextlib
import threading
import time
import types
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from ..model.capture import Capture
from ..trace.builder import CaptureBuilder, ipython_cell
from ..trace.events import event_from_record, event_name
from . import torch_bridge, torch_partitioners, torch_words
from .distributed import rank_and_world_size
from .measure import RecordedGraph, measure
from .module_paths import with_module_paths
from .partition_lab import JointRecorder, recording_partitions, with_partition_labs
from .timing_inputs import input_layout, input_moments, input_values
from .triton_ir import with_autotune_choices, with_triton_ir

_lock = threading.Lock()  # one capture at a time: torch's trace logger is process-wide


class CaptureSession:
    """Collects trace records while active; `result` is the Capture once it has ended."""

    def __init__(
        self,
        cell_resolver: Callable[[str], int | None] | None = None,
        on_event: Callable[[str, dict], None] | None = None,
    ) -> None:
        self._records: list[tuple[dict, str | None]] = []
        self._strings: dict[int, str] = {}
        self._cell_resolver = cell_resolver or _notebook_cell
        self._on_event = on_event
        self.module_paths: dict[str, dict[str, str]] = {}  # compile id -> node -> module
        # compile id -> node -> module, for the joint graph's names (forward and backward)
        self.joint_paths: dict[str, dict[str, str]] = {}
        self.post_grad_paths: dict[str, list[dict[str, str]]] = {}  # one per post-grad graph
        self.recorded: dict[str, RecordedGraph] = {}  # compile id -> graph to time (if asked)
        # Time the compiled graphs after the code ran: True (time-boxed), an int (exactly that
        # many timed runs per measurement), or False.
        self.timings: bool | int = False
        self.joints = JointRecorder()  # the joint graphs, for re-partitioning later
        self.result: Capture | None = None
        self._started = 0.0

    def _sink(self, metadata: dict, payload: str | None) -> None:
        self._records.append((metadata, payload))
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
        compile_id = torch_bridge.current_compile_id()
        if compile_id is not None:
            paths = torch_bridge.graph_module_paths(graph)
            self.post_grad_paths.setdefault(compile_id, []).append(paths)

    @contextlib.contextmanager
    def active(self, extra_settings: dict | None = None) -> Iterator[CaptureSession]:
        """Listen and hold capture settings inside; the Capture is built on the way out.

        If the code inside raises (KeyboardInterrupt too), the capture holds what compiled
        before, with `partial` naming the exception, and the exception propagates.
        """
        if not _lock.acquire(blocking=False):
            raise RuntimeError("a compilescope capture is already running; captures do not nest")
        partial = ""
        self._started = time.time() - 1.0  # file times are coarse: a second's margin
        try:
            self._strings = torch_bridge.interned_strings()
            with (
                torch_bridge.capture_settings(extra_settings),
                torch_bridge.listening(self._sink),
                torch_bridge.graph_pass_listeners(self._hear_joint, self._hear_post_grad),
                recording_partitions(self.joints),
                torch_words.listening() as said,  # torch's warnings: for the view, not stderr
            ):
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
                    if said.items:
                        self.result = replace(self.result, messages=said.messages())
                    self.recorded = {}
        finally:
            _lock.release()

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
        capture = replace(builder.build(source="live"), partial=partial)
        if rank is not None:  # torch puts the rank in each record; the world size it does not
            capture = replace(capture, ranks=(rank,), world_size=world_size)
        sources, cells = self._cell_sources(capture)
        capture = replace(capture, sources=sources, cells=cells)
        capture = with_autotune_choices(with_triton_ir(capture, self._started))
        capture = with_partition_labs(capture, self.joints)
        self.joints = JointRecorder()  # the labs own the records now; the session lets go
        return with_module_paths(capture, self.module_paths, self.joint_paths, self.post_grad_paths)

    def _cell_sources(self, capture: Capture) -> tuple[dict[str, str], dict[str, int]]:
        """The code and number of the notebook cells the capture points at (frames, graph
        breaks, kernels' source lines: a model defined in one cell and run in another)."""
        import linecache

        files = (
            {c.frame.file for c in capture}
            | {b.location.file for c in capture for b in c.graph_breaks if b.location}
            | {loc.file for c in capture for k in c.kernels for loc in k.source_lines}
            # torch.compile(module) compiles a frame inside torch; the cell that called it counts
            | {c.frame.caller().file for c in capture if c.frame.in_torch and c.frame.caller()}
        )
        sources, cells = {}, {}
        for file in sorted(f for f in files if f):
            number = self._cell_resolver(file)
            if number is not None:
                lines = linecache.getlines(file)
                if lines:
                    sources[file] = "".join(lines)
                    cells[file] = number
        return sources, cells


@dataclass(frozen=True)
class CompileOptions:
    """How to compile: torch.compile's arguments plus the partitioner and compiled autograd."""

    backend: str | Callable = "inductor"
    mode: str | None = None
    options: dict | None = None  # Inductor config, as torch.compile(options=...)
    dynamic: bool | None = None
    fullgraph: bool = False
    partitioner: str | None = None  # "min_cut" or "default"; None keeps the backend's own
    compiled_autograd: bool = False
    # Time each graph (forward and backward, eager vs compiled) and its kernels after the run.
    timings: bool | int = True

    def backend_fn(self) -> Callable:
        if self.partitioner not in (None, "min_cut", "default"):
            raise ValueError(
                f"partitioner must be 'min_cut' or 'default', not {self.partitioner!r}"
            )
        if self.backend == "inductor":
            return torch_bridge.inductor_backend(self.mode, self.options, self.dynamic)
        if self.mode is not None or self.options:
            raise ValueError("mode= and options= apply only to backend='inductor'")
        if self.backend == "aot_eager":
            # torch's aot_eager, built with a partitioner the partition lab can hear
            return torch_partitioners.aot_eager_backend(self.partitioner or "min_cut")
        if self.partitioner and self.backend != "inductor":
            raise ValueError(
                f"partitioner= applies to 'inductor' and 'aot_eager', not {self.backend!r}"
            )
        return torch_bridge.lookup_backend(self.backend)

    def settings(self) -> dict:
        """Inductor settings to hold while compiling (the partitioner's, for inductor)."""
        settings = {}
        if self.backend == "inductor" and self.partitioner == "default":
            settings["custom_partitioner_fn"] = torch_partitioners.default_partitioner()
        # Timings need no Inductor setting: kernels are timed by wrapping the output module's
        # calls. (cpp.enable_kernel_profile slowed every C++ kernel's build, benchmark_kernel
        # made Inductor print "Compiled module path" at each compile.)
        return settings

    def compile(self, fn: Callable, session: CaptureSession) -> Callable:
        backend = _RecordingBackend(self.backend_fn(), session)
        return torch_bridge.compile_fn(fn, backend, dynamic=self.dynamic, fullgraph=self.fullgraph)

    def running(self, session: CaptureSession | None = None) -> contextlib.AbstractContextManager:
        """Around running the compiled code: compiled autograd, when asked for (its graphs
        recorded by the session too, so that they are timed like the others)."""
        if self.compiled_autograd:
            backend = self.backend_fn() if self.backend == "inductor" else self.backend
            if session is not None:
                backend = _RecordingBackend(torch_bridge.lookup_backend(backend), session)
            return torch_bridge.compiled_autograd(backend)
        return contextlib.nullcontext()


class _RecordingBackend:
    """Wraps the real backend to keep what only live objects know (module paths of nodes).

    torch keeps every backend it has seen (torch._dynamo.eval_frame.cached_backends), so this
    holds its session weakly: a finished capture must not live as long as the process.
    """

    def __init__(self, inner: Callable, session: CaptureSession) -> None:
        self.inner = inner
        self._session = weakref.ref(session)

    def __call__(self, graph_module, example_inputs):
        compile_id = torch_bridge.current_compile_id()
        session = self._session()
        if compile_id is not None and session is not None:
            session.module_paths[compile_id] = torch_bridge.module_paths(graph_module)
        compiled = self.inner(graph_module, example_inputs)
        if compile_id is not None and session is not None and session.timings:
            session.recorded[compile_id] = RecordedGraph(
                graph_module,
                compiled,
                input_layout(example_inputs),
                torch_bridge.grad_enabled(),
                input_values(example_inputs),
                input_moments(example_inputs),
            )
        return compiled


@contextlib.contextmanager
def capturing(**inductor_options: object) -> Iterator[CaptureHandle]:
    """Capture every torch.compile compilation inside the block.

    >>> with capturing() as cap:
    ...     torch.compile(f)(x)
    >>> print(cap.capture)      # or use `cap` like a Capture once the block ended
    """
    session = CaptureSession()
    handle = CaptureHandle(session)
    with session.active(inductor_options or None):
        yield handle


class CaptureHandle:
    """What `capturing()` yields: behaves as the Capture once the block has ended."""

    def __init__(self, session: CaptureSession) -> None:
        self._session = session

    @property
    def capture(self) -> Capture:
        if self._session.result is None:
            raise RuntimeError("the capture is still running; read it after the `with` block")
        return self._session.result

    def __getattr__(self, name: str):
        return getattr(self.capture, name)

    def __getitem__(self, key):
        return self.capture[key]

    def __iter__(self):
        return iter(self.capture)

    def __len__(self) -> int:
        return len(self.capture)

    def __repr__(self) -> str:
        return repr(self.capture) if self._session.result else "<capture running>"

    def __str__(self) -> str:
        return str(self.capture) if self._session.result else "<capture running>"


def capture(
    fn: Callable,
    *args: object,
    backward: bool = True,
    backend: str | Callable = "inductor",
    mode: str | None = None,
    options: dict | None = None,
    dynamic: bool | None = None,
    fullgraph: bool = False,
    partitioner: str | None = None,
    compiled_autograd: bool = False,
    timings: bool | int = True,
    **kwargs: object,
) -> Capture:
    """Compile `fn`, run it on `args`, and (if `backward`) run backward of its summed output.

    Extra keyword arguments go to `fn`. Each call compiles afresh (Dynamo sees a new code object),
    so calling `capture` twice gives the same stages twice. Unless `timings=False`, each compiled
    graph is then timed alone (forward and backward, eager vs compiled, and each kernel) on
    fresh inputs of the same shapes, within a small time budget (`timings=N`: exactly N timed
    runs each instead); the user's code itself runs once.
    """
    if not callable(fn):
        raise TypeError(f"capture() needs a function or module to compile, got {type(fn).__name__}")
    how = CompileOptions(
        backend, mode, options, dynamic, fullgraph, partitioner, compiled_autograd, timings
    )
    how.backend_fn()  # bad option combinations fail here, before anything runs
    session = CaptureSession()
    session.timings = timings
    with session.active(how.settings()), how.running(session):
        output = call_compiled(how, session, fn, args, kwargs)
        if backward:
            loss = torch_bridge.sum_for_backward(output)
            if loss is not None:
                loss.backward()
    return session.result


def call_compiled(
    how: CompileOptions,
    session: CaptureSession,
    fn: Callable,
    args: tuple,
    kwargs: dict | None = None,
) -> object:
    """Compile a fresh copy of `fn` (for a module: its forward, as torch.compile(module) does,
    so hooks still run around it) and call it once; the module is left as it was."""
    entry, restore = _fresh_entry(fn)
    try:
        if entry is fn and not isinstance(fn, types.FunctionType):
            fn.forward = how.compile(_copy_function(type(fn).forward).__get__(fn), session)
            return fn(*args, **(kwargs or {}))
        return how.compile(entry, session)(*args, **(kwargs or {}))
    finally:
        restore()


def _fresh_entry(fn: Callable) -> tuple[Callable, Callable[[], None]]:
    """A copy of `fn` with its own code object, so Dynamo's cache of earlier runs does not hit.

    Returns the callable to compile and a function that undoes any change made to `fn`.
    """
    if isinstance(fn, types.FunctionType):
        return _copy_function(fn), lambda: None
    forward = getattr(type(fn), "forward", None)
    if torch_bridge.is_module(fn) and isinstance(forward, types.FunctionType):
        # Like torch.compile(module): compile `forward`, and let `module(...)` run its hooks
        # eagerly around it, by shadowing forward on the instance for this one call.
        had_own = "forward" in vars(fn)
        previous = vars(fn).get("forward")

        def restore() -> None:
            if had_own:
                fn.forward = previous
            else:
                vars(fn).pop("forward", None)

        return fn, restore  # the caller installs the compiled forward
    raise TypeError(
        f"capture() compiles functions and nn.Modules; got {type(fn).__name__}. "
        "Wrap it: capture(lambda *a: obj(*a), ...)"
    )


def _copy_function(fn: types.FunctionType) -> types.FunctionType:
    copy = types.FunctionType(
        fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    return copy


def _notebook_cell(filename: str) -> int | None:
    """The notebook cell a file name belongs to: IPython's own map, else its naming pattern."""
    import sys

    if "IPython" not in sys.modules:  # not in IPython; importing it would cost 50 ms for nothing
        return ipython_cell(filename)
    try:
        from IPython import get_ipython
    except ImportError:
        return ipython_cell(filename)
    shell = get_ipython()
    # IPython >= 8 maps the file names of compiled cells to execution counts here.
    mapping = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if isinstance(mapping, dict) and filename in mapping:
        return int(mapping[filename])
    return ipython_cell(filename)
