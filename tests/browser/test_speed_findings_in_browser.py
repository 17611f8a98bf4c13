"""Speed findings on the first screen, in real Chromium: a loop whose eager optimizer is most of
the step shows that finding first (after the verdict, where the compiled step is no faster than
eager: on 2 CPU cores this tiny MLP's is not), with its share, its line and its fix."""

from __future__ import annotations

import compilescope
import pytest
import torch

from .conftest import artifacts

pytestmark = [pytest.mark.browser, pytest.mark.torch]


def test_the_eager_optimizer_finding_comes_first_in_the_report(page, tmp_path):
    torch.manual_seed(0)
    torch._dynamo.reset()
    model = torch.nn.Sequential(*[torch.nn.Linear(16, 16) for _ in range(40)])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    compiled = torch.compile(model)
    x = torch.randn(8, 16)
    threads = torch.get_num_threads()
    torch.set_num_threads(
        1
    )  # steadier steps on 2 shared cores (tests/live/test_step_speedup_live.py)
    try:
        with compilescope.capturing() as cap:
            for _ in range(30):
                compiled(x).pow(2).mean().backward()
                opt.step()
                opt.zero_grad()
    finally:
        torch.set_num_threads(threads)
    verdicts = ("compiled_slower", "compiled_not_faster")
    found = [f for f in compilescope.findings(cap.capture) if f.kind not in verdicts]
    assert found[0].kind == "eager_optimizer", [f.kind for f in found]
    path = tmp_path / "speed.html"
    compilescope.to_html(cap.capture, path)
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"file://{path}")
    page.wait_for_selector(".cs-root[data-ready='1']", timeout=20_000)
    kinds = page.locator(".cs-finding").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert [k for k in kinds if k not in verdicts][0] == "eager_optimizer", kinds
    assert kinds.index("eager_optimizer") <= 1  # first, or right after the verdict
    first = page.locator(".cs-finding[data-kind='eager_optimizer']").first
    text = first.inner_text()
    assert "Adam" in text and "of the step" in text and "fused=True" in text
    assert "test_speed_findings_in_browser.py" in text  # the line that builds the optimizer
    page.screenshot(path=str(artifacts() / "speed_findings_first.png"))
    # The Timings split names the optimizer's part of the step, measured on its own.
    page.click("button[data-tab='timings']")
    part = page.locator("[data-part-optimizer]")
    assert part.count() == 1 and "optimizer steps (eager)" in part.inner_text()
    share = float(part.locator("td").nth(2).inner_text().rstrip("%"))
    # The same share as the finding's (both the optimizer's time over the compiled step).
    assert abs(share - 100 * found[0].cost.share) < 0.1, (share, found[0].cost.share)
    page.screenshot(path=str(artifacts() / "speed_timings_split.png"))
    # Its roofline (no measured roofs here) spans whole decades: no overlapping 10^x labels.
    from compilescope.views.charts.roofline import roofline_figure

    for low, high in (roofline_figure(cap.capture).axes[0].get_xlim(),):
        assert high / low >= 99, (low, high)
    assert page.errors == []
