"""The cell strip shows the cell as the user typed it (issue 32), in real Chromium at 1400 x 1000.

A `%%compile_fx` cell run through a real IPython (the shell the magic tests use); what ran is the
cell wrapped as `def __compile_fx_cell__(): ...` and IPython's `get_ipython().run_cell_magic(...)`
one-liner, but the capture's sources and the strip hold the typed cell, once. Screenshot:
tests/artifacts/typed_cell/.
"""

from __future__ import annotations

import pytest

from browser.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.torch]

SETUP = "import torch\ntorch.manual_seed(0)\nmlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))\nx = torch.randn(3, 8)"  # fmt: skip
CELL = "%%compile_fx --backend aot_eager --out cap_typed\ny = mlp(x)\n\nloss = y.sum()  # one number\nloss.backward()"  # fmt: skip


@pytest.fixture(scope="module")
def typed_capture():
    from IPython.testing import globalipapp

    # One test shell per process: start_ipython() returns None once another test started it.
    globalipapp.start_ipython()
    shell = globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "compilescope")
    assert shell.run_cell(SETUP, store_history=True).success
    assert shell.run_cell(CELL, store_history=True).success
    return shell.user_ns["cap_typed"]


def test_the_capture_holds_the_typed_cell_once(typed_capture):
    texts = list(typed_capture.sources.values())
    assert texts == [CELL], typed_capture.sources
    assert not any("__compile_fx_cell__" in t or "run_cell_magic" in t for t in texts)


def test_the_cell_strip_shows_the_typed_cell(browser, typed_capture, tmp_path):
    import compilescope

    report = compilescope.to_html(typed_capture, tmp_path / "typed.html")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"file://{report}")
    page.wait_for_selector(".cs-root[data-ready='1']")
    rows = page.locator(".cs-cell .cs-line")
    texts = [t.replace("\u00a0", " ") for t in rows.locator("span:nth-child(2)").all_inner_texts()]
    assert "\n".join(t if t.strip() else "" for t in texts) == CELL
    assert page.locator(".cs-cell").count() == 1
    # The lines that became graph nodes are marked at the lines as typed.
    marked = rows.evaluate_all(
        "rs => rs.filter(r => r.classList.contains('cs-line-nodes')).map(r => r.dataset.line)"
    )
    assert "2" in marked, marked
    (ARTIFACTS / "typed_cell").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "typed_cell" / "cell_strip.png"))
    context.close()
    assert errors == []
