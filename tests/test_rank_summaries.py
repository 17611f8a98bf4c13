"""Jobs past one machine: each rank writes its summary inside the job (`write_rank`), and the
rank report is merged from the summaries alone, equal to the one read from the whole logs."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys

import pytest
from compilescope import Capture, load_trace, write_rank
from compilescope.report_job import rank_report, write_report_folder
from compilescope.trace import reader
from compilescope.trace.rank_files import compare_saved_ranks
from conftest import FIXTURES


def three_ranks(tmp_path):
    """The recorded 2-rank DDP job, its rank 0 again as rank 2 (a third rank that agrees)."""
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURES / "ranks_ddp", logs)
    zero = next(logs.glob("*rank_0_*"))
    text = gzip.decompress(zero.read_bytes()).replace(b'"rank": 0', b'"rank": 2')
    (logs / zero.name.replace("rank_0_", "rank_2_")).write_bytes(gzip.compress(text))
    return logs


def summarise(logs, folder, full):
    """What each rank does inside the job: its own capture (here, read from its own log)."""
    for log in sorted(logs.iterdir()):
        write_rank(load_trace(log), folder, full=full)


def nothing_whole(monkeypatch):
    """Fail on opening any log or whole capture; count the whole captures asked for."""
    opened = []

    def no_log(file):
        raise AssertionError(f"a log was opened: {file}")

    def whole(text):
        opened.append(len(text))
        return real(text)

    real = Capture.from_json
    monkeypatch.setattr(reader, "_read", no_log)
    monkeypatch.setattr(Capture, "from_json", staticmethod(whole))
    return opened


@pytest.mark.parametrize("full", [True, False])
def test_three_ranks_merged_from_summaries_equal_the_whole_logs(tmp_path, monkeypatch, full):
    logs = three_ranks(tmp_path)
    expected = load_trace(logs).compare_ranks()
    summarise(logs, tmp_path / "job", full)
    names = sorted(p.name for p in (tmp_path / "job").iterdir())
    assert [n for n in names if n.endswith(".summary.json")] == [
        f"compilescope_rank_{r}.summary.json" for r in range(3)
    ]
    assert len(names) == (6 if full else 3)
    opened = nothing_whole(monkeypatch)
    merged = compare_saved_ranks(tmp_path / "job")
    assert opened == []  # the compile ids differ: no graph had to be read
    assert merged.to_dict() == expected.to_dict()
    assert merged.groups == ((0, 2), (1,)) and merged.status == "diverged"
    assert rank_report(tmp_path / "job").to_dict() == expected.to_dict()


def test_graphs_that_differ_open_only_two_whole_captures_or_none(tmp_path, monkeypatch):
    logs = FIXTURES / "ranks"  # rank 1 multiplies by 2 where rank 0 does not
    expected = load_trace(logs).compare_ranks()
    summarise(logs, tmp_path / "whole", full=True)
    summarise(logs, tmp_path / "summaries", full=False)
    opened = nothing_whole(monkeypatch)
    merged = compare_saved_ranks(tmp_path / "whole")
    assert merged.to_dict() == expected.to_dict() and len(opened) == 2  # to name the node
    assert "first differs at 'call_function operator.mul" in merged.divergences[0].detail
    bare = compare_saved_ranks(tmp_path / "summaries")
    assert len(opened) == 2  # nothing more was read
    # Without the whole captures, the report says which graph differs, not which node.
    assert bare.groups == expected.groups and bare.divergences[0].aspect == "graphs"
    assert "dynamo_output_graph" in bare.divergences[0].detail


def test_command_line_reads_a_folder_of_summaries(tmp_path):
    logs = three_ranks(tmp_path)
    summarise(logs, tmp_path / "job", full=False)

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "compilescope", *args], capture_output=True, text=True
        )

    from_logs, from_summaries = run("ranks", str(logs)), run("ranks", str(tmp_path / "job"))
    assert from_logs.returncode == from_summaries.returncode == 1, from_summaries.stderr
    body = from_logs.stdout.split("\n", 1)[1]
    assert from_summaries.stdout.split("\n", 1)[1] == body
    missing = run("ranks", str(tmp_path / "job"), "--world-size", "4")
    assert missing.returncode == 1 and "rank 3: no log or saved capture" in missing.stdout
    summary = run("summary", str(tmp_path / "job"))
    assert summary.returncode == 2 and "only rank summaries" in summary.stderr


def test_report_pages_of_summaries_and_some_whole_captures(tmp_path):
    logs = three_ranks(tmp_path)
    job = tmp_path / "job"
    summarise(logs, job, full=False)
    write_rank(load_trace(next(logs.glob("*rank_1_*"))), job)  # rank 1 saved whole too
    index, count, report = write_report_folder(job, tmp_path / "out", jobs=1)
    assert report is not None and report.groups == ((0, 2), (1,))
    assert count == len(load_trace(logs).rank(1).compiles)  # pages of rank 1 only
    html = index.read_text()
    assert "rank1:0/1" in html and "rank0:0/0" not in html and "parts from ranks 0, 2" in html
