"""Graph-break counts against Dynamo's own counter, on small CPU workloads (backend "eager")."""

from __future__ import annotations

import logging
import os

import compilescope
import pytest
import torch
from compilescope.model.capture import Capture
from compilescope.model.findings.ranked import findings
from compilescope.trace.graph_break_registry import load
from compilescope.views.view_data import capture_data
from torch._dynamo.utils import counters

pytestmark = pytest.mark.torch

log = logging.getLogger("compilescope.tests.break_counts")


def dynamo_breaks() -> int:
    """Dynamo's own count: break_graph_if_unsupported in torch/_dynamo/symbolic_convert.py adds
    one to counters["graph_break"] (keyed by message) per break it splits the graph at."""
    return sum(counters["graph_break"].values())


def fresh() -> None:
    counters.clear()
    torch._dynamo.reset()


def captured(fn, *args, **kwargs) -> tuple[Capture, int]:
    """Capture `fn(*args)` compiled with backend "eager"; the capture and Dynamo's count."""
    fresh()
    cap = compilescope.capture(fn, *args, backend="eager", backward=False, timings=False, **kwargs)
    return cap, dynamo_breaks()


def breaks(cap: Capture) -> int:
    return sum(len(c.graph_breaks) for c in cap)


def fallbacks(cap: Capture) -> list[str]:
    return [f.scope for c in cap for f in c.fallbacks]


# --- workloads ------------------------------------------------------------------------------
def prints(x):
    x = x + 1
    print("a print breaks the graph")
    return x * 2


def item_branch(x):
    if x.sum().item() > 0:  # .item() reads the data: a break at the call
        return x + 1
    return x - 1


def tolist(x):
    y = x * 2
    return y + len(y.tolist())


def builtin(x):
    x = x.sin()
    os.getpid()  # a C function Dynamo cannot trace
    return x + 1


def explicit(x):
    x = x.cos()
    torch._dynamo.graph_break()
    return x + 1


def _inner(x):
    x = x * 3
    torch._dynamo.graph_break()
    return x + 1


def nested(x):
    # Dynamo counts the break twice: inlined in `nested` (which breaks at the call), then in
    # `_inner`'s own frame, which Dynamo compiles when the call runs.
    return _inner(x + 1) - 1


def loop(x):
    for i in range(3):  # a break in a loop: Dynamo skips the whole frame
        x = x + i
        print(i)
    return x


def _guarded(x):
    try:  # a break inside a try block: no resume point, the whole frame runs eagerly
        print("inside try")
    except ValueError:
        pass
    return x + 1


def calls_guarded(x):
    return _guarded(x.sin()).cos()


def try_late(x):
    x = (x + 1).sin()
    try:  # the graph stops before the try block; the rest of the frame runs eagerly
        print("late")
        x = x + 1
    except ValueError:
        x = x - 1
    return x.cos()


def _logged(fn):
    def wrapper(*args, **kwargs):  # like transformers' forward wrappers (can_return_tuple)
        return fn(*args, **kwargs)

    return wrapper


