"""The command line: `python -m compilescope summary LOG` and `demo` (the README's first command)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import FIXTURES


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compilescope", *args], capture_output=True, text=True
    )


def test_summary_of_a_log(tmp_path):
    out = run("summary", str(FIXTURES / "graph_break.log.gz"), "--json", str(tmp_path / "c.json"))
    assert out.returncode == 0, out.stderr
    assert "3 compile ids" in out.stdout and "graph break at" in out.stdout
    assert json.loads((tmp_path / "c.json").read_text())["format"] == "compilescope.capture"


def test_summary_of_a_missing_path_says_which():
    out = run("summary", "/no/such/trace")
    assert out.returncode == 2 and "/no/such/trace" in out.stderr


@pytest.mark.torch
def test_demo_prints_a_capture():
    out = run("demo")
    assert out.returncode == 0, out.stderr
    assert "1 compile ids" in out.stdout and "kernels:" in out.stdout
    assert "cpp_fused" in out.stdout
