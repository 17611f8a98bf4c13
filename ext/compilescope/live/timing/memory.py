"""Peak memory of one run: the CUDA allocator's peak, or on a CPU the profiler's allocation events."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch


def peak_bytes(fn: Callable[..., object], args: list[object], device: str) -> int | None:
    """Bytes one run allocates at its peak above what was allocated before it."""
    if device == "cpu":
        return cpu_peak_bytes(fn, args)
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


def cpu_peak_bytes(fn: Callable[..., object], args: list[object]) -> int | None:
    """The CPU allocator keeps no peak, but under the profiler with profile_memory every
    allocation and free is an event carrying the running total ("Total Allocated"): the peak of
    that total, less where it stood before the first event, is the run's peak. None when the
    profiler recorded no CPU memory events (nothing to read, so nothing to claim)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn(*args)
        del result
    return peak_from_memory_events(chrome_trace_events(prof))


def chrome_trace_events(prof: torch.profiler.profile) -> list[dict[str, Any]]:
    """The profiler's chrome trace events: the only place it keeps allocation totals and
    kernel launch shapes (its Python events carry neither)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.json"
        prof.export_chrome_trace(str(path))
        events: list[dict[str, Any]] = json.loads(path.read_text()).get("traceEvents", [])
        return events


def peak_from_memory_events(events: list[dict[str, Any]]) -> int | None:
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
