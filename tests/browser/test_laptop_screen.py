"""The view at the size of real models on a laptop screen (issue 32), in real Chromium.

The realistic GPU capture (GPT-2 6 x 768, a bf16 training step: 11 compile ids, 39 kernels of
one graph, timed; benchmarks/recorders/gpu_realistic.py made it) and the 2-layer GPT-2 log of the
fixtures, as offline reports in a 1400 x 1000 window, and in a 1000 px one (what JupyterLab's
output area leaves a 1400 px window with its file browser open). Every table that must fit is
no wider than its pane, its columns that matter stay, and node detail keys read whole.
Screenshots: tests/artifacts/laptop/.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import compilescope
import pytest

from browser.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
REALISTIC = ROOT / "benchmarks" / "data" / "gpu_realistic_capture" / "gpt2_6x768_bf16_train.json.gz"
SHOTS = ARTIFACTS / "laptop"
# scrollWidth over clientWidth of a table's box: what does not fit is cut off or scrolled away.
FITS = "b => { const t = b.querySelector('table'); return [t.scrollWidth, b.clientWidth, b.scrollWidth]; }"  # fmt: skip
SHOWN = "th => getComputedStyle(th).display !== 'none' && th.getBoundingClientRect().width > 0"


@pytest.fixture(scope="module")
def reports(tmp_path_factory, loaded) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("laptop")
    with gzip.open(REALISTIC, "rt", encoding="utf-8") as f:
        gpu = compilescope.Capture.from_json(f.read())
    return {
        "gpu": compilescope.to_html(gpu, out / "gpu.html"),
        "cpu": compilescope.to_html(loaded("gpt2"), out / "cpu.html"),
    }


@pytest.fixture(params=[1400, 1000], ids=["1400px", "1000px"])
def window(browser, request):
    context = browser.new_context(viewport={"width": request.param, "height": 1000})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.width = request.param
    yield page
    context.close()


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}_{page.width}.png"))


def open_report(page, report: Path, tab: str, compile_id: str | None = None) -> None:
    page.goto(f"file://{report}")
    page.wait_for_selector(".cs-root[data-ready='1']")
    page.click(f"button[data-tab='{tab}']")
    if compile_id:
        select = page.locator(f"[data-pane='{tab}'] select")
        value = select.evaluate(
            "(s, id) => [...s.options].find(o => o.textContent.startsWith(id + ' ')).value",
            compile_id,
        )
        select.select_option(value)


def assert_fits(box) -> None:
    box.page.wait_for_function("b => b.hasAttribute('data-cols-off')", arg=box.element_handle())
    table, pane, scrolled = box.evaluate(FITS)
    assert table <= pane + 1 and scrolled <= pane + 1, (table, pane, scrolled)


def assert_columns(box, *keys: str) -> None:
    for key in keys:
        assert box.locator(f"th[data-col='{key}']").evaluate(SHOWN), key


def test_the_compile_table_keeps_its_status_in_the_pane(window, reports):
    open_report(window, reports["gpu"], "overview")
    box = window.locator("[data-table='compiles']")
    assert_fits(box)
    assert_columns(box, "id", "status", "frame")
    status = box.locator("th[data-col='status']").bounding_box()
    pane = box.bounding_box()
    assert status["x"] + status["width"] <= pane["x"] + pane["width"]
    # Each restarted id is one row, its restart named in it (0/0 and 0/0_1 were two rows).
    assert box.locator(".cs-restart").count() >= 4
    box.scroll_into_view_if_needed()
    shoot(window, "overview_compiles")
    assert window.errors == []


@pytest.mark.parametrize("which, compile_id", [("gpu", "2/0_1"), ("cpu", "1/0_1")])
def test_the_kernel_table_fits_beside_the_source(window, reports, which, compile_id):
    open_report(window, reports[which], "code", compile_id)
    box = window.locator("[data-table='kernels']")
    assert_fits(box)
    assert_columns(box, "kernel", "lines")
    if which == "gpu":
        assert_columns(box, "time")
    if window.width == 1400:  # the room for every column that matters
        assert_columns(box, "nodes")
    # The source stays beside the table, not under it.
    table, source = window.locator(".cs-kernels").bounding_box(), window.locator(".cs-kernel")
    assert source.bounding_box()["x"] >= table["x"] + table["width"] - 1
    # The wrapper frames every kernel of a transformers model shares (generic.py,
    # output_capturing.py) fold behind "+N"; each row shows a line of its own first.
    briefs = box.locator(".cs-klines-brief").all_inner_texts()
    assert len(briefs) >= 15
    assert not any("generic.py" in b or "output_capturing.py" in b for b in briefs), briefs
    assert sum("modeling_gpt2.py:" in b for b in briefs) >= len(briefs) // 2, briefs
    shoot(window, f"code_{which}")
    more = box.locator("[data-more-lines]").first
    folded = int(more.get_attribute("data-more-lines"))
    name = box.locator("tr:has([data-more-lines])").first.get_attribute("data-kernel")
    more.click()
    cell = box.locator(f"tr[data-kernel='{name}'] .cs-klines")
    assert cell.locator(".cs-loc").count() == folded + 1
    assert "generic.py" in cell.inner_text()
    assert window.errors == []


def test_the_kernel_ranking_fits_the_timings_pane(window, reports):
    open_report(window, reports["gpu"], "timings")
    box = window.locator("[data-table='kernel-rank']")
    assert_fits(box)
    assert_columns(box, "rank", "kernel", "per_step", "share", "line")
    if window.width == 1400:
        assert_columns(box, "module", "bandwidth")
    # A kernel's name is cut on one line, whole on hover.
    name = box.locator("td[data-col='kernel']").nth(1)
    assert name.get_attribute("title").startswith(name.inner_text().rstrip("\u2026"))
    box.scroll_into_view_if_needed()
    shoot(window, "timings_ranking")
    # The folded columns come back on demand; the box scrolls sideways then.
    more = box.locator("[data-more-cols]")
    folded = int(box.get_attribute("data-cols-off"))
    if folded:
        assert more.is_visible() and "FLOP/s" in more.inner_text()
        more.click()
        assert_columns(box, "flops", "compile")
        assert box.evaluate("b => b.scrollWidth >= b.clientWidth")
    # The roofline's key, opened, fits as well.
    key = window.locator(".cs-chart-key")
    key.locator("summary").click()
    assert key.evaluate("k => k.querySelector('table').scrollWidth <= k.clientWidth + 1")
    assert window.errors == []


def test_node_detail_keys_do_not_wrap_inside_a_word(window, reports):
    open_report(window, reports["gpu"], "graphs", "2/0_1")
    explorer = window.locator(".cs-explorer:visible")
    explorer.locator(".cs-search").fill("addmm")
    explorer.locator(".cs-search").press("Enter")
    keys = explorer.locator(".cs-details .cs-kv th")
    assert keys.count() >= 6  # name, op, target, type, module, source, code
    lines = keys.evaluate_all(
        "ths => ths.map(th => { const r = document.createRange(); r.selectNodeContents(th);"
        " return [th.textContent, new Set([...r.getClientRects()].map(b => Math.round(b.top))).size]; })"
    )
    assert all(n == 1 for _, n in lines), lines
    assert {"name", "target", "module", "source"} <= {k for k, _ in lines}
    # Long values (a site-packages path) still wrap inside the panel.
    details = explorer.locator(".cs-details")
    assert details.evaluate("d => d.scrollWidth <= d.clientWidth + 1")
    shoot(window, "node_details")
    assert window.errors == []
