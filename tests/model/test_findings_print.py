"""Findings print readably: numbered in a terminal, one finding in a few lines, slices too."""

from __future__ import annotations

import compilescope
from compilescope.model.findings.ranked import Findings, text


def test_the_findings_tuple_prints_as_numbered_findings(loaded):
    found = compilescope.findings(loaded("gpt2"))
    assert isinstance(found, Findings) and isinstance(found, tuple)
    assert repr(found) == str(found) == text(found)
    assert repr(found).startswith("1. [graph break] The logging call `logger.warning_once`")
    assert "Finding(kind=" not in repr(found)
    top = found[:2]
    assert isinstance(top, Findings) and len(top) == 2 and repr(top).count("\n2. [") == 1
    assert found[0] is tuple(found)[0]  # an index gives the Finding itself
    assert found == tuple(found)


def test_one_finding_prints_its_what_where_and_fixes(loaded):
    f = compilescope.findings(loaded("gpt2"))[0]
    lines = str(f).splitlines()
    assert lines[0].startswith("[graph break] The logging call")
    assert lines[1] == "  where: tests/workloads.py:81"
    assert lines[2].startswith("  fix: torch._dynamo.config.ignore_logging_functions.add(")
    assert repr(f).startswith("Finding(kind='graph_break'")  # the dataclass repr stays
