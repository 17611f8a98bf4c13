"""A tutorial opens in JupyterLab unmodified: Lab does not mark it changed on load (a notebook
that Lab rewrites on open shows as modified and asks to be saved; issue 44). Lab's one change
on open was `language_info`; every tutorial's is checked without a browser
(tests/notebooks/test_tutorials.py), and here Lab opens the one the issue named (4.5 s each:
all eleven took 51 s of the suite)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TUTORIALS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="module")
def tutorials(jupyter_server):
    folder = jupyter_server["dir"] / "tutorials"
    folder.mkdir(exist_ok=True)
    for path in TUTORIALS:
        shutil.copy(path, folder / path.name)
    return jupyter_server


@pytest.mark.browser
@pytest.mark.parametrize(
    "path", [p for p in TUTORIALS if p.stem == "10_make_it_faster"], ids=lambda p: p.stem
)
def test_a_tutorial_opens_in_lab_unmodified(page, tutorials, path):
    page.goto(
        f"{tutorials['base']}/lab/workspaces/cs-open-{path.stem}/tree/tutorials/{path.name}"
        f"?token={tutorials['token']}"
    )
    tab = page.locator(".lm-TabBar-tab.jp-mod-current", has_text=path.stem).first
    tab.wait_for(timeout=60_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    page.wait_for_timeout(1500)  # what Lab changes on load, it changes by now
    assert "jp-mod-dirty" not in (tab.get_attribute("class") or ""), (
        f"Lab marks {path.name} modified as soon as it opens"
    )
    assert page.errors == []


def test_every_tutorial_is_checked():
    assert len(TUTORIALS) >= 11
