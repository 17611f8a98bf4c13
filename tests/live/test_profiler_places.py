"""The user's function of each eager op, from a real profile taken with_stack (issue 42)."""

from __future__ import annotations

import pytest
import torch
from compilescope.live.timing.profiler_places import (
    host_op_time,
    profile_with_stacks,
    python_call_time,
    user_function,
    user_functions,
)


def scale_then_sum(x: torch.Tensor) -> torch.Tensor:
    return (x * 2).sum()


def outer(x: torch.Tensor) -> torch.Tensor:
    return scale_then_sum(x) + torch.nn.functional.relu(x).mean()


def test_ops_get_the_innermost_user_function_not_torchs() -> None:
    x = torch.randn(64)
    with profile_with_stacks(cuda=False) as prof:  # what the real-step timer's split uses
        outer(x)
    events = prof.profiler.kineto_results.events()
    places = user_functions(events)
    by_op: dict[str, set[str]] = {}
    for e in events:
        if e.correlation_id() in places:
            by_op.setdefault(e.name(), set()).add(places[e.correlation_id()])
    first = scale_then_sum.__code__.co_firstlineno
    (mul,) = by_op["aten::mul"]  # the file as model/place.py labels it: "dir/file.py:line"
    assert mul.endswith(f"test_profiler_places.py:{first} scale_then_sum"), mul
    # relu runs inside torch.nn.functional, a library: it belongs to the user's `outer`
    (relu,) = by_op["aten::relu"]
    assert relu.endswith(f"test_profiler_places.py:{outer.__code__.co_firstlineno} outer"), relu


