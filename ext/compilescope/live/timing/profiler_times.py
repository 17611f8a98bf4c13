"""What our profiles saw on the device (kernel time per range, totals, work outside the graphs); their start and stop."""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import torch

from ...model.measured.timing import OutsideWork
from .memory import chrome_trace_events
from .profiler_places import user_functions

if TYPE_CHECKING:
    from torch._C._autograd import _KinetoEvent  # the profiler's raw events (typed in torch's stub)

LABEL = "compilescope::"  # profiler ranges: compilescope::<role>::<kernel>


@contextlib.contextmanager
def detaching_cupti() -> Iterator[None]:
    """Around a profiler session with CUDA activity: CUPTI comes off when it stops.

    Kineto leaves CUPTI attached after a trace unless TEARDOWN_CUPTI is "1" when it stops
    (libkineto CuptiActivityApi.cpp, `cuptiTearDown_()` reads the variable each time), and
    the steps after it run slower, launch-bound ones most (pytorch/pytorch#144455; issue 30:
    1.17x and 1.25x on an H100). A value the user set is left alone; ours is taken back."""
    old = os.environ.get("TEARDOWN_CUPTI")
    if old is None:
        os.environ["TEARDOWN_CUPTI"] = "1"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TEARDOWN_CUPTI", None)


