"""Time compiled graphs on inputs of their recorded shapes: forward and backward, eager vs
compiled, and each kernel of the compiled forward and backward."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from ...model.capture import Capture
from ...model.kernel import OutputCode
from ...model.measured.timing import GraphTiming, KernelTiming, Sample, Timings
from .. import torch_bridge
from ..phases import phase, reset
from ..quiet import silenced
from . import inputs as timing_inputs
from .device_peaks import device_peaks
from .inputs import layout_device
from .kernel_timer import kernel_times
from .memory import peak_bytes
from .profiler_times import launch_shapes
from .text import timing_description

# How much time measuring may take, against what compiling took: with the default (time-boxed)
# settings each graph gets at most 3 warm-up and 10 timed runs per arm, fewer when a run is
# long, never fewer than 3 timed runs.
BUDGET_FRACTION = 0.02
MIN_BUDGET_S = 0.2


@dataclass
class RecordedGraph:
    """What a backend call gave: the Dynamo graph, the compiled callable, its inputs' layout."""

    graph_module: torch.fx.GraphModule
    compiled: torch_bridge.CompiledFn
    # (shape, stride, dtype, device, requires_grad) per tensor, or the value itself
    inputs: list[object]
    grad_enabled: bool = True  # grad mode when it compiled (a `no_grad` block: inference)
    values: dict[int, torch.Tensor] = field(default_factory=dict)  # see timing_inputs.input_values
    moments: dict[int, torch.Tensor] = field(
        default_factory=dict
    )  # see timing_inputs.input_moments


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


@dataclass
class _Runs:
    """How many runs: fixed (`repeats` given), or as many as fit a time budget (3 to 10)."""

    budget_s: float | None
    fixed: int | None = None

    def counts(self, one_run_s: float) -> tuple[int, int]:
        if self.fixed is not None:
            return 3, self.fixed
        fits = int(self.budget_s / max(one_run_s, 1e-7)) if self.budget_s else 10
        repeats = max(3, min(10, fits - 1))
        return (3 if fits >= 13 else 1), repeats


def _clock(fn: Callable[[], object], device: str) -> float:
    _sync(device)
    start = time.perf_counter()
    fn()
    _sync(device)  # on a GPU, the clock is read only after the work is done
    return time.perf_counter() - start


def _samples(a: Callable[[], float], b: Callable[[], float], runs: _Runs) -> tuple[Sample, Sample]:
    """Time two things alternately (a, b, a, b, ...), so that a change in the machine's load
    hits both alike; each callable runs once and returns its own time."""
    first = max(a(), b())  # warm-up runs that also size the rest
    warmup, repeats = runs.counts(first)
    for _ in range(warmup - 1):
        a(), b()
    times_a, times_b = [], []
    for _ in range(repeats):
        times_a.append(a())
        times_b.append(b())
    return tuple(  # type: ignore[return-value]
        Sample(statistics.median(t), min(t), max(t), repeats, warmup) for t in (times_a, times_b)
    )


def _samples_or_alone(
    eager: Callable[[], float], compiled: Callable[[], float], runs: _Runs, device: str
) -> tuple[Sample | None, Sample, str]:
    """Eager against compiled, alternating; when the eager arm cannot run (it does not fit in
    memory where the compiled graph does, or fails otherwise), the compiled arm alone, and why
    the eager one is missing. A failure of the compiled arm propagates: nothing to show."""
    try:
        a, b = _samples(eager, compiled, runs)
        return a, b, ""
    except Exception as error:
        why = f"eager not timed ({type(error).__name__}: {str(error)[:160]})"
    _free(device)
    first = compiled()
    warmup, repeats = runs.counts(first)
    for _ in range(warmup - 1):
        compiled()
    times = [compiled() for _ in range(repeats)]
    return None, Sample(statistics.median(times), min(times), max(times), repeats, warmup), why


def _free(device: str) -> None:
    """Give back what a failed run left cached on a GPU (a CUDA out-of-memory leaves blocks
    behind, some held by the failure's reference cycles). Not on a CPU, where nothing is
    cached: there it was a full collection for each graph that could not run, 0.4 s each in
    a process that had captured a 1-layer GPT-2, more as a session grows."""
    if device.startswith("cuda"):
        import gc

        gc.collect()
        torch.cuda.empty_cache()


