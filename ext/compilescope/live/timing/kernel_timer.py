"""Per-kernel times of compiled graphs, forward and backward, by wrapping the kernels Inductor's
output modules call (C++: a clock around each call; GPU: a profiler range around each launch)."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import torch

from ...model.kernel import OutputCode
from ...model.measured.timing import KernelTiming, Sample
from ..phases import phase
from ..torch_bridge import cuda_event
from .flop_count import kernel_flops
from .profiler_times import LABEL, detaching_cupti, gpu_times, start_profile

# Globals of an output module through which its extern calls go (`extern_kernels.mm(...)`,
# `aten.gelu.default(...)`, `torch.ops.aten._scaled_dot_product_flash_attention.default(...)`).
_NAMESPACES = ("extern_kernels", "aten", "torch")

# How kernels are timed on a GPU. "events": a CUDA event pair around each launch, after a short
# spin kernel (torch.cuda._sleep) that keeps the GPU busy while the CPU launches, so that the
# pair brackets the kernel and not the launch gap; no profiler, so no CUPTI start-up (seconds on
# a fresh process). "profiler": torch.profiler ranges around each launch, the kernels' CUDA time
# as CUPTI records it (exact, costs the profiler's start). benchmarks/recorders/gpu_realistic.py checked
# both against torch.profiler in real training steps; "events" lets the launch gap leak in
# (the figures are in git history: RESULTS.md of de73b72): the profiler is the default.
GPU_CLOCK = "profiler"
_SPIN_CYCLES = 100_000  # about 50 us at H100 clocks: longer than one launch from Python


@dataclass
class CallLog:
    """What the wrapper of one kernel saw: per-call times (CPU) or calls, and the sizes of the
    calls of the first step (one name, e.g. `extern_kernels.mm`, is called with many shapes, so
    bytes and FLOPs are the mean over a step's calls, like the time they are divided by)."""

    kernel: str
    role: str
    times: list[float] = field(default_factory=list)
    pending: list[tuple[Any, Any]] = field(default_factory=list)  # CUDA event pairs not read yet
    calls: int = 0
    sizing: bool = True  # until the first step ends
    sized: int = 0
    total_bytes: float = 0.0
    total_flops: float | None = 0.0  # None once a call's FLOPs are unknown

    def size_call(self, args: tuple[Any, ...], kwargs: dict[str, Any], result: object) -> None:
        tensors = {}
        for value in (*args, *kwargs.values(), result):
            for t in _tensors(value):
                tensors[(t.data_ptr(), t.numel(), t.dtype)] = t.numel() * t.element_size()
        self.sized += 1
        self.total_bytes += float(sum(tensors.values()))
        flops = kernel_flops(self.kernel, args, kwargs, result)
        self.total_flops = (
            None if flops is None or self.total_flops is None else self.total_flops + flops
        )

    @property
    def bytes_per_call(self) -> float | None:
        return self.total_bytes / self.sized if self.sized and self.total_bytes else None

    @property
    def flops_per_call(self) -> float | None:
        return self.total_flops / self.sized if self.sized and self.total_flops else None


def _tensors(value: object) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield item


class _Namespace:
    """Stands in for `extern_kernels` / `aten` / `torch` in one output module: attribute access
    passes through, except on the way to a kernel we time, which comes back wrapped."""

    def __init__(self, real: object, path: str, wrap: Callable[[str, object], object]) -> None:
        self._real, self._path, self._wrap = real, path, wrap

    def __getattr__(self, name: str) -> object:
        value = getattr(self._real, name)
        return self._wrap(f"{self._path}.{name}", value)


class _TritonLaunch:
    """Stands in for a Triton kernel (Inductor's CachingAutotuner): `.run` is wrapped."""

    def __init__(self, inner: object, run: Callable[..., Any]) -> None:
        self._inner, self.run = inner, run

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def _wrapped_call(
    fn: Callable[..., Any],
    log: CallLog,
    gpu: bool,
    timeline: list[tuple[str, float, float]] | None = None,
) -> Callable[..., Any]:
    label = f"{LABEL}{log.role}::{log.kernel}"
    events = gpu and GPU_CLOCK == "events"

    def call(*args: Any, **kwargs: Any) -> Any:
        log.calls += 1
        began = time.perf_counter()
        if events:
            torch.cuda._sleep(_SPIN_CYCLES)  # type: ignore[no-untyped-call]  # unannotated in torch
            start, end = cuda_event(), cuda_event()
            start.record()
            result = fn(*args, **kwargs)
            end.record()
            log.pending.append((start, end))
        elif gpu:
            with torch.profiler.record_function(label):
                result = fn(*args, **kwargs)
        else:
            result = fn(*args, **kwargs)
        ended = time.perf_counter()
        if not gpu:
            log.times.append(ended - began)
        if timeline is not None:  # the host clock around the call, for the gaps between graphs
            timeline.append((log.role, began, ended))
        if log.sizing:
            log.size_call(args, kwargs, result)
        return result

    return call


def loaded_module(path: str) -> object | None:
    """The loaded Python module of an output code file (Inductor puts it in sys.modules)."""
    for module in list(sys.modules.values()):
        if getattr(module, "__file__", None) == path:
            return module
    return None


def _wrapper(
    role: str,
    wanted: set[str],
    logs: dict[tuple[str, str], CallLog],
    gpu: bool,
    timeline: list[tuple[str, float, float]] | None,
) -> Callable[[str, object], object]:
    """What one output module's namespaces hand out: a timed kernel, a namespace on the way to
    one, or the attribute itself. (One per module: a closure made in a loop would see the last
    module's names.)"""
    cache: dict[str, object] = {}

    def wrap(path: str, value: object) -> object:
        if path in wanted:
            if path not in cache:
                log = logs.setdefault((role, path), CallLog(path, role))
                kernel = cast(Callable[..., Any], value)
                cache[path] = _wrapped_call(kernel, log, gpu, timeline)
            return cache[path]
        if any(w.startswith(path + ".") for w in wanted):
            return _Namespace(value, path, wrap)
        return value

    return wrap


@contextmanager
def wrapped_kernels(
    codes: list[OutputCode], gpu: bool, timeline: list[tuple[str, float, float]] | None = None
) -> Iterator[dict[tuple[str, str], CallLog]]:
    """Inside, the kernels of these output modules are wrapped; (role, kernel) -> its CallLog.
    With `timeline` (a GPU's profiler clock, or a CPU's: not CUDA events), each call also
    appends (role, began, ended) on the host clock. Every module global replaced is put back
    on the way out."""
    logs: dict[tuple[str, str], CallLog] = {}
    replaced: list[tuple[dict[str, Any], str, object]] = []
    try:
        for code in codes:
            module = loaded_module(code.path) if code.path else None
            if module is None:
                continue
            space = vars(module)
            role = code.role or "forward"
            wanted = {k.name for k in code.kernels}
            wrap = _wrapper(role, wanted, logs, gpu, timeline)
            for name in wanted:
                head = name.split(".", 1)[0]
                if "." in name and head in _NAMESPACES and head in space:
                    if not isinstance(space[head], _Namespace):
                        replaced.append((space, head, space[head]))
                        space[head] = _Namespace(space[head], head, wrap)
                elif name in space and callable(getattr(space[name], "run", None)):
                    log = logs.setdefault((role, name), CallLog(name, role))
                    replaced.append((space, name, space[name]))
                    space[name] = _TritonLaunch(
                        space[name], _wrapped_call(space[name].run, log, gpu, timeline)
                    )
                elif name in space and callable(space[name]):
                    log = logs.setdefault((role, name), CallLog(name, role))
                    replaced.append((space, name, space[name]))
                    space[name] = _wrapped_call(space[name], log, gpu, timeline)
        yield logs
    finally:
        for space, name, value in reversed(replaced):
            space[name] = value


def kernel_times(
    compile_id: str,
    codes: list[OutputCode],
    run_step: Callable[[], None],
    device: str,
    repeats: int,
) -> tuple[list[KernelTiming], list[dict[str, Any]]]:
    """Time each kernel of a compiled graph over `repeats` runs of `run_step` (forward, and
    backward when it needs grad). Returns the timings and, on a GPU, the profiler's chrome
    trace events (for launch shapes)."""
    gpu = device.startswith("cuda")
    with wrapped_kernels(codes, gpu) as logs:
        if not logs:
            return [], []
        step = run_step

        def run_step() -> None:  # the first step's calls are sized, the others only timed
            step()
            for log in logs.values():
                log.sizing = False

        launches: list[dict[str, Any]] = []
        if gpu and GPU_CLOCK == "events":
            for _ in range(repeats):
                run_step()
            torch.cuda.synchronize()
            for log in logs.values():
                log.times = [a.elapsed_time(b) / 1e3 for a, b in log.pending]
                log.pending = []
        elif gpu:
            activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            with phase("profiler start"):
                prof = torch.profiler.profile(activities=activities)
                cupti = detaching_cupti()  # the user's steps after it run as before it
                cupti.__enter__()
                start_profile(prof)
            try:
                with phase("kernel runs"):
                    for _ in range(repeats):
                        run_step()
                    torch.cuda.synchronize()
            finally:
                with phase("profiler stop"):
                    prof.stop()
                    cupti.__exit__(None, None, None)
            with phase("profiler read"):
                times, launches = gpu_times(prof)
            for key, values in times.items():
                if key in logs:
                    logs[key].times.extend(values)
        else:
            with phase("kernel runs"):
                for _ in range(repeats):
                    run_step()
    out = []
    for (role, name), log in sorted(logs.items()):
        if not log.times:
            continue
        values = _per_call(log.times, log.calls / repeats)
        out.append(
            KernelTiming(
                compile_id,
                name,
                Sample(statistics.median(values), min(values), max(values), len(values)),
                log.calls / repeats,
                source=_source(gpu),
                role=role,
                bytes_per_call=log.bytes_per_call,
                flops_per_call=log.flops_per_call,
            )
        )
    return out, (launches if gpu and GPU_CLOCK != "events" and out else [])


def _per_call(times: list[float], calls_per_step: float) -> list[float]:
    """One value per step, each that step's mean per call: a name called several times a step
    with other shapes (`extern_kernels.mm` runs every matmul) has no meaningful median call,
    while its per-step total, and the bytes and FLOPs it is divided into, are consistent."""
    n = round(calls_per_step)
    if n <= 1 or len(times) < n or len(times) % n:
        return times
    return [sum(times[i : i + n]) / n for i in range(0, len(times), n)]


def _source(gpu: bool) -> str:
    if not gpu:
        return "clock around each call"
    if GPU_CLOCK == "events":
        return "CUDA events around each launch, after a spin kernel"
    return "torch.profiler (CUDA time of the kernels each call launched)"