def start_profile(prof: Any) -> None:
    """`prof.start()`, without the warning torch gives every profile of one cycle since 2.11
    ("Profiler clears events at the end of each cycle", profiler.py's prepare_trace): it is
    about our profile, not the user's code, and showed under "torch said" in their capture."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Warning: Profiler clears events")
        prof.start()


Times = dict[tuple[str, str], list[float]]  # (role, kernel) -> seconds per call


def gpu_times(prof: Any) -> tuple[Times, list[dict[str, Any]]]:  # a torch.profiler.profile
    """Each wrapped call's CUDA time: the device time of the kernels (and copies) launched inside
    its range, as CUPTI recorded them, by (role, kernel); and the kernels' launch shapes as
    chrome trace events.

    Read from the profiler's raw Kineto events: `prof.events()` builds a Python FunctionEvent
    tree of every op of every step (a second and more on a training step), where one pass over
    the raw events finds the same kernels. The tree is the fallback where the raw events cannot
    be read (torch/autograd/profiler.py, `_parse_kineto_results`, links them the same way).
    """
    try:
        raw = prof.profiler.kineto_results.events()
    except Exception:  # pragma: no cover - guard against profiler API drift
        return function_event_times(prof), chrome_trace_events(prof)
    times, launches = kernel_times_from_kineto(raw)
    times = {key: [v for v in values if v > 0] for key, values in times.items()}
    if not launches and any(times.values()):
        # Kineto's raw events of torch 2.11 carry no grid or block (seen on an H200): the
        # chrome trace does, at some cost (RESULTS.md).
        launches = chrome_trace_events(prof)
    return times, launches


def kernel_times_from_kineto(
    events: list[_KinetoEvent],
) -> tuple[dict[tuple[str, str], list[float]], list[dict[str, Any]]]:
    """(role, kernel) -> seconds of device time per call, in call order; and launch shapes.

    A device event names (linked correlation id) the innermost CPU op that launched it: our
    range itself for a Triton launch, an aten op inside it for an extern kernel. Ranges do not
    overlap on a thread, so the launching op's start finds its range by bisection.
    """
    import bisect
    import json

    cpu = torch.autograd.DeviceType.CPU
    starts: dict[int, tuple[int, int]] = {}  # correlation id -> (thread, start ns)
    ranges: dict[int, list[tuple[int, int, str]]] = {}  # thread -> (start, end, label)
    device: list[tuple[int, int, str, str]] = []  # (linked id, ns, name, metadata)
    for e in events:
        linked = e.linked_correlation_id()
        if e.device_type() == cpu:
            if linked == 0 and not e.is_async():
                thread, start = e.start_thread_id(), e.start_ns()
                starts[e.correlation_id()] = (thread, start)
                name = e.name()
                if name.startswith(LABEL):
                    ranges.setdefault(thread, []).append((start, e.end_ns(), name))
        elif linked > 0 and not e.name().startswith(LABEL):  # not the range's GPU-side copy
            device.append((linked, e.duration_ns(), e.name(), e.metadata_json() or ""))
    for run in ranges.values():
        run.sort()
    totals: dict[tuple[int, int], int] = {}  # (thread, range start) -> device ns
    launches: list[dict[str, Any]] = []
    shaped: set[str] = set()
    for linked, ns, name, metadata in device:
        where = starts.get(linked)
        if where is None:
            continue
        spans = ranges.get(where[0])
        if not spans:
            continue
        i = bisect.bisect_right(spans, (where[1], 1 << 62, "")) - 1
        if i < 0 or not (spans[i][0] <= where[1] <= spans[i][1]):
            continue
        key = (where[0], spans[i][0])
        totals[key] = totals.get(key, 0) + ns
        if name not in shaped and '"grid"' in metadata:  # one launch per kernel name is enough
            shaped.add(name)
            try:
                args = json.loads("{" + metadata.strip().strip(",") + "}")
            except ValueError:
                continue
            launches.append({"cat": "kernel", "name": name, "args": args})
    out: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for thread, spans in ranges.items():
        for start, _, label in spans:
            role, _, name = label.removeprefix(LABEL).partition("::")
            seconds = totals.get((thread, start), 0) / 1e9
            out.setdefault((role, name), []).append((start, seconds))
    return {key: [s for _, s in sorted(v)] for key, v in out.items()}, launches


def device_totals(events: list[_KinetoEvent]) -> tuple[int, int]:
    """Device time of a profiler session's kernels and copies, in ns: the union of their
    intervals (the time the device was busy) and their sum. Our ranges' GPU-side copies are
    annotations, not work: left out."""
    cpu = torch.autograd.DeviceType.CPU
    spans = []
    for e in events:
        if e.device_type() == cpu or e.name().startswith(LABEL) or e.linked_correlation_id() <= 0:
            continue
        start, length = e.start_ns(), e.duration_ns()
        if length > 0:
            spans.append((start, start + length))
    spans.sort()
    busy = total = 0
    end = -1
    for a, b in spans:
        total += b - a
        if a > end:
            busy += b - a
            end = b
        elif b > end:
            busy += b - end
            end = b
    return busy, total


def outside_work(
    events: list[_KinetoEvent], steps: int, places: dict[int, str] | None = None
) -> list[OutsideWork]:
    """The device work of a profiler session that no range of ours launched (it ran in no
    compiled graph), grouped by what it is, per step: copies by direction and host memory
    kind (CUPTI names them `Memcpy HtoD (Pageable -> Device)`), memsets, collectives (NCCL
    kernels: only the part no other kernel ran beside counts, the rest is overlapped), and
    other kernels by the ATen op that launched them. `places`: `user_functions(events)`,
    where the caller has it already."""
    import bisect

    cpu = torch.autograd.DeviceType.CPU
    ops: dict[int, tuple[int, int, str]] = {}  # correlation id -> (thread, start, op name)
    ranges: dict[int, list[tuple[int, int]]] = {}
    device: list[tuple[int, int, int, str]] = []  # (linked id, start, end, name)
    for e in events:
        linked = e.linked_correlation_id()
        if e.device_type() == cpu:
            if linked == 0 and not e.is_async():
                name = e.name()
                ops[e.correlation_id()] = (e.start_thread_id(), e.start_ns(), name)
                if name.startswith(LABEL):
                    ranges.setdefault(e.start_thread_id(), []).append((e.start_ns(), e.end_ns()))
        elif linked > 0 and not e.name().startswith(LABEL):
            device.append((linked, e.start_ns(), e.start_ns() + e.duration_ns(), e.name()))
    for spans in ranges.values():
        spans.sort()

    def in_range(op: tuple[int, int, str] | None) -> bool:
        if op is None:
            return False
        spans = ranges.get(op[0], [])
        i = bisect.bisect_right(spans, (op[1], 1 << 62)) - 1
        return i >= 0 and spans[i][0] <= op[1] <= spans[i][1]

    # The profiler's own activity records and CUDA runtime calls CUPTI lists as device work.
    device = [d for d in device if not d[3].startswith(_PROFILER_OWN)]
    places = user_functions(events) if places is None else places
    groups: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
    others: list[tuple[int, int]] = []  # every non-collective device interval, for overlap
    for linked, start, end, name in device:
        op = ops.get(linked)
        collective = "nccl" in name.lower()
        if not collective:
            others.append((start, end))
        if in_range(op):
            continue
        kind, label = _work_kind(name, op[2] if op else "")
        where = places.get(linked, "") if kind == "eager_op" else ""
        groups.setdefault((kind, label, where), []).append((start, end))
    union = _union(others)
    out = []
    for (kind, label, where), spans in groups.items():
        total = sum(b - a for a, b in spans)
        hidden = sum(_covered(a, b, union) for a, b in spans) if kind == "collective" else 0
        out.append(
            OutsideWork(
                kind,
                label,
                (total - hidden) / 1e9 / steps,
                len(spans) / steps,
                hidden / 1e9 / steps,
                where,
            )  # fmt: skip
        )
    return sorted(out, key=lambda w: -w.seconds)


_PROFILER_OWN = ("cuda", "Activity Buffer Request", "Buffer Flush")


def _work_kind(device_name: str, op_name: str) -> tuple[str, str]:
    """(kind, name) of a device event outside the compiled graphs."""
    if device_name.startswith("Memcpy"):
        direction = device_name.split()[1] if len(device_name.split()) > 1 else "?"
        words = {"HtoD": "host-to-device", "DtoH": "device-to-host", "DtoD": "device-to-device"}
        memory = (
            " (pageable)"
            if "Pageable" in device_name
            else " (pinned)"
            if "Pinned" in device_name
            else ""
        )
        return "copy", f"{words.get(direction, direction)} copy{memory}"
    if device_name.startswith("Memset"):
        return "memset", "memset"
    if "nccl" in device_name.lower():
        return "collective", device_name.split("(")[0][:80]
    # A kernel whose launching CPU event is a runtime call (cudaStreamIsCapturing around a
    # library's launch) is named by the kernel itself.
    return "eager_op", op_name if op_name and not op_name.startswith("cuda") else device_name[:80]


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, overlapping intervals merged into disjoint ones."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _covered(a: int, b: int, union: list[tuple[int, int]]) -> int:
    """How much of [a, b) the disjoint sorted intervals `union` cover."""
    import bisect

    covered = 0
    i = bisect.bisect_right(union, (a, 1 << 62)) - 1  # the last interval starting at or before a
    for s, e in union[max(i, 0) :]:
        if s >= b:
            break
        covered += max(min(e, b) - max(s, a), 0)
    return covered


def device_kernels_by_name(events: list[_KinetoEvent]) -> dict[str, list[float]]:
    """Every device kernel of a profiler session by its name: seconds per launch, in order.

    Kernels replayed inside a CUDA graph (torch.compile's mode="reduce-overhead") run no
    Python wrapper and so no range of ours; CUPTI still records each by its name, which is
    the Triton kernel's name."""
    cpu = torch.autograd.DeviceType.CPU
    out: dict[str, list[float]] = {}
    for e in events:
        if e.device_type() == cpu or e.linked_correlation_id() <= 0:
            continue
        name = e.name()
        if name.startswith(LABEL) or name.startswith("Memcpy") or name.startswith("Memset"):
            continue
        out.setdefault(name, []).append(e.duration_ns() / 1e9)
    return out


# CUDA runtime calls that make the CPU wait for the GPU (a `.item()` is a cudaMemcpyAsync to the
# host and a cudaStreamSynchronize), and the op that reads a tensor into a Python number.
_SYNCS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy")
_SCALAR_READ = "aten::_local_scalar_dense"


def host_syncs(
    events: list[_KinetoEvent], places: dict[int, str] | None = None
) -> tuple[int, int, int, dict[str, int]]:
    """(the CPU's waits for the GPU, reads of a device tensor into a Python number, device idle
    ns around the waits, those reads by the user's function they ran in) in a profiler
    session. A wait drains the GPU's queue: from the last kernel before it ends to the first
    kernel after it, the device has nothing to run. A read counts where a wait ends inside it:
    a CPU tensor's read (an eager optimizer's step counters, 52 a step in the blind set's
    `.item()` loop) waits for nothing. `places`: as for `outside_work`."""
    import bisect

    cpu = torch.autograd.DeviceType.CPU
    places = user_functions(events) if places is None else places
    waits: list[int] = []
    scalar_reads: list[tuple[int, int, str | None]] = []
    spans: list[tuple[int, int]] = []
    for e in events:
        name = e.name()
        if e.device_type() == cpu:
            if name in _SYNCS:
                waits.append(e.end_ns())
            elif name == _SCALAR_READ:
                scalar_reads.append((e.start_ns(), e.end_ns(), places.get(e.correlation_id())))
        elif e.linked_correlation_id() > 0 and not name.startswith(LABEL):
            spans.append((e.start_ns(), e.start_ns() + e.duration_ns()))
    waits.sort()
    reads = 0
    read_places: dict[str, int] = {}
    for start, end, where in scalar_reads:
        i = bisect.bisect_left(waits, start)
        if i < len(waits) and waits[i] <= end:
            reads += 1
            if where:
                read_places[where] = read_places.get(where, 0) + 1
    spans.sort()
    starts = [a for a, _ in spans]
    ends = sorted(b for _, b in spans)
    idle = 0
    for t in waits:
        i, j = bisect.bisect_left(starts, t), bisect.bisect_right(ends, t) - 1
        if i < len(starts) and j >= 0:
            idle += max(starts[i] - ends[j], 0)
    return len(waits), reads, idle, read_places


# CUDA runtime calls that give device memory back to the driver or ask it for more: in steady
# steps the caching allocator makes none; `torch.cuda.empty_cache()` in the loop makes them
# every step (and cudaFree waits for the device).
_ALLOCATOR = ("cudaMalloc", "cudaFree", "cudaMallocHost", "cudaFreeHost")


def allocator_calls(events: list[_KinetoEvent]) -> tuple[int, int]:
    """(calls to CUDA's allocator, ns the CPU spent in them) in a profiler session."""
    cpu = torch.autograd.DeviceType.CPU
    calls = ns = 0
    for e in events:
        if e.device_type() == cpu and e.name() in _ALLOCATOR:
            calls += 1
            ns += e.end_ns() - e.start_ns()
    return calls, ns


def function_event_times(prof: Any) -> Times:  # a torch.profiler.profile
    """The same times through the profiler's FunctionEvent tree (slow; the fallback)."""
    times: Times = {}
    for event in prof.events():
        if not event.name.startswith(LABEL):
            continue
        if getattr(event, "device_type", None) != torch.autograd.DeviceType.CPU:
            continue  # the GPU-side copy of the range
        role, _, name = event.name.removeprefix(LABEL).partition("::")
        micros = event.device_time_total
        if micros > 0:
            times.setdefault((role, name), []).append(micros / 1e6)
    return times


LaunchShape = tuple[tuple[int, ...], tuple[int, ...], int | None]


def launch_shapes(events: list[dict[str, Any]], known: set[str]) -> dict[str, LaunchShape]:
    """kernel name -> (grid, block, registers per thread), from chrome trace kernel events."""
    out: dict[str, LaunchShape] = {}
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
