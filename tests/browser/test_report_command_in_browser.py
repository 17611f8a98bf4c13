"""`python -m compilescope report` on a log, a folder of ranks (one cut short) and a saved
capture: each HTML file opens in Chromium, offline, without errors."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest
from conftest import FIXTURES

pytestmark = pytest.mark.browser


def report(source, out) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compilescope", "report", str(source), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def cut_job(folder) -> None:
    """The DDP job's rank 0 log, and a copy of it as rank 1 cut at 60% (a killed rank)."""
    folder.mkdir()
    text = gzip.open(FIXTURES / "ranks_ddp" / "dedicated_log_torch_trace_rank_0_fixture.log.gz", "rt").read()  # fmt: skip
    (folder / "dedicated_log_torch_trace_rank_0_x.log").write_text(text)
    copy = text.replace('"rank": 0,', '"rank": 1,')
    (folder / "dedicated_log_torch_trace_rank_1_x.log").write_text(copy[: int(len(copy) * 0.6)])


def test_the_report_command_opens_in_a_browser(page, tmp_path):
    cut_job(tmp_path / "job")
    saved = tmp_path / "capture.json"
    done = subprocess.run(
        [sys.executable, "-m", "compilescope", "summary", str(FIXTURES / "graph_break.log.gz"),
         "--json", str(saved)], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    sources = {
        "log": FIXTURES / "module_backward.log.gz",
        "ranks": tmp_path / "job",
        "saved": saved,
    }
    for name, source in sources.items():
        out = tmp_path / f"{name}.html"
        report(source, out)
        page.goto(out.as_uri())
        page.wait_for_selector(".cs-root[data-ready='1']", timeout=20_000)
        assert page.errors == [] and page.dialogs == [], (name, page.errors)
        if name == "ranks":
            text = page.locator(".cs-rank-report").inner_text()
            assert "incomplete" in text and "ranks diverge" not in text
            assert "rank 1: its record ends early" in text and "not compared" in text
