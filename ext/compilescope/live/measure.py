"""Time compiled graphs on inputs of their recorded shapes (eager vs compiled) and their kernels."""

from __future__ import annotations

import json
import re
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from ..model.capture import Capture
from ..model.timing import GraphTiming, KernelTiming, Sample, Timings

# Inductor names a C++ kernel's profiler event `graph_<n>_<kernel>` (config.cpp.enable_kernel_profile).
_CPP_EVENT = re.compile(r"^graph_\d+_(.+)$")


def kernel_profile_settings() -> dict[str, bool]:
    """Inductor settings for timed captures, decided when a capture starts (not at import).

    cpp.enable_kernel_profile: C++ kernels show up by name in the profiler.
    benchmark_kernel: Triton kernels carry Inductor's bytes estimate (`kernel_num_gb`), so the
    view can show achieved bandwidth. Only where Triton kernels can be made: it does nothing for
    C++ kernels, and Inductor then prints "Compiled module path: ..." to stderr at every compile
    (torch/_inductor/graph.py), which would land in the user's cell output for nothing.
    """
    settings = {"cpp.enable_kernel_profile": True}
    if torch.cuda.is_available():
        settings["benchmark_kernel"] = True
    return settings


@dataclass
class RecordedGraph:
    """What a backend call gave: the Dynamo graph, the compiled callable, its inputs' layout."""

    graph_module: Callable
    compiled: Callable
    inputs: list  # (shape, stride, dtype, device, requires_grad) per tensor, or the value itself
    grad_enabled: bool = True  # grad mode when it compiled (a `no_grad` block: inference)


def input_layout(example_inputs: list) -> list:
    layout = []
    for value in example_inputs:
        if isinstance(value, torch.Tensor):
            shape = tuple(int(s) for s in value.shape)
            stride = tuple(int(s) for s in value.stride())
            layout.append((shape, stride, value.dtype, value.device, value.requires_grad))
        elif isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            # A dynamic size reaches the backend as a symbol; running needs its concrete value.
            layout.append(value.node.hint)
        else:
            layout.append(value)  # other constants, as the call passed them
    return layout


