"""The rank report inside the result view (offline report), on the 2-GPU job's logs."""

from __future__ import annotations

import compilescope
import pytest
from conftest import FIXTURES

pytestmark = pytest.mark.browser


def test_report_of_a_job_shows_where_ranks_part(page, tmp_path):
    cap = compilescope.load_trace(FIXTURES / "ranks_gpu" / "diverge")
    path = compilescope.to_html(cap, tmp_path / "ranks.html")
    page.goto(f"file://{path}")
    page.wait_for_selector(".cs-root[data-ready='1']", timeout=20_000)
    report = page.locator(".cs-rank-report").inner_text()
    assert "ranks diverge: 2 groups" in report
    assert "rank 1 parts from rank 0" in report and "compile 0/1" in report
    assert page.errors == [] and page.dialogs == []


def test_one_rank_has_no_rank_report(tmp_path):
    from compilescope.views.result_view import view_data

    assert (
        view_data(compilescope.load_trace(FIXTURES / "module_backward.log.gz"))["ranks_html"] == ""
    )
    agree = view_data(compilescope.load_trace(FIXTURES / "ranks_gpu" / "agree"))["ranks_html"]
    assert "all 2 ranks agree" in agree
