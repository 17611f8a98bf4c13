"""The one capture path: `capture()`, `capturing()` and `%%compile_fx` all listen, run and time here."""

from __future__ import annotations

import contextlib
import inspect
import types
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar, cast

from ..model.capture import Capture
from ..model.compile import Compile
from ..model.compile_id import CompileId
from . import torch_bridge, torch_support
from .fresh_copy import copy_function, fresh_entry
from .options import CompileOptions
from .recording_backend import RecordingBackend
from .session import CaptureSession
from .timing.real_steps import RealStepTimer, following_steps

_P = ParamSpec("_P")
_R = TypeVar("_R")


class CaptureRun:
    """One capture while it runs: compiles through the recording backend, calls the user's code,
    runs backward; `result` is the Capture once the run has ended (also after an error)."""

    def __init__(self, how: CompileOptions, session: CaptureSession) -> None:
        self.how = how
        self.session = session

    @property
    def result(self) -> Capture | None:
        return self.session.result

    def wrap(self, backend: torch_bridge.Backend) -> RecordingBackend:
        """`backend` with the capture's recording around it (module paths, graphs to time)."""
        return RecordingBackend(backend, self.session)

    def compile(self, fn: Callable[_P, _R]) -> Callable[_P, _R]:
        """torch.compile(fn) with the run's options and the recording backend."""
        how = self.how
        backend = self.wrap(how.backend_fn())
        return torch_bridge.compile_fn(fn, backend, dynamic=how.dynamic, fullgraph=how.fullgraph)

    def call(
        self,
        fn: Callable[..., object],
        args: tuple[object, ...] | list[object] = (),
        kwargs: dict[str, object] | None = None,
    ) -> object:
        """Compile a fresh copy of `fn` (for a module: its forward, as torch.compile(module) does,
        so hooks still run around it) and call it once; the module is left as it was."""
        entry, restore = fresh_entry(fn)
        try:
            if entry is fn and torch_bridge.is_module(fn):
                forward = cast(types.FunctionType, type(fn).forward)  # fresh_entry checked it
                fn.forward = self.compile(copy_function(forward).__get__(fn))
                return fn(*args, **(kwargs or {}))
            return self.compile(entry)(*args, **(kwargs or {}))
        finally:
            restore()

    def backward(self, output: object) -> bool:
        """Backward of the summed output; False when it holds no tensor that requires grad."""
        loss = torch_bridge.sum_for_backward(output)
        if loss is None:
            return False
        loss.backward()  # type: ignore[no-untyped-call]  # Tensor.backward is unannotated
        return True


@dataclass(frozen=True)
class Replay:
    """How to run a capture's code again (for `try_fix`): the options it ran with, the step
    that calls the code, and the call's arguments by parameter name."""

    how: CompileOptions
    step: Callable[[CaptureRun], object]
    arguments: dict[str, object] = field(default_factory=dict)

    def run(self, how: CompileOptions | None = None) -> Capture:
        """The same step captured again, with `how` (else the same options)."""
        with capture_run(how or self.how) as run:
            self.step(run)
        assert run.result is not None  # built on the way out of the block
        return run.result


# id(capture) -> its Replay, while the capture lives: a Capture is plain data and holds no code.
_REPLAYS: dict[int, Replay] = {}


def remember_replay(capture: Capture, replay: Replay) -> None:
    """Keep `replay` for as long as `capture` lives."""
    key = id(capture)
    _REPLAYS[key] = replay
    weakref.finalize(capture, _REPLAYS.pop, key, None)


def replay_of(capture: Capture) -> Replay | None:
    """How to run `capture`'s code again, for captures of `capture()` and `%%compile_fx`."""
    return _REPLAYS.get(id(capture))


def arguments_by_name(
    fn: Callable[..., object],
    args: tuple[object, ...] | list[object],
    kwargs: dict[str, object] | None,
) -> dict[str, object]:
    """The call's arguments by parameter name (what torch's guards call `L['name']`)."""
    try:
        bound = inspect.signature(fn).bind_partial(*args, **(kwargs or {}))
    except (TypeError, ValueError):
        return {}
    return dict(bound.arguments)


