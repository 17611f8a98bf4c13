"""Live capture against tlparse: one run, both under TORCH_TRACE and captured; they must agree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from compilescope import Capture, load_trace
from conftest import TESTS, WORKLOAD_FIXTURES
from fidelity import differences


def record(name: str, out: Path) -> tuple[Capture, Path]:
    subprocess.run(
        [sys.executable, str(TESTS / "fixtures" / "record.py"), name, str(out)],
        check=True,
        capture_output=True,
    )
    (log,) = (out / "trace").glob("*.log")
    return Capture.from_json((out / "capture.json").read_text()), log


@pytest.mark.torch
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n == "gpt2" else n for n in WORKLOAD_FIXTURES],
)
def test_live_capture_matches_tlparse(name, tmp_path):
    live, log = record(name, tmp_path / "run")
    assert differences(live, log, tmp_path / "tl_live") == []
    # The log read back gives the same compile ids and graphs as the live capture.
    offline = load_trace(log)
    assert offline.compile_ids == live.compile_ids
    for a, b in zip(offline, live, strict=True):
        assert {k: [g.text for g in v] for k, v in a.graphs.items()} == {
            k: [g.text for g in v] for k, v in b.graphs.items()
        }
