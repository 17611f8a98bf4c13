"""The command line: `python -m compilescope summary LOG`, `demo`, and the README's first command."""

from __future__ import annotations

import json
import os
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


def test_the_readmes_first_command_opens_the_quickstart():
    import re
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text()
    first = re.search(r"```bash\n(make [a-z-]+)", readme)
    assert first, "the README's first command is not a make target"
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # make -n prints what the target would run, without running it.
    plan = subprocess.run(
        [*first.group(1).split(), "-n"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    # As root (most containers) JupyterLab needs --allow-root, which the target adds there.
    opened = re.search(r"jupyter lab (--allow-root )?(\S+)", plan)
    assert opened and opened.group(2) == "notebooks/01_quickstart.ipynb", plan
    assert bool(opened.group(1)) == (os.getuid() == 0), plan
    assert (root / opened.group(2)).exists()
