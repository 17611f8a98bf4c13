"""Live capture against tlparse: one run, both under TORCH_TRACE and captured; they must agree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from compilescope import Capture, load_trace
from conftest import TESTS, WORKLOAD_FIXTURES
from fidelity import differences


@pytest.fixture(scope="module")
def recorded(request, tmp_path_factory) -> Path:
    """Every workload this session selected, recorded once, in one process (record.py says
    how each starts afresh): OUTDIR/WORKLOAD/{trace/*.log,capture.json}."""
    selected = [
        item.callspec.params["name"]
        for item in request.session.items
        if item.originalname == "test_live_capture_matches_tlparse"
    ]
    out = tmp_path_factory.mktemp("recorded")
    done = subprocess.run(
        [sys.executable, str(TESTS / "fixtures" / "record.py"), str(out), *selected],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return out


@pytest.mark.torch
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n == "gpt2" else n for n in WORKLOAD_FIXTURES],
)
def test_live_capture_matches_tlparse(name, recorded, tmp_path):
    run = recorded / name
    (log,) = (run / "trace").glob("*.log")
    live = Capture.from_json((run / "capture.json").read_text())
    assert differences(live, log, tmp_path / "tl_live") == []
    # The log read back gives the same compile ids and graphs as the live capture.
    offline = load_trace(log)
    assert offline.compile_ids == live.compile_ids
    for a, b in zip(offline, live, strict=True):
        assert {k: [g.text for g in v] for k, v in a.graphs.items()} == {
            k: [g.text for g in v] for k, v in b.graphs.items()
        }
