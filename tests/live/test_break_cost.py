"""What a graph break costs in the user's own steps: the time between the graphs it splits, so
that break findings rank by ms per step (issue 31 item g)."""

from __future__ import annotations

import time

import compilescope
import pytest
import torch
from compilescope.model.capture import Capture

pytestmark = [pytest.mark.torch, pytest.mark.timing]  # a break's cost against a sleep

SLEEP_S = 0.004


class SlowBreak(torch.nn.Module):
    """A forward that sleeps between its layers: Dynamo breaks the graph at `time.sleep`."""

    def __init__(self, sleep: bool) -> None:
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 16), torch.nn.Linear(16, 16)
        self.sleep = sleep

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.a(x).relu()
        if self.sleep:
            time.sleep(SLEEP_S)
        else:
            torch._dynamo.graph_break()  # a break with nothing between the graphs
        return self.b(h)


def _capture(sleep: bool) -> Capture:
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = SlowBreak(sleep)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    compiled = torch.compile(model)
    x = torch.randn(8, 16)
    with compilescope.capturing() as cap:
        for _ in range(30):
            compiled(x).sum().backward()
            opt.step()
            opt.zero_grad()
    return cap.capture


@pytest.fixture(scope="module")
def threads():
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # steadier steps on 2 shared cores
    yield
    torch.set_num_threads(before)


def test_a_break_costs_the_time_between_the_graphs_it_splits(threads):
    capture = _capture(sleep=True)
    real = capture.timings.real_steps
    assert real is not None and real.gaps, real
    found = compilescope.findings(capture)
    brk = next(f for f in found if f.kind == "graph_break")
    # The sleep is between the two forward graphs; the step is the sleep and a little more.
    assert SLEEP_S * 0.9 <= brk.cost.step_s <= real.compiled.median_s, (brk.cost, real.compiled)
    assert brk.cost.share > 0.5
    assert "between the graphs each break splits" in brk.cost.note
    assert "at most what removing the break saves" in brk.cost.note  # an upper bound
    assert "ms per step" in compilescope.model.findings.ranked.text(found)
    # most of the step: first (after the verdict, where the compiled step measured slower)
    assert [f for f in found if f.kind not in ("compiled_slower", "compiled_not_faster")][0] is brk
    assert "between graphs 0/0_1 -> 1/0 (forward)" in str(capture)  # in the text summary
    # Kept in the capture's JSON.
    again = Capture.from_json(capture.to_json())
    assert again.timings.real_steps.gaps == real.gaps


def test_a_break_with_nothing_between_its_graphs_costs_little(threads):
    capture = _capture(sleep=False)
    real = capture.timings.real_steps
    assert real is not None
    brk = next(f for f in compilescope.findings(capture) if f.kind == "graph_break")
    assert brk.cost.step_s is not None and brk.cost.step_s < SLEEP_S / 4, brk.cost
