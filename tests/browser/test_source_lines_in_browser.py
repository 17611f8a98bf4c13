"""Where a node's line is, in real Chromium at 1400 x 1000 (issue 32): a line of the user's
cell links to the cell, and the click shows it there; a line of an installed library (here
transformers' modeling_gpt2.py) opens its context instead, never a dead cell link.

The realistic GPU capture (GPT-2 6 x 768, a bf16 training step; benchmarks/recorders/gpu_realistic.py made
it, as a script: it has no cell) given the three-line cell a user types. Screenshots:
tests/artifacts/source_lines/.
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import compilescope
import pytest

from browser.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
REALISTIC = ROOT / "benchmarks" / "data" / "gpu_realistic_capture" / "gpt2_6x768_bf16_train.json.gz"
SHOTS = ARTIFACTS / "source_lines"
CELL_FILE = "/tmp/ipykernel_4242/1234567.py"
CELL = "out = model(input_ids, labels=input_ids)\nout.loss.backward()\nopt.step()"
GPT2 = "transformers/models/gpt2/modeling_gpt2.py"


@pytest.fixture(scope="module")
def realistic():
    with gzip.open(REALISTIC, "rt", encoding="utf-8") as f:
        return compilescope.Capture.from_json(f.read())


def with_cell(capture, sources: dict[str, str]):
    cells = {file: 3 + i for i, file in enumerate(sources)}
    return dataclasses.replace(capture, sources=sources, cells=cells)


@pytest.fixture
def window(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    yield page
    context.close()


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def open_node(page, report: Path, query: str):
    page.goto(f"file://{report}")
    page.wait_for_selector(".cs-root[data-ready='1']")
    page.click("button[data-tab='graphs']")
    select = page.locator("[data-pane='graphs'] select")
    value = select.evaluate(
        "s => [...s.options].find(o => o.textContent.startsWith('2/0_1 ')).value"
    )
    select.select_option(value)
    explorer = page.locator(".cs-explorer:visible")
    explorer.locator(".cs-search").fill(query)
    explorer.locator(".cs-search").press("Enter")
    page.wait_for_timeout(150)
    return explorer


def test_a_library_line_opens_its_context_not_the_cell(window, realistic, tmp_path):
    page = window
    report = compilescope.to_html(with_cell(realistic, {CELL_FILE: CELL}), tmp_path / "r.html")
    explorer = open_node(page, report, "addmm")
    details = explorer.locator(".cs-details")
    source = details.locator(".cs-kv tr:has(th:text-is('source')) td").inner_text()
    assert GPT2 in source or "pytorch_utils.py" in source, source
    # No "show line N in the cell" for a line that is not in the cell.
    assert details.locator("[data-link='line']").count() == 0
    assert "in the cell" not in details.inner_text()
    link = details.locator("[data-link='source']")
    assert link.count() == 1
    file, line = source.rsplit(":", 1)
    assert link.inner_text().startswith(f"transformers/{file.split('transformers/')[1]}:{line}")
    before = int(explorer.get_attribute("data-highlighted"))
    link.click()
    page.wait_for_timeout(150)
    # Something visible: the line's context in the panel and its nodes lit in the drawing.
    context = details.locator(".cs-source-context")
    assert context.is_visible()
    assert context.get_attribute("data-source") == source
    assert source in context.inner_text() and "not in your cell" in context.inner_text()
    lit = int(explorer.get_attribute("data-highlighted"))
    assert lit >= 1 and lit != before
    assert context.evaluate("c => c.scrollWidth <= c.clientWidth + 1")
    # The cell's listing says nothing about a line it does not hold.
    assert page.locator(".cs-line-hl").count() == 0
    shoot(page, "library_line_context")
    assert page.errors == []


def gpt2_as_the_cell(realistic, path: Path):
    """A report as if modeling_gpt2.py were the user's cell (its lines are then the cell's):
    compile 2/0_1's Dynamo graph, that file, the report's path."""
    graph = next(c for c in realistic.compiles if str(c.id) == "2/0_1").graphs[
        "dynamo_output_graph"
    ][0]
    file = next(n.source.file for n in graph.nodes if n.source and GPT2 in n.source.file)
    lines = {n.source.line: n.source.code or "" for n in graph.nodes if n.source}
    text = "\n".join(lines.get(i + 1, "") for i in range(max(lines)))
    return graph, file, compilescope.to_html(with_cell(realistic, {file: text}), path)


def test_a_cell_line_shows_in_the_unfolded_cell(window, realistic, tmp_path):
    page = window
    graph, file, report = gpt2_as_the_cell(realistic, tmp_path / "c.html")
    # A node of modeling_gpt2.py that a search for its name selects (the first name holding it).
    names = [n.name for n in graph.nodes]
    node = next(
        n.name
        for n in graph.nodes
        if n.source and GPT2 in n.source.file and next(m for m in names if n.name in m) == n.name
    )
    page.set_viewport_size({"width": 1000, "height": 1000})  # the listing starts folded
    explorer = open_node(page, report, node)
    assert page.locator(".cs-cellpane").evaluate("p => p.classList.contains('cs-folded')")
    details = explorer.locator(".cs-details")
    source = details.locator(".cs-kv tr:has(th:text-is('source')) td").inner_text()
    assert GPT2 in source
    line = source.rsplit(":", 1)[1]
    link = details.locator("[data-link='line']")
    assert link.inner_text() == f"show line {line} in the cell"
    link.click()
    page.wait_for_timeout(150)
    assert not page.locator(".cs-cellpane").evaluate("p => p.classList.contains('cs-folded')")
    row = page.locator(".cs-line-hl")
    assert row.count() == 1 and row.get_attribute("data-line") == line
    assert row.is_visible() and row.evaluate(
        "r => { const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= innerHeight; }"
    )
    shoot(page, "cell_line_shown")
    assert page.errors == []


def test_a_link_to_another_compiles_graph_redraws_every_tab_for_it(window, realistic, tmp_path):
    # From the cell listing, a line's nodes in compile 2/0_1 while the tabs show 4/0: the graph
    # opens, and Code, Guards and Repro show 2/0_1 too (their selectors said 2/0_1 while they
    # still showed 4/0's kernels).
    page = window
    graph, file, report = gpt2_as_the_cell(realistic, tmp_path / "l.html")
    page.goto(f"file://{report}")
    page.wait_for_selector(".cs-root[data-ready='1']", timeout=20_000)
    page.click("button[data-tab='graphs']")
    select = page.locator("[data-pane='graphs'] select")
    select.select_option(
        select.evaluate("s => [...s.options].find(o => o.textContent.startsWith('4/0 ')).value")
    )
    line = next(n.source.line for n in graph.nodes if n.source and n.source.file == file)
    page.locator(f".cs-cellpane .cs-line[data-line='{line}']").click()
    link = page.locator(".cs-links [data-link='nodes']", has_text="2/0_1 ").first
    link.click()
    page.wait_for_timeout(150)
    assert select.evaluate("s => s.options[s.selectedIndex].textContent").startswith("2/0_1 ")
    page.click("button[data-tab='code']")
    code = page.locator("[data-pane='code'] select")
    assert code.evaluate("s => s.options[s.selectedIndex].textContent").startswith("2/0_1 ")
    kernels = {k.name for c in realistic.compiles if str(c.id) == "2/0_1" for k in c.kernels}
    shown = page.locator("[data-pane='code'] .cs-kernel-row").evaluate_all(
        "rows => rows.map(r => r.getAttribute('data-kernel'))"
    )
    assert shown and set(shown) <= kernels, shown[:3]
    assert page.errors == []
