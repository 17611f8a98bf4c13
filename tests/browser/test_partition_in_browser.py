"""The partition pane in real Chromium (offline report): activation memory, the sweep chart,
recomputed nodes marked in the partition graph."""

from __future__ import annotations

import compilescope
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.torch]


@pytest.fixture(scope="module")
def swept():
    import compilescope
    import torch
    from workloads import MLPBlock

    torch.manual_seed(0)
    cap = compilescope.capture(MLPBlock(), torch.randn(16, 32), backend="aot_eager", timings=False)
    next(c for c in cap if c.partition).budget_sweep()
    return cap


def test_partition_pane_shows_activation_memory_and_the_sweep(page, swept, tmp_path):
    path = compilescope.to_html(swept, tmp_path / "report.html")
    page.goto(f"file://{path}")
    page.wait_for_selector(".cs-root[data-ready='1']", timeout=20_000)
    page.click("button[data-tab='graphs']")
    page.click("button.cs-stage[data-stage='partition']")
    page.click("[data-fold='saved']:visible > summary")  # folded to one line under the graph
    head = page.locator(".cs-partition-head:visible").inner_text()
    assert head.startswith("activation memory ") and "recomputes" in head
    # Measured over one run of the compiled forward, beside the prediction (issue 21).
    held = page.locator(".cs-held:visible").inner_text()
    assert held.startswith("held by the compiled code: ") and "as the partition predicts" in held
    # Saved tensors say what they are: inputs and parameters apart from activations.
    kinds = page.locator(".cs-saved-row:visible").evaluate_all(
        "rows => rows.map(r => r.getAttribute('data-kind'))"
    )
    assert "input" in kinds and "activation" in kinds
    chart = page.locator(".cs-sweep-chart:visible")
    assert chart.locator(".cs-sweep-point").count() == 12  # 11 budgets and the default
    assert chart.locator(".cs-sweep-captured").count() == 1
    chart.locator(".cs-sweep-point[data-partitioner='default']").click()
    assert page.locator(".cs-sweep-detail:visible").inner_text().startswith("default: activations")
    assert "the partitioner's predictions" in page.locator(".cs-sweep-basis:visible").inner_text()
    assert page.errors == [] and page.dialogs == []
