"""The user's own steps in the Timings tab, in real Chromium (the offline report of a capturing() loop)."""

from __future__ import annotations

import compilescope
import pytest
import torch

from .conftest import artifacts

pytestmark = [pytest.mark.browser, pytest.mark.torch]


def _loop(steps: int, optimizer: bool = True) -> None:
    torch.manual_seed(0)
    # Each test compiles the same forward for a new module: start from fresh Dynamo caches, or
    # the recompile limit leaves later tests' steps eager, with nothing compiled to time.
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    compiled = torch.compile(model)
    for _ in range(steps):
        compiled(torch.randn(8, 32)).pow(2).mean().backward()
        if optimizer:
            opt.step()
            opt.zero_grad()


def _timings_tab(page, capture, path):
    compilescope.to_html(capture, path)
    page.goto(f"file://{path}")
    page.wait_for_selector(".cs-root[data-ready='1']", timeout=20_000)
    page.click("button[data-tab='timings']")


@pytest.mark.timing  # the budget bar's parts are measured: under load one can shrink out of it
def test_the_timings_tab_opens_with_the_steps_as_they_ran(page, tmp_path):
    with compilescope.capturing() as cap:
        _loop(30)
    real = cap.capture.timings.real_steps
    assert real is not None and real.eager is not None
    _timings_tab(page, cap.capture, tmp_path / "steps.html")
    box = page.locator("[data-real-steps]:visible")
    assert box.locator("h4").inner_text() == "Your steps as they ran (cpu; median of 10)"
    wall = box.locator("[data-real-wall]").inner_text()
    assert wall.startswith("per step: compiled ") and "eager " in wall and "x)" in wall
    # The step budget: one row per compiled graph, the other parts, and the whole step, whose
    # share is 100%; the parts' shares add up to it (issue 42), and a stacked bar draws them.
    rows = box.locator("table.cs-real-split tr")
    labels = [rows.nth(i).locator("td").first.inner_text() for i in range(1, rows.count())]
    assert "compiled graph 0/0 (forward)" in labels and "compiled graph 0/0 (backward)" in labels
    assert sum(label.startswith("compiled graph ") for label in labels) == len(real.graphs) == 2
    assert labels[-1] == "whole step"
    assert rows.nth(rows.count() - 1).locator("td").nth(2).inner_text() == "100.0%"
    parts = box.locator("tr[data-budget-kind]:not([data-budget-kind='step'])")
    shares = [
        float(parts.nth(i).locator("td").nth(2).inner_text().rstrip("%"))
        for i in range(parts.count())
    ]
    assert abs(sum(shares) - 100.0) < 0.5, shares
    segments = box.locator(".cs-budget-bar span")
    assert segments.count() >= 3 and box.locator(".cs-budget-bar").bounding_box()["width"] > 100
    page.screenshot(path=str(artifacts() / "step_budget.png"))
    # capturing() re-runs no single graph: nothing may speak of synthetic figures.
    assert "synthetic" not in box.inner_text()
    assert page.errors == []


def test_a_loop_without_optimizer_steps_says_why_it_was_not_timed(page, tmp_path):
    with compilescope.capturing() as cap:
        _loop(4, optimizer=False)
    _timings_tab(page, cap.capture, tmp_path / "nosteps.html")
    note = page.locator("[data-real-steps-note]:visible").inner_text()
    assert note.startswith("Your steps as they ran: not timed (no optimizer.step() ran")
    assert page.locator("[data-real-steps]").count() == 0
    # Not "timings were turned off": the steps were followed, and the note says what happened.
    assert "synthetic" not in note and "turned off" not in page.locator(".cs-root").inner_text()
    assert page.errors == []
