"""The explorer on real training graphs (issue 23), in real Chromium at 1400 x 950, offline report.

The realistic GPU capture (GPT-2 6 x 768, a bf16 training step; benchmarks/recorders/gpu_realistic.py made
it) and a CNN's (benchmarks/models.py): every graph of the step opens showing the model's
structure, read from the explorer's `data-in-view` (the labels of the boxes drawn whole inside
its visible area). Screenshots of every stage: tests/artifacts/training_graphs/.
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
CNN = ROOT / "benchmarks" / "data" / "gpu_captures" / "cnn_bfloat16.json.gz"
SHOTS = ARTIFACTS / "training_graphs"
LAYER = re.compile(r"(?:^|\.)transformer\.h\.(\d+)$")


def _report(path: Path, out: Path) -> Path:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return compilescope.to_html(compilescope.Capture.from_json(f.read()), out)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("training")
    return {"gpt2": _report(REALISTIC, out / "gpt2.html"), "cnn": _report(CNN, out / "cnn.html")}


@pytest.fixture
def window(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 950})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    yield page
    context.close()


def open_graphs(page, report: Path, compile_id: str) -> None:
    page.goto(f"file://{report}")
    page.wait_for_selector(".cs-root[data-ready='1']")
    page.click("button[data-tab='graphs']")
    select = page.locator("[data-pane='graphs'] select")
    value = select.evaluate(
        "(s, id) => [...s.options].find(o => o.textContent.startsWith(id + ' ')).value", compile_id
    )
    select.select_option(value)


def open_stage(page, stage: str | int):
    """Click a stage's button (by kind, or by place: post-grad has two), as a reader does with
    the buttons at the top of the window; the explorer it shows, once drawn."""
    buttons = page.locator(".cs-stage:visible")
    button = (
        buttons.nth(stage)
        if isinstance(stage, int)
        else buttons.and_(page.locator(f"[data-stage='{stage}']"))
    )
    button.evaluate("b => b.scrollIntoView({block: 'start'})")
    button.click()
    explorer = page.locator(".cs-explorer:visible")
    page.wait_for_function(
        "e => e.getAttribute('data-ready') === '1' && e.getAttribute('data-in-view') !== null",
        arg=explorer.element_handle(),
    )
    page.wait_for_timeout(100)  # the first frame after the click
    return explorer


def in_view(explorer) -> list[str]:
    return explorer.get_attribute("data-in-view").split("\n")


def check_first_sight(page, explorer) -> None:
    """Labels at 11 CSS px or more; the explorer right under the stage buttons, its canvas
    whole inside the window; nothing of the graph tab above it."""
    assert float(explorer.get_attribute("data-label-px")) >= 11
    stages = page.locator(".cs-stagebar:visible").bounding_box()
    canvas = explorer.locator("canvas").bounding_box()
    top = explorer.bounding_box()["y"]
    assert 0 <= top - (stages["y"] + stages["height"]) <= 8, (stages, top)
    assert canvas["y"] >= 0 and canvas["y"] + canvas["height"] <= 950, canvas


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def test_the_six_layers_are_in_view_in_the_backward_joint_and_partition(window, reports):
    page = window
    open_graphs(page, reports["gpt2"], "2/0_1")
    expected = {
        # the backward runs the layers in reverse; the joint and the partition show the
        # forward and the backward halves side by side
        "aot_backward_graph": [["5", "4", "3", "2", "1", "0"]],
        "aot_joint_graph": [["0", "1", "2", "3", "4", "5"], ["5", "4", "3", "2", "1", "0"]],
        "partition": [["0", "1", "2", "3", "4", "5"], ["5", "4", "3", "2", "1", "0"]],
    }
    for stage, halves in expected.items():
        explorer = open_stage(page, stage)
        check_first_sight(page, explorer)
        lines = in_view(explorer)
        layers = [m.group(1) for line in lines if (m := LAYER.search(line))]
        assert layers == [n for half in halves for n in half], (stage, lines)
        if len(halves) == 2:  # each half under its own name
            assert [line.split(".")[0] for line in lines if LAYER.search(line)] == (
                ["forward"] * 6 + ["backward"] * 6
            )
        # Tangents, inputs and constants are gathered into boxes, not spread as boxes.
        assert any(re.fullmatch(r"\d+ tangents", line) for line in lines), lines
        assert len(lines) <= 45, lines
        shoot(page, f"gpt2_{stage}")
    assert page.errors == []


def test_every_stage_of_the_realistic_capture_opens_readable(window, reports):
    page = window
    open_graphs(page, reports["gpt2"], "2/0_1")
    stages = page.locator(".cs-stage:visible")
    kinds = [stages.nth(i).get_attribute("data-stage") for i in range(stages.count())]
    assert len(kinds) == 7
    for i, kind in enumerate(kinds):
        explorer = open_stage(page, i)
        check_first_sight(page, explorer)
        layers = {m.group(1) for line in in_view(explorer) if (m := LAYER.search(line))}
        assert layers == set("012345"), (kind, in_view(explorer))
        shoot(page, f"gpt2_{i}_{kind}")
    assert page.errors == []


def test_fit_fits_what_is_shown(window, reports):
    page = window
    open_graphs(page, reports["gpt2"], "2/0_1")
    explorer = open_stage(page, "aot_backward_graph")

    def shown() -> int:
        return int(explorer.get_attribute("data-visible-nodes")) + int(
            explorer.get_attribute("data-visible-groups")
        )

    # Pan away, then fit: every box is back in view.
    canvas = explorer.locator("canvas").bounding_box()
    page.mouse.move(canvas["x"] + 300, canvas["y"] + 300)
    page.mouse.down()
    page.mouse.move(canvas["x"] + 900, canvas["y"] + 700, steps=5)
    page.mouse.up()
    page.wait_for_timeout(100)
    assert len(in_view(explorer)) < shown()
    explorer.locator("button[data-action='fit']").click()
    page.wait_for_timeout(100)
    assert len(in_view(explorer)) == shown()
    # All 970 nodes open: fit keeps labels legible and scrolls (issue 32); "whole graph" still
    # frames all of them (small, but all there).
    explorer.locator("button[data-action='expand']").click()
    page.wait_for_timeout(200)
    assert int(explorer.get_attribute("data-visible-nodes")) == 970
    assert float(explorer.get_attribute("data-label-px")) >= 10
    assert len(in_view(explorer)) < shown()
    explorer.locator("button[data-action='whole']").click()
    page.wait_for_timeout(200)
    assert len(in_view(explorer)) == shown()
    shoot(page, "gpt2_backward_expanded_fit")
    assert page.errors == []


def test_what_the_partition_saved_folds_to_one_line_under_the_explorer(window, reports):
    page = window
    open_graphs(page, reports["gpt2"], "2/0_1")
    explorer = open_stage(page, "partition")
    saved = page.locator("[data-fold='saved']:visible")
    again = page.locator("[data-fold='recomputed']:visible")
    assert re.fullmatch(
        r"saved for backward: \d+ tensors \(.+\), activation memory .+",
        saved.locator("summary").inner_text(),
    )
    assert re.fullmatch(
        r"recomputed in the backward: \d+ nodes", again.locator("summary").inner_text()
    )
    below = explorer.bounding_box()
    for fold in (saved, again):
        assert fold.get_attribute("open") is None  # folded
        assert fold.bounding_box()["y"] >= below["y"] + below["height"]
        assert fold.bounding_box()["height"] < 30  # one line
    saved.locator("summary").click()
    assert page.locator(".cs-saved-row:visible").count() > 100
    shoot(page, "gpt2_partition_saved_open")
    assert page.errors == []


def test_a_cnns_graphs_open_by_module(window, reports):
    page = window
    open_graphs(page, reports["cnn"], "5/0")
    stages = page.locator(".cs-stage:visible")
    kinds = [stages.nth(i).get_attribute("data-stage") for i in range(stages.count())]
    for i, kind in enumerate(kinds):
        explorer = open_stage(page, i)
        check_first_sight(page, explorer)
        lines = in_view(explorer)
        body = [line for line in lines if re.search(r"(^|\.)body\.\d+$", line)]
        if kind in ("aot_joint_graph", "partition"):
            # Both halves, the backward's layers in reverse under it.
            assert {"forward", "backward"} <= set(lines), lines
            backward = [int(b.rsplit(".", 1)[1]) for b in body if b.startswith("backward.")]
            assert len(backward) >= 7 and backward == sorted(backward, reverse=True), lines
        elif kind == "aot_backward_graph":  # 112 nodes: whole, at scale 1, from its top
            assert body[:3] == ["body.8", "body.7", "body.6"], lines
        else:
            assert len(body) >= 3, (kind, lines)
        shoot(page, f"cnn_{i}_{kind}")
    assert page.errors == []
