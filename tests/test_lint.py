"""ruff lint and format, and mypy, as part of the test command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ruff() -> str:
    return shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))


def test_ruff_check():
    result = subprocess.run(
        [ruff(), "check", "ext", "tests", "benchmarks", "kernels"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format():
    result = subprocess.run(
        [ruff(), "format", "--check", "ext", "tests", "benchmarks", "kernels"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy():
    # Files and strictness come from pyproject.toml's [tool.mypy]; 13 s on 2 cores with no
    # cache, under 1 s with one (`make test` keeps it outside the clone: MYPY_CACHE_DIR).
    result = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