@contextlib.contextmanager
def capture_run(
    how: CompileOptions | None = None,
    *,
    extra_settings: dict[str, object] | None = None,
    on_event: Callable[[str, dict[str, Any]], None] | None = None,
    loop: bool = False,
    fresh: bool = True,
) -> Iterator[CaptureRun]:
    """Listen for everything torch.compile does inside the block, with `how`'s settings held;
    the Capture is built (and the recorded graphs timed, as `how.timings` asks) on the way out.

    Bad option combinations raise ValueError here, before anything runs. `loop`: the block is
    the user's loop (capturing()): if it ran no optimizer step, the capture says so.
    """
    torch_support.check_supported()
    how = how or CompileOptions(timings=False)
    how.backend_fn()
    settings = {**how.settings(), **(extra_settings or {})}
    session = CaptureSession(on_event=on_event, timings=how.timings)
    run = CaptureRun(how, session)
    timer = (
        RealStepTimer(session, how.real_steps, how.eager_steps, say_no_optimizer=loop)
        if how.real_steps > 0
        else None
    )
    with (
        session.active(settings or None, steps=timer.outcome if timer else None, fresh=fresh),
        how.running(run.wrap),
        following_steps(timer),
        # what compiled forwards save, on their first run
        session.held.measuring(compiled_autograd=how.compiled_autograd),
    ):
        yield run


@contextlib.contextmanager
def capturing(
    *,
    real_steps: int = 10,
    eager_steps: int = 5,
    reset: bool = False,
    fresh: bool = False,
    **inductor_options: object,
) -> Iterator[CaptureHandle]:
    """Capture every torch.compile compilation inside the block.

    >>> with capturing() as cap:
    ...     for batch in data:          # a training loop: its own steps are timed too
    ...         step(batch); opt.step()
    >>> print(cap.capture)      # or use `cap` like a Capture once the block ended

    Once compiling has stopped, `real_steps` of the code's own steps (optimizer step to
    optimizer step) are timed with every compiled kernel, then `eager_steps` more with
    torch.compile's stance set to force_eager (0 turns either off); see `Timings.real_steps`.
    Code compiled before the block runs from torch.compile's cache and its compile is not
    seen (its steps are still timed, whole); `reset=True` empties Dynamo's caches first
    (`torch._dynamo.reset()`: every compiled function compiles again on its next call).
    """
    how = CompileOptions(timings=False, real_steps=real_steps, eager_steps=eager_steps)
    if reset:
        torch_bridge.reset_dynamo()
    with capture_run(how, extra_settings=inductor_options or None, loop=True, fresh=fresh) as run:
        yield CaptureHandle(run)


class CaptureHandle:
    """What `capturing()` yields: behaves as the Capture once the block has ended."""

    def __init__(self, run: CaptureRun) -> None:
        self._run = run

    @property
    def capture(self) -> Capture:
        if self._run.result is None:
            raise RuntimeError("the capture is still running; read it after the `with` block")
        return self._run.result

    def __getattr__(self, name: str) -> Any:  # whatever the Capture's attribute is
        return getattr(self.capture, name)

    def __getitem__(self, key: str | CompileId | int) -> Compile:
        return self.capture[key]

    def __iter__(self) -> Iterator[Compile]:
        return iter(self.capture)

    def __len__(self) -> int:
        return len(self.capture)

    def __repr__(self) -> str:
        return repr(self.capture) if self._run.result else "<capture running>"

    def __str__(self) -> str:
        return str(self.capture) if self._run.result else "<capture running>"


def capture(
    fn: Callable[..., object],
    *args: object,
    backward: bool = True,
    backend: str | torch_bridge.Backend = "inductor",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
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

    def step(run: CaptureRun) -> None:
        output = run.call(fn, args, kwargs)
        if backward:
            run.backward(output)

    replay = Replay(how, step, arguments_by_name(fn, args, kwargs))
    result = replay.run()
    remember_replay(result, replay)
    return result
