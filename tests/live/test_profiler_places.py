"""The user's function of each eager op, from a real profile taken with_stack (issue 42)."""

from __future__ import annotations

import pytest
import torch
from compilescope.live.timing.profiler_places import (
    profile_with_stacks,
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