def _call_args(inputs: list[object]) -> list[object]:
    # A list input goes in as a copy: a boxed graph (compiled autograd's) empties its lists.
    return [list(v) if isinstance(v, list) else v for v in inputs]


class _Step:
    """One graph's forward, and backward of its outputs that need grad, on fixed inputs."""

    def __init__(self, fn: Callable[..., object], inputs: list[object]) -> None:
        self.fn, self.inputs = fn, inputs
        flat = [t for v in inputs for t in (v if isinstance(v, list) else [v])]
        self.leaves = [t for t in flat if isinstance(t, torch.Tensor) and t.requires_grad]
        self.grads: list[torch.Tensor] | None = None
        self.outputs: list[torch.Tensor] = []
        self.needs_backward = False  # some output needed grad in a forward run

    def forward(self) -> None:
        from torch.utils._pytree import tree_leaves

        result = self.fn(*_call_args(self.inputs))
        self.outputs = [
            t
            for t in tree_leaves(result)
            if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()
        ]
        self.needs_backward = self.needs_backward or bool(self.outputs)

    @property
    def has_backward(self) -> bool:
        return torch.is_grad_enabled() and self.needs_backward

    def backward(self) -> None:
        if self.grads is None:  # random gradients of the outputs' layout, made once
            self.grads = [torch.randn_like(t) for t in self.outputs]
        for t in self.leaves:
            t.grad = None  # each backward writes fresh gradients, none accumulates
        torch.autograd.backward(self.outputs, self.grads)
        self.outputs = []

    def both(self) -> None:
        self.forward()
        if self.outputs and torch.is_grad_enabled():
            self.backward()


def _backward_once(step: _Step, device: str) -> Callable[[], float]:
    """Backward alone: each timed backward follows an untimed forward."""

    def once() -> float:
        step.forward()
        return _clock(step.backward, device)

    return once


def measure(
    recorded: dict[str, RecordedGraph],
    capture: Capture,
    repeats: int | None = None,
) -> Timings:
    """Time every recorded graph (forward and backward, eager and compiled) and the kernels of
    its compiled forward and backward. With `repeats`, exactly that many timed runs each;
    without, a time budget of BUDGET_FRACTION of the compile time decides (3 to 10 runs)."""
    started = time.perf_counter()
    reset()
    gpus = list(range(torch.cuda.device_count())) if torch_bridge.cuda_initialized() else []
    # Fresh random inputs and dropout draw from torch's generators: put them back as they were,
    # so the user's next random numbers are those an uncaptured run would get.
    with silenced(), torch.random.fork_rng(devices=gpus):
        timings = _measure(recorded, capture, repeats)
    return Timings(
        device=timings.device,
        graphs=timings.graphs,
        kernels=timings.kernels,
        measure_s=time.perf_counter() - started,
        peak_bytes_per_s=timings.peak_bytes_per_s,
        peak_flops=timings.peak_flops,
    )


