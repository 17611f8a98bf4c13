"""The gaps between compiled graphs in a step, from the order their kernels ran in."""

from __future__ import annotations

import pytest
from compilescope.model.measured.graph_gaps import gaps_between_graphs


def test_a_break_splits_the_forward_and_the_backward_into_two_graphs_each():
    # Two steps of: graph 0/0_1 (forward), 3 ms of eager code, graph 1/0 (forward); the loss;
    # backward 1/0, 0.5 ms of autograd, backward 0/0_1.
    calls = []
    for step in range(2):
        t = step * 1.0
        calls += [
            ("0/0_1", "forward", t + 0.000, t + 0.001),
            ("0/0_1", "forward", t + 0.001, t + 0.002),  # one run: no gap inside a graph
            ("1/0", "forward", t + 0.005, t + 0.006),
            ("1/0", "backward", t + 0.010, t + 0.011),
            ("0/0_1", "backward", t + 0.0115, t + 0.012),
        ]
    gaps = {(g.before, g.after, g.role): g for g in gaps_between_graphs(calls, steps=2)}
    assert set(gaps) == {("0/0_1", "1/0", "forward"), ("1/0", "0/0_1", "backward")}
    forward = gaps[("0/0_1", "1/0", "forward")]
    assert forward.seconds == pytest.approx(0.003) and forward.count == 1.0
    assert gaps[("1/0", "0/0_1", "backward")].seconds == pytest.approx(0.0005)


def test_no_gap_between_roles_or_inside_one_graph_and_unordered_calls_are_sorted():
    calls = [
        ("0/0", "backward", 0.010, 0.011),  # the loss and autograd between: not a graph gap
        ("0/0", "forward", 0.000, 0.001),
        ("0/0", "forward", 0.004, 0.005),  # the same graph again (a block called twice)
    ]
    assert gaps_between_graphs(calls, steps=1) == ()
    assert gaps_between_graphs([], steps=0) == ()
