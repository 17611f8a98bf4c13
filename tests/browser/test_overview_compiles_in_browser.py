"""The Overview's compile ids on a GPT-2 training step (issue 32), in real Chromium at 1400 x 1000.

The realistic GPU capture (GPT-2 6 x 768, a bf16 training step; benchmarks/recorders/gpu_realistic.py made
it): Dynamo restarts four of its frames (0/0 -> 0/0_1, ...). The compile table has one row per
id, the restart shown in it; the compile-stage waterfall has every id (it left out the last
ones). Screenshot: tests/artifacts/overview_compiles/.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import compilescope
import pytest

from browser.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
REALISTIC = ROOT / "benchmarks" / "data" / "gpu_realistic_capture" / "gpt2_6x768_bf16_train.json.gz"
SHOTS = ARTIFACTS / "overview_compiles"


@pytest.fixture(scope="module")
def capture():
    with gzip.open(REALISTIC, "rt", encoding="utf-8") as f:
        return compilescope.Capture.from_json(f.read())


def test_one_row_per_restarted_id_and_every_id_in_the_waterfall(browser, capture, tmp_path):
    ids = [str(c.id) for c in capture.compiles]
    bases = list(dict.fromkeys(re.sub(r"_\d+$", "", i) for i in ids))
    assert len(bases) == 7 and len(ids) == 11
    report = compilescope.to_html(capture, tmp_path / "gpt2.html")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"file://{report}")
    page.wait_for_selector(".cs-root[data-ready='1']")
    box = page.locator("[data-table='compiles']")
    rows = box.locator("tr[data-compile]")
    shown = rows.evaluate_all("rs => rs.map(r => [r.dataset.compile, r.dataset.attempts])")
    assert [re.sub(r"_\d+$", "", c) for c, _ in shown] == bases, shown
    # The row of a restarted id is its last attempt's, and names the one before it.
    restarted = {c: a for c, a in shown if " " in a}
    assert restarted == {f"{b}/0_1": f"{b}/0 {b}/0_1" for b in "0123"}, restarted
    mark = rows.filter(has=page.locator("button", has_text=re.compile(r"^0/0_1$"))).locator(
        ".cs-restart"
    )
    assert "0/0" in mark.inner_text() and "restarted" in mark.get_attribute("title")
    # Its compile time is the frame's, counted once (torch logs it under one attempt): its
    # top-level stages, the lazily compiled backward's included (the metrics' 20.05 s is not).
    time_2 = rows.filter(has_text="2/0_1").locator("td[data-col='time']").inner_text()
    assert time_2 == "20.51 s", time_2
    line = page.locator("[data-compile-time]").inner_text()
    # The figure over the table is the same one of compile time, with the graphs' pay-back (a
    # capture timed its graphs alone: per call of the code, not per training step).
    assert (
        line.startswith("compile time 25.47 s. Compiling pays back after ") and "per call" in line
    )
    # The id link opens the attempt that ran.
    rows.locator("button", has_text="2/0_1").click()
    assert (
        page.locator("[data-pane='graphs'] select")
        .evaluate("s => s.options[s.selectedIndex].textContent")
        .startswith("2/0_1 ")
    )
    page.click("button[data-tab='overview']")
    # Every compile id in the waterfall (its y labels are SVG text).
    chart = page.locator("[data-chart='stages']")
    labels = chart.locator("svg").evaluate(
        "s => [...s.querySelectorAll('text')].map(t => t.textContent)"
    )
    text = "\n".join(labels)
    missing = [b for b in bases if not re.search(rf"(^|\n){re.escape(b)}\s", text)]
    assert not missing, (missing, labels[:40])
    chart.scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "waterfall.png"))
    box.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "compile_table.png"))
    context.close()
    assert errors == []
