"""`show()` of a `capturing()` capture offers what can be tried (issue 32), in real Chromium at
1400 x 1000: compilescope cannot run a `with` block again, so a finding whose fix is settings
shows the `compilescope.applying(fix)` code to copy instead of "try this fix"; that code, run,
applies the fix. On a CPU capture of a `.item()` break, and on the realistic GPT-2 capture
(benchmarks/recorders/gpu_realistic.py: transformers' warning_once break). Screenshots:
tests/artifacts/applying/.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import compilescope
import pytest

from browser.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
REALISTIC = ROOT / "benchmarks" / "data" / "gpu_realistic_capture" / "gpt2_6x768_bf16_train.json.gz"
SHOTS = ARTIFACTS / "applying"
RUN = "f(torch.arange(4.0))"


def scaled(x):
    return x * x.sum().item()


def open_overview(browser, capture, path: Path):
    report = compilescope.to_html(capture, path)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(f"file://{report}")
    page.wait_for_selector(".cs-root[data-ready='1']")
    return context, page


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


@pytest.mark.torch
def test_a_capturing_capture_offers_applying_and_its_code_works(browser, tmp_path):
    import torch

    f = torch.compile(scaled, backend="eager")
    with compilescope.capturing(real_steps=0, reset=True) as cap:
        f(torch.arange(4.0))
    breaks = sum(len(c.graph_breaks) for c in cap.capture)
    assert breaks >= 1
    view = compilescope._view(cap.capture)
    assert view.tryable is False  # a with block cannot be run again
    rows = json.loads(view.data)["findings"]
    offered = [r for r in rows if r["applying"]]
    assert offered, [(r["what"], r["fixes"]) for r in rows]
    snippet = offered[0]["applying"]
    assert "compilescope.applying(fix)" in snippet
    assert f"findings(cap)[{offered[0]['number'] - 1}]" in snippet
    # The code to copy, run as the user would (their code in place of `...`), applies the fix.
    lines = snippet.split("\n")
    code = "\n".join(f"    {RUN}" if line.strip().startswith("...") else line for line in lines)
    namespace = {"compilescope": compilescope, "cap": cap, "f": f, "torch": torch}
    exec(compile(code, "<snippet>", "exec"), namespace)
    after = namespace["after"].capture
    assert sum(len(c.graph_breaks) for c in after) < breaks, after.summary()

    context, page = open_overview(browser, cap.capture, tmp_path / "item.html")
    item = page.locator(f".cs-finding[data-finding='{offered[0]['number']}']")
    box = item.locator(".cs-apply-fix")
    assert box.is_visible() and page.locator(".cs-try-fix").count() == 0
    assert box.locator("pre").inner_text() == snippet
    assert box.locator("pre").evaluate("p => p.scrollWidth <= p.clientWidth + 1")
    assert box.locator("[data-copy]").is_visible()
    shoot(page, "capturing_item")
    context.close()
    assert page.errors == []


def test_the_gpt2_step_offers_applying_for_its_logging_break(browser, tmp_path):
    with gzip.open(REALISTIC, "rt", encoding="utf-8") as fh:
        capture = compilescope.Capture.from_json(fh.read())
    context, page = open_overview(browser, capture, tmp_path / "gpt2.html")
    boxes = page.locator(".cs-apply-fix")
    assert boxes.count() >= 1
    first = boxes.first
    finding = page.locator(".cs-finding").filter(has=first)
    assert "ignore_logging_functions" in finding.locator(".cs-fix").first.inner_text()
    assert first.is_visible()
    assert first.locator("pre").evaluate("p => p.scrollWidth <= p.clientWidth + 1")
    # Beside its finding, inside the pane.
    pane = page.locator("[data-pane='overview']").bounding_box()
    b = first.bounding_box()
    assert b["x"] + b["width"] <= pane["x"] + pane["width"] + 1
    first.scroll_into_view_if_needed()
    shoot(page, "gpt2_logging_break")
    context.close()
    assert page.errors == []
