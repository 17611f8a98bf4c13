"""The split of the user's real steps: each compiled kernel's time by graph, the device's busy
time, the waits for it and the gaps between graphs, from one window of wrapped steps."""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Any

from ...model.kernel import OutputCode
from ...model.measured.graph_gaps import gaps_between_graphs
from ...model.measured.timing import (
    GraphGap,
    GraphShare,
    HostCall,
    HostOp,
    HostTime,
    KernelTiming,
    ReadPlace,
    Sample,
)
from .kernel_timer import CallLog
from .profiler_places import host_op_time, python_call_time, user_functions
from .profiler_times import (
    LABEL,
    allocator_calls,
    device_kernels_by_name,
    device_totals,
    host_syncs,
    kernel_times_from_kineto,
    outside_work,
)

REPLAYED = "real steps, torch.profiler (CUDA graph replay)"
SEP = "|"  # compile id and role in one profiler label: compilescope::<cid>|<role>::<kernel>
_HOST_PLACES = 5  # the user's functions kept with their host time: the first few say where
_HOST_OPS = 3  # ... and each one's costliest ops: what it does there


def with_role(code: OutputCode, cid: str) -> OutputCode:
    """The output code with its role labelled by its compile id too, for the wrappers."""
    return replace(code, role=f"{cid}{SEP}{code.role or 'forward'}")


def by_graph(logs: list[dict[tuple[str, str], CallLog]]) -> dict[tuple[str, str, str], CallLog]:
    """(compile id, role, kernel) -> what its wrapper saw, from the wrappers' (label, kernel)."""
    out = {}
    for each in logs:
        for (label, name), log in each.items():
            cid, _, role = label.partition(SEP)
            out[(cid, role, name)] = log
    return out


def kernel_figures(
    logs: dict[tuple[str, str, str], CallLog], prof: Any, steps: int
) -> tuple[list[KernelTiming], list[GraphShare]]:
    """Each kernel's time in the steps, and each graph's share per step (GPU: the profiler's
    device times, by range, then by name for kernels replayed in CUDA graphs)."""
    replayed: set[tuple[str, str, str]] = set()
    if prof is not None:  # GPU: the kernels' device time, from the profiler's ranges
        events = prof.profiler.kineto_results.events()
        times, _ = kernel_times_from_kineto(events)
        for (label, name), values in times.items():
            cid, _, role = label.partition(SEP)
            log = logs.get((cid, role, name))
            if log is not None:
                log.times = [v for v in values if v > 0]
        replayed = _replayed(logs, device_kernels_by_name(events))
    per_graph: dict[tuple[str, str], list[float]] = {}
    kernels = []
    for (cid, role, name), log in sorted(logs.items()):
        if not log.times:
            continue
        calls = log.times
        launches = len(calls) if (cid, role, name) in replayed else log.calls
        # a median call times the calls per step: one slow call (a page fault, another
        # process) does not inflate the step's share
        per_step = statistics.median(calls) * launches / max(steps, 1)
        per_graph.setdefault((cid, role), []).append(per_step)
        if prof is None:
            source = "real steps, wall clock"
        elif (cid, role, name) in replayed:
            source = REPLAYED
        else:
            source = "real steps, torch.profiler"
        kernels.append(
            KernelTiming(
                cid,
                name,
                Sample(statistics.median(calls), min(calls), max(calls), len(calls)),
                launches / steps,
                source=source,
                role=role,
                bytes_per_call=log.bytes_per_call,
                flops_per_call=log.flops_per_call,
            )
        )
    shares = [
        GraphShare(cid, role, sum(values), len(values))
        for (cid, role), values in sorted(per_graph.items())
    ]
    return kernels, shares


def device_split(prof: Any, wall: float, graphs_s: float, steps: int) -> dict[str, Any]:
    """busy_s, outside_graphs_s, between_s and the waits for the device, per step; they add up
    to `wall` with `graphs_s`. Without a profile (a CPU), what is not a compiled kernel is one
    remainder."""
    if prof is None:
        return {"busy_s": None, "outside_graphs_s": max(wall - graphs_s, 0.0), "between_s": 0.0}
    events = prof.profiler.kineto_results.events()
    busy_ns, total_ns = device_totals(events)
    busy = busy_ns / 1e9 / steps
    places = user_functions(events)  # read once: every op's Python stack
    waits, reads, idle_ns, read_places = host_syncs(events, places)
    malloc_calls, malloc_ns = allocator_calls(events)
    outside = max(total_ns / 1e9 / steps - graphs_s, 0.0)
    # Device time in parallel streams can exceed the union: the split keeps the union.
    outside = max(min(outside, busy - graphs_s), 0.0)
    return {
        "busy_s": busy,
        "outside_graphs_s": outside,
        "between_s": wall - graphs_s - outside,
        "syncs_per_step": waits / steps,
        "scalar_reads_per_step": reads / steps,
        "sync_idle_s": idle_ns / 1e9 / steps,
        "read_places": tuple(
            ReadPlace(where, n / steps)
            for where, n in sorted(read_places.items(), key=lambda item: -item[1])
        ),
        "outside": tuple(outside_work(events, steps, places)),
        "host_time": tuple(
            HostTime(where, seconds, tuple(HostOp(op, s) for op, s in ops[:_HOST_OPS]))
            for where, seconds, ops in host_op_time(events, places, steps, LABEL)[:_HOST_PLACES]
        ),
        "host_calls": tuple(
            HostCall(where, call, seconds)
            for where, call, seconds in python_call_time(prof, steps)[:_HOST_PLACES]
        ),
        "allocator_calls_per_step": malloc_calls / steps,
        "allocator_s": malloc_ns / 1e9 / steps,
    }


def graph_gaps(timeline: list[tuple[str, float, float]], steps: int) -> tuple[GraphGap, ...]:
    """The gaps between graphs from the wrappers' host clock: (label, began, ended) per call."""
    calls = []
    for label, began, ended in timeline:
        cid, _, role = label.partition(SEP)
        calls.append((cid, role, began, ended))
    return gaps_between_graphs(calls, steps)


def _replayed(
    logs: dict[tuple[str, str, str], CallLog], by_name: dict[str, list[float]]
) -> set[tuple[str, str, str]]:
    """Kernels no wrapper saw but the profiler did (replayed in a CUDA graph): their logs get
    the profiler's times by name, where the name is one kernel's alone among the unseen.

    A kernel whose wrapper ran, or whose name a timed kernel also has, is not one: graphs that
    did not run in these steps share kernel names with those that did (a model's 12 blocks
    broken by an `if` on a tensor: the resume graphs' compiles `1/0`, `1/1` name their kernels
    alike), and read as replayed, "already CUDA graphs", on a default-mode step."""
    timed = {key[2] for key, log in logs.items() if log.times}
    unseen = [
        key
        for key, log in logs.items()
        if not log.times and not log.calls and key[2] in by_name and key[2] not in timed
    ]
    names = [key[2] for key in unseen]
    found = set()
    for key in unseen:
        if names.count(key[2]) == 1:
            logs[key].times = [v for v in by_name[key[2]] if v > 0]
            found.add(key)
    return found
