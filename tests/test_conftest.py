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


def test_no_name_the_tests_import_by_hides_an_installed_package():
    """tests/ is first on sys.path (conftest.py): a folder or module of it named as a package
    installed in the environment hides that package from everything the tests run. transformers
    5.25 began to import Hugging Face's `kernels`, and `tests/kernels/` (now triton_kernels/)
    broke every GPT-2 test with "cannot import name 'CUDAProperties' from 'kernels'"."""
    import importlib.metadata

    ours = {p.name for p in TESTS.iterdir() if (p / "__init__.py").exists()}
    ours |= {p.stem for p in TESTS.glob("*.py")}
    installed = set()
    for dist in importlib.metadata.distributions():
        top = dist.read_text("top_level.txt")
        names = top.split() if top else []
        names += [f.parts[0].removesuffix(".py") for f in dist.files or () if len(f.parts) >= 1]
        installed.update(n for n in names if n.isidentifier())
    hidden = sorted(ours & installed)
    assert not hidden, f"these names in tests/ hide installed packages: {hidden}"
