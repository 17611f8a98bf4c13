"""Rank aspects compare whole records: a break's full reason and user frame, a recompile's full
guard (issue 30: two ranks breaking at one line for different reasons once read "all agree",
their reasons' first line being torch's generic header). No torch needed: recorded logs."""

from __future__ import annotations

import gzip
import hashlib
import re
import subprocess
import sys

from compilescope import load_trace
from compilescope.views.offline.ranks_html import ranks_html
from conftest import FIXTURES

# tests/fixtures/ranks_break_job.py: rank 0 calls `print`, rank 1 `os.getpid`, at one line.
BREAKS = FIXTURES / "ranks_breaks"
DDP_RANK1 = FIXTURES / "ranks_ddp" / "dedicated_log_torch_trace_rank_1_fixture.log.gz"
HEADER = "Encountered graph break when attempting to trace CALL"


def ranks_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compilescope", "ranks", *args], capture_output=True, text=True
    )


def test_two_ranks_breaking_at_one_line_for_different_reasons_diverge():
    cap = load_trace(BREAKS)
    first = {r: cap.rank(r).graph_breaks[0][1] for r in (0, 1)}
    # What the report once compared: the same line, the same first line of the reason.
    assert first[0].location == first[1].location
    assert first[0].reason.splitlines()[0] == first[1].reason.splitlines()[0]
    assert first[0].reason.startswith(HEADER)
    report = cap.compare_ranks()
    assert report.status == "diverged" and report.exit_code == 1, report.summary()
    split = [a for a, groups in report.aspect_groups.items() if len(groups) > 1]
    assert split == ["graph breaks"]
    (part,) = report.divergences
    assert part.aspect == "graph breaks"
    # The report names both reasons and the user's frame where they break.
    assert "ranks_break_job.py:20 in step" in part.detail
    assert "`print`" in part.detail and "posix.getpid" in part.detail
    assert "\n" not in str(part)  # one line of the report
    html = ranks_html(report)
    assert "posix.getpid" in html and "`print`" in html and "ranks diverge" in html
    out = ranks_cli(str(BREAKS))
    assert out.returncode == 1, out.stdout + out.stderr
    assert "DIVERGED" in out.stdout and "all ranks agree" not in out.stdout
    assert "`print`" in out.stdout and "posix.getpid" in out.stdout


def edited(text: str, old: str, new: str) -> str:
    """`text` with `old` (found once, in a payload) replaced, and that record's checksum made
    to match: torch writes the md5 of each payload into its header's `has_payload`."""
    assert text.count(old) == 1
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if old in line)
    head = next(i for i in range(at, -1, -1) if not lines[i].startswith("\t"))
    end = next(i for i in range(head + 1, len(lines)) if not lines[i].startswith("\t"))
    lines[at] = lines[at].replace(old, new)
    digest = hashlib.md5("\n".join(x[1:] for x in lines[head + 1 : end]).encode()).hexdigest()
    lines[head] = re.sub(r'"has_payload": "\w+"', f'"has_payload": "{digest}"', lines[head])
    return "\n".join(lines)


def _as_ranks(folder, text: str, edit=None) -> None:
    """`text` (rank 1's log) as ranks 0 and 1; `edit` changes rank 1's copy."""
    (folder / "dedicated_log_torch_trace_rank_0_x.log").write_text(
        text.replace('"rank": 1,', '"rank": 0,')
    )
    (folder / "dedicated_log_torch_trace_rank_1_x.log").write_text(edit(text) if edit else text)


def test_a_recompile_guard_differing_past_its_first_line_diverges(tmp_path):
    text = gzip.open(DDP_RANK1, "rt", encoding="utf-8").read()
    _as_ranks(tmp_path, text)
    assert not load_trace(tmp_path).compare_ranks().diverged  # copies agree
    # 4/2's second guard failure ends in the user's stack: another line of it on rank 1.
    old = '\\", line 35, in forward\\n'
    _as_ranks(tmp_path, text, lambda t: edited(t, old, old.replace("35", "36")))
    report = load_trace(tmp_path).compare_ranks()
    assert report.diverged, report.summary()
    (part,) = report.divergences
    assert (part.aspect, part.compile_id) == ("compile ids", "4/2")
    assert "line 36, in forward" in part.detail and "line 35, in forward" in part.detail


def test_one_reason_at_one_line_in_another_user_function_diverges(tmp_path):
    """The user frame of a break is compared whole: its function too, not only its line."""
    text = gzip.open(BREAKS / "dedicated_log_torch_trace_rank_0_fixture.log.gz", "rt").read()
    old = 'ranks_break_job.py", line 20, in step'
    (tmp_path / "dedicated_log_torch_trace_rank_0_x.log").write_text(text)
    rank1 = text.replace('"rank": 0,', '"rank": 1,')
    (tmp_path / "dedicated_log_torch_trace_rank_1_x.log").write_text(rank1)
    assert not load_trace(tmp_path).compare_ranks().diverged  # copies agree
    rank1 = edited(rank1, old, old.replace("in step", "in other_step"))  # its user traceback
    (tmp_path / "dedicated_log_torch_trace_rank_1_x.log").write_text(rank1)
    report = load_trace(tmp_path).compare_ranks()
    (part,) = report.divergences
    assert part.aspect == "graph breaks", report.summary()
    assert "ranks_break_job.py:20 in other_step" in part.detail
    assert "ranks_break_job.py:20 in step" in part.detail
