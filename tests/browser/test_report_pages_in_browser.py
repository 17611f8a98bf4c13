"""`report --pages` of a 2-rank job in Chromium, offline: the index (rank report, findings,
compile ids) opens, and a compile id's link opens its page with the view of that compile."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import FIXTURES

pytestmark = pytest.mark.browser


def test_index_of_a_multi_rank_report_leads_to_a_compile_page(page, tmp_path):
    out = tmp_path / "job"
    done = subprocess.run(
        [sys.executable, "-m", "compilescope", "report", str(FIXTURES / "ranks_ddp"), "--pages",
         "-o", str(out)], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # Offline: any request that is not a file of the report fails the test.
    asked = []
    page.route("**/*", lambda route: (asked.append(route.request.url), route.continue_()))
    page.goto((out / "index.html").as_uri())
    assert "rank 1 parts from rank 0" in page.locator(".cs-ranks").inner_text()
    link = page.locator("[data-compile='rank1:0/1'] a")
    assert link.inner_text() == "rank1:0/1"
    link.click()
    page.wait_for_selector(".cs-root[data-ready='1']", timeout=20_000)
    assert page.url.endswith("/compiles/rank1_0_1.html")
    head = page.locator(".cs-head").inner_text()
    assert "1 compile ids" in head
    page.locator(".cs-tab[data-tab='graphs']").click()
    assert (
        page.locator(".cs-pane[data-pane='graphs'] select option")
        .first.inner_text()
        .startswith("rank1:0/1")
    )
    page.locator("[data-index-link]").click()
    page.wait_for_selector("[data-index-compiles]")
    assert page.errors == [] and page.dialogs == [], page.errors
    assert asked and all(url.startswith(out.as_uri()) for url in asked), asked
