"""The test setup's shortcut holds: the timed tier imports every file with a timing test."""

from __future__ import annotations

import pytest
from conftest import FILES_WITH_TIMING_TESTS, TESTS, TIMING_SAYS, pytest_ignore_collect


def test_every_timing_test_is_in_a_file_the_timed_tier_imports():
    if not FILES_WITH_TIMING_TESTS:
        pytest.skip("no timing test was collected: this checks a run of the whole suite")
    unseen = [p for p in FILES_WITH_TIMING_TESTS if TIMING_SAYS not in p.read_text()]
    assert not unseen, f"the timed tier would not import these: {unseen}"


class _Config:
    def __init__(self, markexpr: str) -> None:
        self.markexpr = markexpr

    def getoption(self, name: str) -> str:
        assert name == "markexpr"
        return self.markexpr


def test_only_the_timed_tier_skips_files_without_a_timing_test():
    without = TESTS / "test_api.py"
    assert pytest_ignore_collect(without, _Config("timing")) is True
    assert pytest_ignore_collect(TESTS / "live" / "test_timings.py", _Config("timing")) is False
    assert pytest_ignore_collect(without, _Config("not timing")) is None
    assert pytest_ignore_collect(TESTS / "conftest.py", _Config("timing")) is None
