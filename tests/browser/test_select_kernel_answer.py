"""The browser tests' answer to Lab's "Select Kernel" dialog (browser/conftest.py): the running
session's kernel is chosen, and the run's warnings say so."""

from __future__ import annotations

import nbformat
import pytest
from notebooks.kernel import KERNEL_NAME

from browser.conftest import answer_select_kernel, server_api
from browser.test_views_in_browser import run_cell

pytestmark = [pytest.mark.browser]


def test_the_dialog_is_answered_with_the_running_kernel(page, jupyter_server):
    # Lab asks for a notebook whose kernelspec is not installed; another notebook's session runs.
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "no-such-kernel",
        "display_name": "?",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell("print('ran', 6 * 7)")]
    nbformat.write(nb, jupyter_server["dir"] / "asks.ipynb")
    started = server_api(jupyter_server, "sessions", {"path": "runs.ipynb", "type": "notebook",
                                                      "name": "runs.ipynb", "kernel": {"name": KERNEL_NAME}})  # fmt: skip
    answer_select_kernel(page, "runs.ipynb")
    # A workspace of its own: the default one reopens other tests' notebooks in hidden tabs.
    base, token = jupyter_server["base"], jupyter_server["token"]
    page.goto(f"{base}/lab/workspaces/cs-asks/tree/asks.ipynb?token={token}")
    # Waited for outside Playwright's actions, which would answer it first.
    page.wait_for_function(
        "() => document.querySelector('.jp-Dialog')?.textContent.includes('Select Kernel')"
    )
    with pytest.warns(UserWarning, match="asked which kernel to use for runs.ipynb"):
        page.locator(".jp-Cell .jp-InputPrompt").first.click()
    run_cell(page, 0)
    assert "ran 42" in page.locator(".jp-OutputArea-output").first.inner_text()
    asks = [s for s in server_api(jupyter_server, "sessions") if s["path"] == "asks.ipynb"]
    assert [s["kernel"]["id"] for s in asks] == [started["kernel"]["id"]]
