"""An empty or partial capture's offline report in real Chromium: no page error on any tab, and a
plain sentence where there is nothing to show (issue 30 item 7: capturing() around code compiled
before the block gave 0 compile ids, and the view threw in renderStages)."""

from __future__ import annotations

import compilescope
import pytest
from compilescope.model.capture import Capture
from compilescope.model.compile import Compile
from compilescope.model.compile_id import CompileId
from compilescope.model.measured.timing import GraphShare, GraphTiming, RealSteps, Sample, Timings
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .conftest import artifacts

pytestmark = [pytest.mark.browser]

NOTHING = "no compile ids in this capture: "
TABS = ("overview", "graphs", "code", "guards", "timings", "repro")
ONE_COMPILE_TABS = ("graphs", "code", "guards", "repro")


def _steps(**kw) -> RealSteps:
    return RealSteps(device="cpu", compiled=Sample(0.01, 0.009, 0.011, 10), **kw)


def _open(page, capture: Capture, path) -> None:
    compilescope.to_html(capture, str(path))
    page.goto(f"file://{path}")
    try:
        page.wait_for_selector(".cs-root[data-ready='1']", timeout=20_000)
    except PlaywrightTimeout:  # the view threw before it was drawn: say what it threw
        pytest.fail(f"the view was not drawn; page errors: {page.errors}")


def test_a_capture_of_no_compile_ids_opens_and_says_so(page, tmp_path):
    _open(page, Capture(source="live", torch_version="2.13.0"), tmp_path / "empty.html")
    assert page.errors == []
    assert "0 compile ids" in page.locator(".cs-head").inner_text()
    assert (
        page.locator("[data-pane='overview'] [data-no-compiles]").inner_text().startswith(NOTHING)
    )
    page.screenshot(path=str(artifacts() / "empty_capture_overview.png"))
    for tab in ONE_COMPILE_TABS:
        page.click(f"button[data-tab='{tab}']")
        message = page.locator(f"[data-pane='{tab}'] [data-no-compiles]")
        assert message.is_visible() and message.inner_text().startswith(NOTHING), tab
    page.click("button[data-tab='timings']")
    timings = page.locator("[data-pane='timings']").inner_text()
    assert "Runtimes: not measured (nothing was compiled" in timings
    assert "turned off" not in timings  # they were not: there was nothing to time
    assert page.errors == [] and page.dialogs == []


def test_real_steps_without_compile_ids_show_the_steps(page, tmp_path):
    """What capturing() around code compiled before the block gives: steps timed, nothing compiled."""
    # The capture's note says why (live/pipeline.py words it); it shows over every tab.
    note = "compiled before the block: <b>reset</b> to capture it"
    cap = Capture(source="live", timings=Timings(device="cpu", real_steps=_steps()), note=note)
    _open(page, cap, tmp_path / "steps.html")
    assert page.errors == []
    assert "0 compile ids on cpu" in page.locator(".cs-head").inner_text()
    note = page.locator("[data-capture-note]")
    assert (
        note.is_visible()
        and note.inner_text() == "compiled before the block: <b>reset</b> to capture it"
    )
    message = page.locator("[data-pane='overview'] [data-no-compiles]")
    assert message.is_visible() and "steps were still timed" in message.inner_text()
    page.screenshot(path=str(artifacts() / "real_steps_only_overview.png"))
    page.click("button[data-tab='timings']")
    box = page.locator("[data-real-steps]:visible")
    assert box.locator("h4").inner_text() == "Your steps as they ran (cpu; median of 10)"
    assert box.locator("[data-real-wall]").inner_text().startswith("per step: compiled 10.000 ms")
    page.screenshot(path=str(artifacts() / "real_steps_only_timings.png"))
    for tab in TABS:
        page.click(f"button[data-tab='{tab}']")
    assert page.errors == [] and page.dialogs == []


def test_partial_compiles_open_on_every_tab(page, tmp_path):
    """A compile with no graphs or kernels, a failed one, a graph timing with no samples and
    real steps whose graph ran no kernels."""
    real = _steps(
        split_wall=Sample(0.012, 0.011, 0.013, 5), graphs=(GraphShare("0/0", "forward", 0.0, 0),)
    )
    timings = Timings(
        device="cpu",
        graphs=(GraphTiming("0/0", "nothing to run", note="no graph"),),
        real_steps=real,
    )
    compiles = (Compile(CompileId.parse("0/0")), Compile(CompileId.parse("1/0"), failure="boom"))
    _open(
        page, Capture(compiles=compiles, source="live", timings=timings), tmp_path / "partial.html"
    )
    assert page.locator("[data-no-compiles]").count() == 0
    page.click("button[data-tab='graphs']")
    assert page.locator("[data-pane='graphs']").inner_text().count("no graphs were logged") == 1
    page.click("button[data-tab='timings']")
    assert (
        "0/0 forward: eager not measured; compiled not measured"
        in page.locator("[data-pane='timings']").inner_text()
    )
    for tab in TABS:
        page.click(f"button[data-tab='{tab}']")
        for ci in ("1", "0"):
            select = page.locator(f"[data-pane='{tab}'] select.cs-select")
            if select.count():
                select.select_option(ci)
    assert page.errors == [] and page.dialogs == []
