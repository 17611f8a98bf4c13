"""Live capture: `capturing()` around any code, and `capture(fn, *args)` that compiles and runs."""

from __future__ import annotations

import contextlib
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import replace

from ..model.capture import Capture
from ..trace.builder import CaptureBuilder, ipython_cell
from ..trace.events import event_from_record
from . import torch_bridge

_lock = threading.Lock()  # one capture at a time: torch's trace logger is process-wide


class CaptureSession:
    """Collects trace records while active; `result` is the Capture once it has ended."""

    def __init__(self, cell_resolver: Callable[[str], int | None] | None = None) -> None:
        self._records: list[tuple[dict, str | None]] = []
        self._strings: dict[int, str] = {}
        self._cell_resolver = cell_resolver or _notebook_cell
        self.module_paths: dict[str, dict[str, str]] = {}  # compile id -> node -> module
        self.result: Capture | None = None

    def _sink(self, metadata: dict, payload: str | None) -> None:
        self._records.append((metadata, payload))

    @contextlib.contextmanager
    def active(self, inductor_options: dict | None = None) -> Iterator[CaptureSession]:
        if not _lock.acquire(blocking=False):
            raise RuntimeError("a compilescope capture is already running; captures do not nest")
        try:
            self._strings = torch_bridge.interned_strings()
            with (
                torch_bridge.capture_settings(inductor_options),
                torch_bridge.listening(self._sink),
            ):
                try:
                    yield self
                finally:
                    self.result = self._build()
        finally:
            _lock.release()

    def _build(self) -> Capture:
        builder = CaptureBuilder(strings=self._strings, cell_resolver=self._cell_resolver)
        builder.torch_version = torch_bridge.torch_version()
        for metadata, payload in self._records:
            event = event_from_record(metadata, payload)
            if event is not None:
                builder.add(event)
        self._records = []  # the capture holds what matters; drop the raw records
        capture = builder.build(source="live")
        return _with_module_paths(capture, self.module_paths)


class _RecordingBackend:
    """Wraps the real backend to keep what only live objects know (module paths of nodes)."""

    def __init__(self, inner: Callable, session: CaptureSession) -> None:
        self.inner = inner
        self.session = session

    def __call__(self, graph_module, example_inputs):
        compile_id = torch_bridge.current_compile_id()
        if compile_id is not None:
            self.session.module_paths[compile_id] = torch_bridge.module_paths(graph_module)
        return self.inner(graph_module, example_inputs)


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
    **kwargs: object,
) -> Capture:
    """Compile `fn`, run it on `args`, and (if `backward`) run backward of its summed output.

    Extra keyword arguments go to `fn`. Each call compiles afresh (Dynamo sees a new code object),
    so calling `capture` twice gives the same stages twice.
    """
    if not callable(fn):
        raise TypeError(f"capture() needs a function or module to compile, got {type(fn).__name__}")
    session = CaptureSession()
    if backend == "inductor":
        inner = torch_bridge.inductor_backend(mode, options, dynamic)
    else:
        if mode is not None or options:
            raise ValueError("mode= and options= apply only to backend='inductor'")
        inner = torch_bridge.lookup_backend(backend)
    entry, restore = _fresh_entry(fn)
    recording = _RecordingBackend(inner, session)
    try:
        with session.active():
            if entry is fn and not isinstance(fn, types.FunctionType):
                forward = _copy_function(type(fn).forward).__get__(fn)
                fn.forward = torch_bridge.compile_fn(
                    forward, recording, dynamic=dynamic, fullgraph=fullgraph
                )
                output = fn(*args, **kwargs)
            else:
                compiled = torch_bridge.compile_fn(
                    entry, recording, dynamic=dynamic, fullgraph=fullgraph
                )
                output = compiled(*args, **kwargs)
            if backward:
                loss = torch_bridge.sum_for_backward(output)
                if loss is not None:
                    loss.backward()
    finally:
        restore()
    return session.result


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


def _with_module_paths(capture: Capture, paths: dict[str, dict[str, str]]) -> Capture:
    if not paths:
        return capture
    compiles = []
    for c in capture.compiles:
        node_paths = paths.get(str(replace(c.id, rank=None)))
        graph = c.graph("dynamo_output_graph")
        if node_paths and graph is not None:
            nodes = [
                replace(n, module_path=node_paths.get(n.name) or n.module_path) for n in graph.nodes
            ]
            new = type(graph)(graph.kind, graph.text, nodes, metadata=graph.metadata)
            graphs = dict(c.graphs)
            graphs["dynamo_output_graph"] = (new, *c.graphs["dynamo_output_graph"][1:])
            c = replace(c, graphs=graphs)
        compiles.append(c)
    return replace(capture, compiles=tuple(compiles))