def _make_inputs(layout: list) -> list:
    """Fresh tensors of the recorded layout (never the user's own: running must not touch them)."""
    from torch._dynamo.testing import rand_strided

    inputs = []
    for spec in layout:
        if not isinstance(spec, tuple) or len(spec) != 5:
            inputs.append(spec)
            continue
        shape, stride, dtype, device, requires_grad = spec
        if dtype.is_floating_point or dtype.is_complex:
            tensor = rand_strided(shape, stride, dtype=dtype, device=device)
            inputs.append(tensor.requires_grad_(requires_grad))
        else:  # integer and bool inputs are often indices: zeros are always valid ones
            inputs.append(rand_strided(shape, stride, dtype=dtype, device=device).zero_())
    return inputs


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _sample(fn: Callable, args: list, device: str, warmup: int, repeats: int) -> Sample:
    for _ in range(warmup):
        fn(*args)
    _sync(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        _sync(device)  # on a GPU, the clock is read only after the work is done
        times.append(time.perf_counter() - start)
    return Sample(statistics.median(times), min(times), max(times), repeats, warmup)


def _peak_bytes(fn: Callable, args: list, device: str) -> int | None:
    """Bytes one run allocates at its peak above what was allocated before it."""
    if device == "cpu":
        return _cpu_peak_bytes(fn, args)
    if not device.startswith("cuda"):
        return None
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    result = fn(*args)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del result
    return int(peak)


def _cpu_peak_bytes(fn: Callable, args: list) -> int | None:
    """The CPU allocator keeps no peak, but under the profiler with profile_memory every
    allocation and free is an event carrying the running total ("Total Allocated"): the peak of
    that total, less where it stood before the first event, is the run's peak. None when the
    profiler recorded no CPU memory events (nothing to read, so nothing to claim)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn(*args)
        del result
    return peak_from_memory_events(_chrome_trace_events(prof))


def _chrome_trace_events(prof) -> list[dict]:
    """The profiler's chrome trace events: the only place it keeps allocation totals and
    kernel launch shapes (its Python events carry neither)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.json"
        prof.export_chrome_trace(str(path))
        return json.loads(path.read_text()).get("traceEvents", [])


def peak_from_memory_events(events: list[dict]) -> int | None:
    """Peak of the CPU allocator's running total over a chrome trace's [memory] events."""
    totals = []
    for e in events:
        args = e.get("args") or {}
        if e.get("name") != "[memory]" or args.get("Device Type") != 0:  # 0: c10 CPU
            continue
        if "Total Allocated" in args and "Bytes" in args:
            totals.append((e.get("ts", 0), args["Total Allocated"], args["Bytes"]))
    if not totals:
        return None
    totals.sort(key=lambda t: t[0])
    start = totals[0][1] - totals[0][2]
    return int(max(0, max(t[1] for t in totals) - start))


def _device_of(layout: list) -> str:
    for spec in layout:
        if isinstance(spec, tuple) and len(spec) == 5:
            return str(spec[3])
    return "cpu"


def measure(
    recorded: dict[str, RecordedGraph], capture: Capture, warmup: int = 3, repeats: int = 10
) -> Timings:
    """Time every recorded graph, eager and compiled, and the kernels inside the compiled one."""
    started = time.perf_counter()
    graphs, kernels = [], []
    devices = set()
    for compile_id, rec in recorded.items():
        device = _device_of(rec.inputs)
        devices.add(device.split(":")[0])
        mode = _mode_text(rec, _stages_of(capture, compile_id))
        what = (
            f"Dynamo graph {compile_id}: the eager GraphModule vs the compiled callable, "
            f"forward only{mode}, on "
            f"{len(rec.inputs)} fresh inputs of the recorded shapes, dtypes and strides; "
            f"{warmup} warm-up and {repeats} timed runs"
        )
        try:
            with torch.set_grad_enabled(rec.grad_enabled):
                inputs = _make_inputs(rec.inputs)
                eager = _sample(rec.graph_module, inputs, device, warmup, repeats)
                compiled = _sample(rec.compiled, inputs, device, warmup, repeats)
                peaks = (
                    _peak_bytes(rec.graph_module, inputs, device),
                    _peak_bytes(rec.compiled, inputs, device),
                )
        except Exception as error:  # a graph that cannot run alone: say so, show no number
            graphs.append(
                GraphTiming(
                    compile_id, what, note=f"could not run alone: {type(error).__name__}: {error}"
                )
            )
            continue
        graphs.append(GraphTiming(compile_id, what, eager, compiled, "", *peaks))
        known = _kernel_names(capture, compile_id)
        if known:
            with torch.set_grad_enabled(rec.grad_enabled):
                kernels.extend(_kernel_times(compile_id, rec, inputs, known, device, repeats))
    return Timings(
        device=",".join(sorted(devices)) or "cpu",
        graphs=tuple(graphs),
        kernels=tuple(kernels),
        measure_s=time.perf_counter() - started,
    )


def _stages_of(capture: Capture, compile_id: str) -> set[str]:
    return next((set(c.graphs) for c in capture if str(c.id) == compile_id), set())


def _mode_text(rec: RecordedGraph, stages: set[str]) -> str:
    """What grad mode the timed runs had, in the words the capture's graphs justify."""
    if not rec.grad_enabled:
        return " (grad mode off, as the code ran it)"
    if "aot_inference_graph" in stages:
        # AOTAutograd saw that no output needs grad (e.g. a `with torch.no_grad()` inside the
        # compiled code): an inference graph, timed as such.
        return " (an inference graph: no output needs grad)"
    grad = any(isinstance(s, tuple) and len(s) == 5 and s[4] for s in rec.inputs)
    return " (training mode: inputs require grad)" if grad else ""


def _kernel_names(capture: Capture, compile_id: str) -> set[str]:
    for c in capture:
        if str(c.id) == compile_id:
            return {
                k.name
                for o in c.output_code
                if o.role in ("forward", "inference")
                for k in o.kernels
            }
    return set()


def _kernel_times(compile_id, rec, inputs, known, device, repeats) -> list[KernelTiming]:
    """Per-call times of each kernel from profiler events of the compiled graph's runs."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.startswith("cuda"):
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(repeats):
            rec.compiled(*inputs)
        _sync(device)
    durations: dict[str, list[float]] = defaultdict(list)
    gpu = device.startswith("cuda")
    for event in prof.events():
        name = _kernel_of_event(event.name, known)
        if name is None:
            continue
        on_device = getattr(event, "device_type", None) == torch.autograd.DeviceType.CUDA
        # On a GPU a kernel also appears as its CPU-side launch; only the GPU event is its time.
        if on_device != gpu:
            continue
        micros = event.device_time_total if on_device else event.cpu_time_total
        durations[name].append(micros / 1e6)
    shapes = launch_shapes(_chrome_trace_events(prof), known) if gpu else {}
    out = []
    for name, values in sorted(durations.items()):
        sample = Sample(statistics.median(values), min(values), max(values), len(values))
        grid, block, registers = shapes.get(name, ((), (), None))
        calls = len(values) / repeats
        out.append(
            KernelTiming(
                compile_id, name, sample, calls, grid=grid, block=block, registers=registers
            )
        )
    return out


def launch_shapes(events: list[dict], known: set[str]) -> dict[str, tuple]:
    """kernel name -> (grid, block, registers per thread), from chrome trace kernel events."""
    out: dict[str, tuple] = {}
    for e in events:
        args = e.get("args") or {}
        if e.get("cat") != "kernel" or e.get("name") not in known or e["name"] in out:
            continue
        grid, block = args.get("grid"), args.get("block")
        if not (isinstance(grid, list) and isinstance(block, list)):
            continue
        registers = args.get("registers per thread")
        out[e["name"]] = (
            tuple(int(v) for v in grid),
            tuple(int(v) for v in block),
            int(registers) if isinstance(registers, int) else None,
        )
    return out


def _kernel_of_event(event: str, known: set[str]) -> str | None:
    if event in known:  # Triton kernels on a GPU carry their own name
        return event
    match = _CPP_EVENT.match(event)
    if match and match.group(1) in known:
        return match.group(1)
    if event.startswith("aten::"):  # extern calls: `extern_kernels.mm` runs as `aten::mm`
        extern = "extern_kernels." + event.removeprefix("aten::")
        if extern in known:
            return extern
    return None
