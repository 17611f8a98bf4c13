"""The benchmarks' runner: RESULTS.md is what its committed rows make, and every row is whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import results_page  # noqa: E402
import rows  # noqa: E402
import suites  # noqa: E402


def runner(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_results_md_is_what_the_committed_rows_make():
    # Fails where a figure was edited by hand, or rows were added without `results`.
    page = results_page.page(rows.committed(), suites.modules())
    assert (BENCHMARKS / "RESULTS.md").read_text() == page, "run: python -m benchmarks results"
    assert page.count("\n") <= 600


def test_every_row_has_every_field_and_a_figure():
    committed = rows.committed()
    names = set(suites.modules())
    assert committed and set(committed) <= names
    for suite, found in committed.items():
        assert found, suite
        for r in found:
            assert tuple(r) == rows.FIELDS, (suite, r)
            assert r["suite"] == suite and r["case"] and r["metric"] and r["command"], r
            assert r["machine"] and r["date"] and isinstance(r["n"], int) and r["n"] >= 1, r
            if r["unit"] == "text":
                assert isinstance(r["median"], str), r
                continue
            assert isinstance(r["median"], (int, float)), r
            if r["low"] is not None:
                assert r["low"] <= r["median"] <= r["high"] and r["n"] > 1, r


def test_committed_rows_are_their_records_converted():
    # A committed row is a measurement someone recorded: each suite's rows are what its
    # records (RECORDED) convert to, record by record.
    for name, module in suites.modules().items():
        path = rows.RESULTS / f"{name}.jsonl"
        assert rows.recorded(module) == (rows.read(path) if path.exists() else []), name


def test_list_names_every_suite_and_every_suite_module_registers():
    modules = suites.modules()
    files = {p.stem for p in (BENCHMARKS / "suites").glob("*.py")} - {"__init__"}
    assert files == set(suites.MODULES)
    assert len(modules) == len(suites.MODULES)
    for name, module in modules.items():
        assert set(module.SUITE) == {"name", "device", "measures"}, name
        assert callable(module.run) and callable(module.convert), name
    listed = runner("list")
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == list(modules)


def test_at_most_ten_python_files_at_the_top():
    assert len(list(BENCHMARKS.glob("*.py"))) <= 10


def test_a_cheap_cpu_suite_writes_rows_of_the_format(tmp_path):
    done = runner("run", "cpu-layout", "--out", str(tmp_path), "--sizes", "60", "--repeats", "2")
    assert done.returncode == 0, done.stderr
    found = rows.read(tmp_path / "cpu-layout.jsonl")
    assert {r["metric"] for r in found} == {"ours: time", "ours: crossings"}
    for r in found:
        assert tuple(r) == rows.FIELDS and r["suite"] == "cpu-layout"
        assert r["case"].startswith("60 nodes") and r["machine"] and r["date"] and r["python"]
    timed = next(r for r in found if r["metric"] == "ours: time")
    assert timed["n"] == 2 and timed["low"] <= timed["median"] <= timed["high"]
    assert timed["command"].endswith("run cpu-layout --sizes 60 --repeats 2")