class LoggingHead(torch.nn.Module):
    """GPT-2's pattern: a property that logs once (transformers' `loss_function` calls
    `logger.warning_once`), read in a wrapped forward."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    @property
    def scale(self) -> float:
        log.warning("no scale configured, using 2")
        return 2.0

    @_logged
    def forward(self, x):
        h = self.fc(x).relu()
        # Reading the property (LOAD_ATTR) cannot be resumed from in `forward`: torch logs
        # "cannot resume from" there, and counts the same break in `wrapper` and `scale`.
        return h * self.scale


WORKLOADS = {
    "print": (prints, 1),
    "item": (item_branch, 1),
    "tolist": (tolist, 1),
    "builtin": (builtin, 1),
    "graph_break()": (explicit, 1),
    "nested": (nested, 2),
    "loop": (loop, 0),
    "try in a callee": (calls_guarded, 1),
    "try late": (try_late, 0),
}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_one_record_per_break_dynamo_counts(name, capsys):
    fn, expected = WORKLOADS[name]
    cap, dynamo = captured(fn, torch.randn(4))
    capsys.readouterr()
    assert dynamo == expected, "the workload no longer breaks as it did on torch 2.13"
    assert breaks(cap) == dynamo, str(cap)
    # The same count in the text summary, the view and the findings.
    head = str(cap).splitlines()[0]
    if dynamo or fallbacks(cap):
        assert f", {dynamo} graph break" in head, head
    data = capture_data(cap)
    assert sum(len(c["breaks"]) for c in data["compiles"]) == dynamo
    found = findings(cap, load())
    assert sum(f.counts.breaks for f in found) == dynamo


@pytest.mark.parametrize(
    ("name", "scopes", "status"),
    [
        ("loop", ["frame"], "eager (fallback)"),
        ("try in a callee", ["frame"], "eager (fallback)"),
        ("try late", ["rest"], "restarted"),
    ],
)
def test_fallbacks_to_eager_are_not_breaks(name, scopes, status, capsys):
    fn, _ = WORKLOADS[name]
    cap, _ = captured(fn, torch.randn(4))
    capsys.readouterr()
    assert fallbacks(cap) == scopes
    (skipped,) = [c for c in cap if c.fallbacks]
    assert skipped.status == status
    what = skipped.fallbacks[0].what
    assert what in str(cap) and "failed:" not in str(cap)
    data = capture_data(cap)
    assert [f["scope"] for c in data["compiles"] for f in c["fallbacks"]] == scopes
    (finding,) = [f for f in findings(cap, load()) if f.kind in ("graph_break", "eager_frame")]
    frame = skipped.frame.function
    if scopes == ["frame"]:
        assert finding.kind == "eager_frame" and finding.counts.eager_frames == 1
        assert f"`{frame}` fall back to eager entirely" in finding.what
    else:
        assert finding.counts.partly_eager_frames == 1 and finding.counts.breaks == 0
        assert f"cuts the graph of `{frame}` short" in finding.what


def test_cannot_resume_is_folded_into_its_break_in_capturing(caplog):
    """GPT-2's case: one logging call, counted twice by Dynamo, logged three times."""
    torch.manual_seed(0)
    model = LoggingHead()
    fresh()
    with compilescope.capturing(real_steps=0, eager_steps=0) as handle:
        torch.compile(model, backend="eager")(torch.randn(2, 8))
    cap = handle.capture
    dynamo = dynamo_breaks()
    assert dynamo == 2
    assert breaks(cap) == dynamo, str(cap)
    assert fallbacks(cap) == ["rest"]  # `forward` cannot resume: the same call, not a break
    (rest,) = [c for c in cap if c.fallbacks]
    assert rest.frame.function == "forward"
    (f,) = [f for f in findings(cap, load()) if f.kind == "graph_break"]
    assert (f.counts.breaks, f.counts.partly_eager_frames) == (2, 1)
    assert "the rest of `forward` runs eagerly" in f.what
    assert "6 compile ids, 2 graph breaks, 1 fallback to eager" in str(cap).splitlines()[0]


def test_a_data_dependent_branch_is_a_break_dynamos_counter_leaves_out(capsys):
    """`if tensor:` splits the graph (a resume function follows), but torch logs it from
    jump_graph_break (torch/_dynamo/symbolic_convert.py), which adds nothing to
    counters["graph_break"]; torch._dynamo.explain() counts it. The capture keeps it."""

    def branch(x):
        x = x * 2
        if x.sum() > 0:
            return x + 1
        return x - 1

    cap, dynamo = captured(branch, torch.randn(4))
    fresh()
    explained = torch._dynamo.explain(branch)(torch.randn(4)).graph_break_count
    capsys.readouterr()
    assert (breaks(cap), dynamo, explained) == (1, 0, 1)
    assert any(c.frame.function.startswith("torch_dynamo_resume_in_branch") for c in cap)
