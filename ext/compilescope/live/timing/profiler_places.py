"""The user's function of each eager op in a profile: a profiler that keeps Python stacks, and reading them."""

from __future__ import annotations

import functools
import os
import re
import sys
from typing import TYPE_CHECKING, Any

import torch

from ...model.place import Place
from ...trace.notebook_cells import notebook_cell

if TYPE_CHECKING:
    from torch._C._autograd import _KinetoEvent  # the profiler's raw events (typed in torch's stub)


def profile_with_stacks(cuda: bool = True) -> Any:
    """A CPU and CUDA profiler whose ops carry their Python stacks: `with_stack` alone fills
    them on no torch we run on (2.11 to 2.14 give empty stacks); the experimental config's
    `verbose` does (torch/csrc/profiler/kineto_shim, stacks kept only when verbose)."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    try:
        config = torch._C._profiler._ExperimentalConfig(verbose=True)
    except Exception:  # pragma: no cover - guard against profiler API drift: no places
        return torch.profiler.profile(activities=activities)
    return torch.profiler.profile(
        activities=activities, with_stack=True, experimental_config=config
    )


# Python functions that are not the user's: torch, installed packages, the standard library,
# compilescope, built-ins. Paths as the profiler's Python tracer writes them ("torch/nn/...").
_LIBRARY = ("torch/", "<built-in", "<frozen", "<string>", "compilescope/")
_LIBRARY_IN = ("/site-packages/", "/dist-packages/", "/lib/python", "/compilescope/", "/torch/")


# Inductor's generated modules: "c" and a 51-character hash, in a two-character folder.
_GENERATED = re.compile(r"(^|/)[a-z0-9]{2}/c[a-z0-9]{40,}\.py$")


def user_function(label: str) -> str | None:
    """The Python tracer's "path(line): fn" as "dir/file.py:line fn" (a notebook cell's by its
    cell, as every place is labelled) when it is the user's code, else None. The line is the
    function's first line: the tracer names functions, not lines."""
    path, sep, rest = label.partition("(")
    if not sep or path.startswith(_LIBRARY) or any(m in path for m in _LIBRARY_IN):
        return None
    if _GENERATED.search(path):
        return None  # Inductor's output code ("az/cazak....py: call"), not the user's
    line, sep, fn = rest.partition("): ")
    if not sep or not line.isdigit():
        return None
    # "dir/file.py:12", or "cell [3] line 2": the one label of a place (model/place.py).
    return f"{Place(path, int(line), fn, cell=notebook_cell(path)).label()} {fn}"


def user_functions(events: list[_KinetoEvent]) -> dict[int, str]:
    """correlation id of each CPU op -> the innermost user function it ran in, from a profile
    by `profile_with_stacks`; empty without stacks. Never raises: a place is a nicety, not the
    timing."""
    try:
        return _by_op_stacks(events)
    except Exception:  # pragma: no cover - guard against profiler API drift
        return {}


def _by_op_stacks(events: list[_KinetoEvent]) -> dict[int, str]:
    """An op's event holds its Python stack, innermost first, under `profile_with_stacks`."""
    cpu = torch.autograd.DeviceType.CPU
    out: dict[int, str] = {}
    for e in events:
        if e.device_type() != cpu or e.linked_correlation_id() != 0:
            continue
        for frame in e.stack():
            where = user_function(frame)
            if where is not None:
                out[e.correlation_id()] = where
                break
    return out


def host_op_time(
    events: list[_KinetoEvent], places: dict[int, str], steps: int, exclude: str
) -> list[tuple[str, float, list[tuple[str, float]]]]:
    """The CPU's time per step in ATen ops, by the user's function they ran in, most first,
    with that function's ops by time: where a host-bound step spends its host time (a
    dataset's `__getitem__` run inline, `torch.randn` on the CPU). Only outermost ops count
    (an op's calls of other ops are in its time), and none inside a range whose name starts
    with `exclude` (compilescope's ranges around compiled kernels)."""
    cpu = torch.autograd.DeviceType.CPU
    by_thread: dict[int, list[tuple[int, int, int, str]]] = {}
    for e in events:
        if e.device_type() != cpu or e.linked_correlation_id() != 0 or e.is_async():
            continue
        name = e.name()
        if name.startswith(("aten::", exclude)):
            by_thread.setdefault(e.start_thread_id(), []).append(
                (e.start_ns(), e.end_ns(), e.correlation_id(), name)
            )
    totals: dict[str, dict[str, int]] = {}  # function -> op -> ns
    for ops in by_thread.values():
        ops.sort(key=lambda op: (op[0], -op[1]))  # an enclosing op before what it encloses
        end = -1
        for start, stop, correlation, name in ops:
            if start < end:
                continue  # inside the last outermost op or range
            end = stop
            where = None if name.startswith(exclude) else places.get(correlation)
            if where is not None:
                by_op = totals.setdefault(where, {})
                by_op[name] = by_op.get(name, 0) + stop - start
    per = 1e9 * max(steps, 1)
    out = [
        (
            where,
            sum(by_op.values()) / per,
            sorted(((op, ns / per) for op, ns in by_op.items()), key=lambda item: -item[1]),
        )
        for where, by_op in totals.items()
    ]
    return sorted(out, key=lambda item: -item[1])