def _measure(recorded: dict[str, RecordedGraph], capture: Capture, repeats: int | None) -> Timings:
    compiles = {str(c.id): c for c in capture}
    compile_s = sum(c.compile_time_s or 0.0 for c in capture)
    graph_budget = max(MIN_BUDGET_S, BUDGET_FRACTION * compile_s) / max(1, len(recorded))
    # Five arms share a graph's budget: forward and backward, eager and compiled, kernels.
    runs = _Runs(graph_budget / 5, repeats)
    graphs: list[GraphTiming] = []
    kernels: list[KernelTiming] = []
    devices: set[str] = set()
    dtypes: list[torch.dtype] = []
    for compile_id, rec in recorded.items():
        device = layout_device(rec.inputs)
        devices.add(device.split(":")[0])
        dtypes += [s[2] for s in rec.inputs if isinstance(s, tuple) and len(s) == 5]
        c = compiles.get(compile_id)
        if c is None:  # the backend heard an id the trace never logged: say so, guess nothing
            graphs.append(GraphTiming(compile_id, "", note="no compile with this id was logged"))
            continue
        what = timing_description(
            compile_id, rec.inputs, rec.grad_enabled, set(c.graphs), runs.fixed
        )
        try:
            with torch.set_grad_enabled(rec.grad_enabled):
                timing, step = _time_graph(compile_id, rec, device, what, runs)
        except Exception as error:  # a graph that cannot run alone: say so, show no number
            note = f"could not run alone: {type(error).__name__}: {error}"
            graphs.append(GraphTiming(compile_id, what, note=note))
            continue
        graphs.append(timing)
        codes = [o for o in c.output_code if o.kernels]
        if not step.has_backward:
            codes = [o for o in codes if o.role != "backward"]
        if codes:
            try:
                with torch.set_grad_enabled(rec.grad_enabled):
                    step_s = timing.step_s() or 0.0
                    kernels.extend(_kernels(compile_id, codes, step, device, runs, step_s))
            except Exception as error:  # the graph's times stand; its kernels are not timed
                note = f"kernels not timed: {type(error).__name__}: {error}"
                graphs[-1] = replace(timing, note=note)
    device = ",".join(sorted(devices)) or "cpu"
    peak_bw = peak_flops = None
    if kernels and "," not in device:
        floats = [d for d in dtypes if d.is_floating_point]
        dtype = max(set(floats), key=floats.count) if floats else torch.float32
        first_device = layout_device(next(iter(recorded.values())).inputs)
        try:
            with phase("device peaks"):
                peak_bw, peak_flops, _ = device_peaks(first_device, dtype)
        except Exception:  # no peak, no share of it: the times stand alone
            pass
    return Timings(device, tuple(graphs), tuple(kernels), 0.0, peak_bw, peak_flops)


def _time_graph(
    compile_id: str, rec: RecordedGraph, device: str, what: str, runs: _Runs
) -> tuple[GraphTiming, _Step]:
    with phase("inputs"):
        inputs = timing_inputs.make_inputs(rec.inputs, rec.values, rec.moments)
    eager_step, compiled_step = _Step(rec.graph_module, inputs), _Step(rec.compiled, inputs)
    notes = []
    with phase("graph runs"):
        eager, compiled, why = _samples_or_alone(
            lambda: _clock(eager_step.forward, device),
            lambda: _clock(compiled_step.forward, device),
            runs,
            device,
        )
        notes.append(why)
        eager_step.outputs = []
        eager_bw = compiled_bw = None
        compiled_step.forward()
        if compiled_step.outputs and torch.is_grad_enabled():
            if eager is None:  # the eager forward did not fit: time the compiled backward alone
                skip = _skipped
                eager_bw, compiled_bw, why = _samples_or_alone(skip, _backward_once(compiled_step, device), runs, device)  # fmt: skip
            else:
                eager_bw, compiled_bw, why = _samples_or_alone(
                    _backward_once(eager_step, device), _backward_once(compiled_step, device), runs, device
                )  # fmt: skip
                notes.append(why.replace("eager", "eager backward", 1))
        compiled_step.outputs = []
    with phase("peak memory"):
        peaks = (
            _peak_or_none(rec.graph_module, inputs, device),
            _peak_or_none(rec.compiled, inputs, device),
        )
    timing = GraphTiming(
        compile_id,
        what,
        eager,
        compiled,
        "; ".join(n for n in notes if n),
        *peaks,
        eager_backward=eager_bw,
        compiled_backward=compiled_bw,
    )
    return timing, compiled_step


def _skipped() -> float:
    raise RuntimeError("skipped: its forward did not run")


def _peak_or_none(fn: Callable[..., object], inputs: list[object], device: str) -> int | None:
    """One run's peak memory, or None when that run does not fit (or fails)."""
    try:
        return peak_bytes(fn, _call_args(inputs), device)
    except Exception:
        _free(device)
        return None


def _kernels(
    compile_id: str, codes: list[OutputCode], step: _Step, device: str, runs: _Runs, step_s: float
) -> list[KernelTiming]:
    _, repeats = runs.counts(step_s)
    times, events = kernel_times(compile_id, codes, step.both, device, repeats)
    shapes = launch_shapes(events, {t.kernel for t in times}) if events else {}
    out = []
    for t in times:
        if t.kernel in shapes:
            grid, block, registers = shapes[t.kernel]
            t = replace(t, grid=grid, block=block, registers=registers)
        out.append(t)
    return out
