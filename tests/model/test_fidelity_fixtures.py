"""The parser against tlparse on the recorded logs: same compile ids, stages and kernel names."""

from __future__ import annotations

import pytest
from compilescope import load_trace
from conftest import PARSER_FIXTURES, unpacked
from fidelity import differences


@pytest.mark.parametrize("name", PARSER_FIXTURES)
def test_matches_tlparse(name, tmp_path):
    log = unpacked(name, tmp_path)
    assert differences(load_trace(log), log, tmp_path / "tlparse") == []


def test_the_comparison_can_fail(tmp_path):
    log = unpacked("graph_break", tmp_path)
    cap = load_trace(log)
    from dataclasses import replace

    short = replace(cap, compiles=cap.compiles[:-1])
    assert any("compile ids" in d for d in differences(short, log, tmp_path / "a"))
    first = cap.compiles[1]
    graphs = {k: v for k, v in first.graphs.items() if k != "dynamo_output_graph"}
    lossy = replace(
        cap, compiles=(cap.compiles[0], replace(first, graphs=graphs), *cap.compiles[2:])
    )
    assert any("stages" in d for d in differences(lossy, log, tmp_path / "b"))