def load_sample(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.avg_pool2d(x.unsqueeze(0), 3, stride=1, padding=1).squeeze(0)


def test_host_time_goes_to_the_function_whose_outermost_ops_take_it() -> None:
    x = torch.randn(3, 256, 256)
    with profile_with_stacks(cuda=False) as prof:
        for _ in range(4):
            load_sample(x)
            with torch.profiler.record_function("compilescope::0/0|forward::k"):
                scale_then_sum(x)  # inside one of our ranges: not the user's host time
    events = prof.profiler.kineto_results.events()
    found = host_op_time(events, user_functions(events), 4, "compilescope::")
    times = {where: seconds for where, seconds, _ in found}
    assert found[0][2][0][0] == "aten::avg_pool2d"  # its costliest op
    (where,) = times  # avg_pool2d's inner ops (empty, ...) are in its own time, not again
    assert where.endswith(
        f"test_profiler_places.py:{load_sample.__code__.co_firstlineno} load_sample"
    )
    pooled = [e for e in events if e.name() == "aten::avg_pool2d"]
    assert len(pooled) == 4
    assert times[where] >= sum(e.duration_ns() for e in pooled) / 1e9 / 4 * 0.99


def test_library_and_malformed_labels_are_nobodys() -> None:
    assert user_function("/home/me/train.py(12): step") == "me/train.py:12 step"
    assert user_function("torch/nn/modules/module.py(1750): _call_impl") is None
    assert user_function("/usr/lib/python3.11/site-packages/transformers/x.py(3): f") is None
    assert user_function("<built-in method sum of Tensor object at 0x1>") is None
    assert user_function("/work/ext/compilescope/live/x.py(3): f") is None
    assert user_function("no parenthesis") is None
    # A notebook cell's function is named by its cell, as everywhere else in compilescope.
    assert user_function("<ipython-input-12-0a1b2c>(3): step") == "cell [12] line 3 step"


def test_without_stacks_nothing_is_placed() -> None:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        outer(torch.randn(8))
    assert user_functions(prof.profiler.kineto_results.events()) == {}


class _OpWithStack:
    """An op's event as torch 2.11's profiler gives it: its Python stack, innermost first."""

    def __init__(self, cid: int, stack: list[str]) -> None:
        self.cid, self._stack = cid, stack

    def device_type(self):
        return torch.autograd.DeviceType.CPU

    def linked_correlation_id(self) -> int:
        return 0

    def correlation_id(self) -> int:
        return self.cid

    def stack(self) -> list[str]:
        return self._stack


def test_an_older_torchs_op_stacks_give_the_same_places() -> None:
    events = [
        _OpWithStack(
            7,
            [
                "torch/nn/functional.py(1500): relu",
                "/home/me/train.py(30): step",
                "/home/me/train.py(1): <module>",
            ],
        ),
        _OpWithStack(8, ["torch/nn/functional.py(1500): relu"]),
    ]
    # No is_python_function on these events: the stacks are read instead.
    assert user_functions(events) == {7: "me/train.py:30 step"}  # type: ignore[arg-type]


def test_our_profiles_warning_is_not_said_as_torchs():
    # torch 2.11+ warns at every one-cycle profile's start ("Profiler clears events at the end
    # of each cycle"); it showed under "torch said" in an H200 capture. It is ours, not the
    # user's: start_profile keeps it out, and a plain start shows the check can see it.
    from compilescope.live.timing.profiler_times import start_profile
    from compilescope.live.torch_words import listening
    from torch.profiler import profiler

    def said(start) -> list[str]:
        profiler._WARNINGS_SHOWN.clear()  # torch warns once per process
        with listening() as words:
            prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
            start(prof)
            torch.ones(2).add_(1)
            prof.stop()
        return [m.message for m in words.messages()]

    if not hasattr(profiler, "_WARNINGS_SHOWN"):
        pytest.skip("this torch has no profiler warn-once set")
    plain = said(lambda p: p.start())
    if not any("Profiler clears events" in m for m in plain):
        pytest.skip("this torch does not warn at a profile's start")
    assert not any("Profiler clears events" in m for m in said(start_profile))


class _Event(_OpWithStack):
    """A profiler event with a name and a span in ns (host_syncs reads those)."""

    def __init__(self, cid: int, name: str, span: tuple[int, int], stack: list[str]) -> None:
        super().__init__(cid, stack)
        self._name, self._span = name, span

    def name(self) -> str:
        return self._name

    def start_ns(self) -> int:
        return self._span[0]

    def end_ns(self) -> int:
        return self._span[1]


def test_reads_of_device_tensors_are_placed_in_the_users_function() -> None:
    from compilescope.live.timing.profiler_times import host_syncs

    block = ["torch/_tensor.py(40): __bool__", "/home/me/model.py(61): forward"]
    read, wait = "aten::_local_scalar_dense", "cudaStreamSynchronize"
    events = [
        _Event(1, read, (100, 200), block),
        _Event(2, wait, (150, 190), []),  # inside read 1: a device tensor's read
        _Event(3, read, (300, 400), block),
        _Event(4, wait, (350, 390), []),
        _Event(5, read, (500, 600), ["/home/me/train.py(90): step"]),
        _Event(6, wait, (550, 590), []),
        _Event(7, read, (700, 800), ["torch/nn/functional.py(9): f"]),  # nobody's function
        _Event(8, wait, (750, 790), []),
        # A CPU tensor's read (an eager optimizer's step counter): it waits for nothing.
        _Event(9, read, (900, 950), ["/home/me/train.py(90): step"]),
    ]
    waits, reads, _idle, places = host_syncs(events)  # type: ignore[arg-type]
    assert (waits, reads) == (4, 4)
    assert places == {"me/model.py:61 forward": 2, "me/train.py:90 step": 1}


def test_calls_to_cudas_allocator_are_counted_with_their_time() -> None:
    from compilescope.live.timing.profiler_times import allocator_calls

    events = [
        _Event(1, "cudaFree", (100, 400), []),
        _Event(2, "cudaMalloc", (500, 550), []),
        _Event(3, "cudaLaunchKernel", (600, 610), []),
        _Event(4, "aten::empty", (700, 720), []),
    ]
    assert allocator_calls(events) == (2, 350)  # type: ignore[arg-type]


def a_step_with_host_work(model: torch.nn.Module, x: torch.Tensor) -> None:
    import gc
    import io

    model(x).sum().backward()
    torch.save(model.state_dict(), io.BytesIO())  # a checkpoint every step
    gc.collect()
    model.to("cpu")


def test_the_users_calls_into_other_code_are_timed_and_the_steps_own_are_not() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    x = torch.randn(8, 64)
    with profile_with_stacks(cuda=False) as prof:
        for _ in range(2):
            a_step_with_host_work(model, x)
    calls = python_call_time(prof, steps=2)
    where = f"test_profiler_places.py:{a_step_with_host_work.__code__.co_firstlineno}"
    named = {
        call: seconds
        for at, call, seconds in calls
        if at.endswith(f"{where} a_step_with_host_work")
    }
    assert "gc.collect" in named and named["gc.collect"] > 0, calls
    assert "save (torch/serialization.py)" in named, calls
    assert "to (torch/nn/modules/module.py)" in named, calls  # moving a module is work
    assert "state_dict (torch/nn/modules/module.py)" in named, calls
    # The step itself (the module's forward, backward) and tensor methods are the budget's.
    assert not any("_wrapped_call_impl" in c or "backward" in c or c.startswith("<") for c in named)
    assert [s for _, _, s in calls] == sorted((s for _, _, s in calls), reverse=True)
    # pytest's and the standard library's frames, named by paths relative to their sys.path
    # entry ("_pytest/python.py", "typing.py"), are libraries: never a caller.
    assert all("test_profiler_places.py" in at for at, _, _ in calls), calls


def test_inductors_generated_modules_are_not_the_users_code() -> None:
    # The H200 probe named `az/cazak...py:46 call` (a compiled graph's output code) as a caller.
    generated = "az/cazakay2oarxx5ycsw2a5x65z5ezjs2t6ix2ulmklpsko24z7src.py(46): call"
    assert user_function(generated) is None
    assert user_function("/tmp/ind/" + generated) is None
    assert user_function("train.py(12): step") == "train.py:12 step"