# Calls out of the user's code that run the step itself (a module's forward, backward, the
# optimizer, autocast, torch.compile's frames): their time is the budget's graphs and parts.
_STEP_ITSELF = (
    "torch/nn/modules/module.py",
    "torch/_tensor.py",
    "torch/autograd/",
    "torch/optim/",
    "torch/_dynamo/",
    "torch/amp/",
    "torch/utils/_contextlib.py",
    "torch/profiler/",
    "compilescope/",
)
# A module's own methods that are work, not its forward: moving or copying it every step.
_MODULE_WORK = ("to", "cuda", "cpu", "_apply", "half", "float", "double", "state_dict")


def python_call_time(prof: Any, steps: int) -> list[tuple[str, str, float]]:
    """(the user's function, the call it made, seconds per step) for each call the user's code
    makes into other code (a library's function or a built-in: `gc.collect`, `torch.save`, a
    tokenizer), from the profile's event tree (the Python tracer's calls, nested; torch 2.11's
    flat event list has none of them), most first: where a host-bound step's host time goes
    when it is not in ATen ops. Calls that run the step itself (modules, backward, the
    optimizer, torch.compile's frames) and C methods (a tensor op's binding: its ATen op is in
    `host_op_time`) are left out. Never raises."""
    try:
        roots = prof.profiler.kineto_results.experimental_event_tree()
        return _python_calls(roots, steps)
    except Exception:  # pragma: no cover - guard against profiler API drift
        return []


def _python_calls(roots: list[Any], steps: int) -> list[tuple[str, str, float]]:
    totals: dict[tuple[str, str], int] = {}
    stack: list[tuple[Any, str | None]] = [(root, None) for root in roots]
    while stack:
        event, caller = stack.pop()
        python = str(event.tag).endswith(("PyCall", "PyCCall"))
        try:
            name = event.name if python else ""
        except UnicodeDecodeError:  # torch 2.11 gives some events undecodable names
            python, name = False, ""
        mine = _users(name) if python else None
        if caller is not None and python and mine is None:
            call = _call_name(name)
            if call:
                key = (caller, call)
                totals[key] = totals.get(key, 0) + event.duration_time_ns
        # A call's children belong to the innermost user function above them.
        inner = mine if mine is not None else (caller if not python else None)
        stack.extend((child, inner) for child in event.children)
    per = 1e9 * max(steps, 1)
    out = [(where, call, ns / per) for (where, call), ns in totals.items()]
    return sorted(out, key=lambda item: -item[2])


@functools.lru_cache(maxsize=4096)
def _users(label: str) -> str | None:
    """user_function(label), but None for a library the tracer names by a path relative to
    its sys.path entry ("transformers/...", "_pytest/python.py", "typing.py"): the entry it is
    found under says whether it is an installed package or the standard library."""
    where = user_function(label)
    path = label.partition("(")[0]
    if where is None or os.path.isabs(path):
        return where
    for entry in sys.path:
        if entry and os.path.exists(os.path.join(entry, path)):
            library = any(m in entry + "/" for m in _LIBRARY_IN) or entry.endswith(".zip")
            return None if library else where
    return where


def _call_name(label: str) -> str:
    """The tracer's label as a call's name ("gc.collect", "torch/serialization.py save"), or ""
    for a call that runs the step itself or a C method."""
    if label.startswith("<built-in function "):
        name = label.removeprefix("<built-in function ").rstrip(">")
        return _BUILTINS.get(name, name)
    if label.startswith("<"):
        return ""  # a C method: a tensor op's binding (its ATen op is counted), dict.items
    path, _, rest = label.partition("(")
    fn = rest.partition("): ")[2]
    if not fn:
        return ""  # "nn.Module: Linear_0", the tracer's mark of a module's call: the step
    if path.startswith(_STEP_ITSELF) or any(f"/{p}" in path for p in _STEP_ITSELF):
        if not (path.endswith("torch/nn/modules/module.py") and fn in _MODULE_WORK):
            return ""
    short = path.split("site-packages/")[-1]
    return f"{fn} ({short})"


# Built-ins by the module a user imports them from.
_BUILTINS = {"collect": "gc.collect", "sleep": "time.sleep", "print": "print"}
