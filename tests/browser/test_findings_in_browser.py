"""The findings open the view: in the offline report, and in JupyterLab with a fix tried in one click."""

from __future__ import annotations

import compilescope
import nbformat
import pytest

from .conftest import artifacts, open_notebook
from .test_views_in_browser import run_all

pytestmark = [pytest.mark.browser, pytest.mark.torch]

ITEM_CELL = """%%compile_fx --backend aot_eager --no-time
scale = x.sum().item()
y = x * scale
"""


def test_report_opens_with_the_findings(page, loaded, tmp_path):
    path = compilescope.to_html(loaded("gpt2"), tmp_path / "report.html")
    page.set_viewport_size({"width": 1400, "height": 950})
    page.goto(f"file://{path}")
    page.wait_for_selector(".cs-root[data-ready='1']", timeout=20_000)
    overview = page.locator(".cs-pane[data-pane='overview']")
    # The first thing on the Overview is the findings, and the first finding is the logger.
    first_child = overview.locator(":scope > *").first
    assert "cs-findings" in first_child.get_attribute("class")
    top = overview.locator(".cs-finding").first
    assert top.get_attribute("data-kind") == "graph_break"
    text = top.inner_text()
    assert (
        "warning_once" in text and "GB0291" in text and "2 breaks, 3 restarts" in text
    )  # as Dynamo counts
    assert "ignore_logging_functions.add(transformers.modeling_utils.logger.warning_once)" in text
    assert top.is_visible() and top.bounding_box()["y"] < 950  # on the first screen
    # A report has no kernel: nothing to click to try a fix.
    assert page.locator(".cs-try-fix").count() == 0
    # torch's own message: once for the cause (2 breaks), folded under the finding; no list
    # of the same message three times.
    assert overview.locator(".cs-raw-breaks[data-breaks]").count() == 0
    # The frame whose rest ran eagerly is listed as a fallback (Dynamo counts no break there).
    assert overview.locator(".cs-raw-breaks[data-fallbacks='1']").count() == 1
    messages = overview.locator(".cs-finding-raw")
    assert messages.count() == 1 and "gb0291" in messages.first.text_content()
    assert not messages.first.locator("pre").is_visible()
    assert page.errors == []


@pytest.fixture(scope="module")
def item_notebook(jupyter_server):
    from notebooks.kernel import KERNEL_NAME

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "compilescope test", "language": "python"}  # fmt: skip
    setup = "%load_ext compilescope\nimport torch\nx = torch.randn(8)"
    nb.cells = [nbformat.v4.new_code_cell(setup), nbformat.v4.new_code_cell(ITEM_CELL)]
    nbformat.write(nb, jupyter_server["dir"] / "findings.ipynb")
    return jupyter_server


def test_a_fix_is_tried_in_one_click_in_jupyterlab(page, item_notebook):
    open_notebook(page, item_notebook, "lab/tree", "findings.ipynb")
    run_all(page)
    root = page.locator(".cs-root").first
    finding = root.locator(".cs-finding[data-kind='data_dependent']").first
    assert "capture_scalar_outputs = True" in finding.inner_text()
    finding.locator(".cs-try-fix").click()
    # The result shows under the finding it came from (issue 32), not under the list.
    trial = finding.locator(".cs-fix-trial[data-trial='done']")
    trial.wait_for(timeout=120_000)
    assert root.locator(".cs-fix-trial[data-trial]").count() == 1
    assert "captured again without the fix" in trial.locator("[data-baseline]").inner_text()
    assert trial.locator("[data-left]").inner_text() == "left after the fix: no graph breaks"
    rows = {
        r.locator("td").nth(0).inner_text(): (r.locator("td").nth(1).inner_text(), r.locator("td").nth(2).inner_text())
        for r in trial.locator("tr:has(td)").all()
    }  # fmt: skip
    assert rows["graph breaks"] == ("1", "0") and rows["compile ids"][1] == "1"
    assert trial.locator("tr[data-figure='graph breaks'] td.cs-change").inner_text() == "down 1"
    page.screenshot(path=str(artifacts() / "findings_try_fix_lab.png"))
    assert page.errors == [] and page.dialogs == []
