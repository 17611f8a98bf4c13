"""Rank reports of incomplete records: logs cut short, damaged, empty or missing, and ranks that
never compiled are reported as such (exit code 3), never as a divergence past where they end;
every aspect reads every rank's whole record. No torch needed: recorded logs, edited."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from dataclasses import replace

import pytest
from compilescope import Capture, load_trace, merge_ranks, write_rank
from compilescope.model.ranks.records import ASPECTS, aspect_key
from compilescope.views.offline.ranks_html import ranks_html
from conftest import FIXTURES

# The 2-rank DDP job of tests/distributed (rank 1 recompiles on a longer batch there).
DDP = FIXTURES / "ranks_ddp"
RANK0 = DDP / "dedicated_log_torch_trace_rank_0_fixture.log.gz"


def agreeing_job(folder, rank1_text=None, ranks=2) -> str:
    """Rank 0's log, and copies of it as the other ranks: a job whose ranks agree. Returns
    rank 1's text (to cut it, or `rank1_text` in its place)."""
    text = gzip.open(RANK0, "rt", encoding="utf-8").read()
    (folder / "dedicated_log_torch_trace_rank_0_x.log").write_text(text)
    copy = text.replace('"rank": 0,', '"rank": 1,')
    for rank in range(1, ranks):
        body = text.replace('"rank": 0,', f'"rank": {rank},')
        if rank == 1 and rank1_text is not None:
            body = rank1_text
        (folder / f"dedicated_log_torch_trace_rank_{rank}_x.log").write_text(body)
    return copy


def ranks_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compilescope", "ranks", *args], capture_output=True, text=True
    )


def test_a_log_cut_at_60_percent_is_incomplete_not_diverged(tmp_path):
    """Issue 21's finding: rank 1 killed, its log cut at 60%; the report once said DIVERGED."""
    text = agreeing_job(tmp_path)
    agreeing_job(tmp_path, text[: int(len(text) * 0.6)])
    report = load_trace(tmp_path).compare_ranks()
    assert report.status == "incomplete" and not report.diverged, report.summary()
    assert report.groups == ((0, 1),) and report.divergences == ()
    (gap,) = report.gaps
    assert gap.rank == 1 and "checksum mismatch" in gap.why and "no newline" in gap.why
    assert gap.where.startswith("in compile ") and "(readable up to line " in gap.where
    assert gap.not_compared and gap.reference == (0,)  # rank 0's compiles past the cut
    text_out = report.summary()
    assert "INCOMPLETE: the record of rank 1 is incomplete" in text_out
    assert "DIVERGED" not in text_out and "parts from" not in text_out
    assert f"not compared: {', '.join(gap.not_compared[:2])}" in text_out
    out = ranks_cli(str(tmp_path), "--json", str(tmp_path / "r.json"))
    assert out.returncode == 3, out.stdout + out.stderr
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["status"] == "incomplete" and data["gaps"][0]["rank"] == 1
    html = ranks_html(report)
    assert "data-status='incomplete'" in html and "ranks diverge" not in html


def test_no_cut_anywhere_reads_as_a_divergence(tmp_path):
    """Cut rank 1's log at every 2.5% and at record boundaries inside compiles: always
    incomplete. (A cut exactly between two compiles looks like a log that ended there.)"""
    text = agreeing_job(tmp_path)
    rank1 = tmp_path / "dedicated_log_torch_trace_rank_1_x.log"
    headers = [0] + [i + 1 for i, ch in enumerate(text[:-1]) if ch == "\n" and text[i + 1] != "\t"]
    # Right after a compile's compilation_metrics (and interned strings, of no compile): the
    # one cut a log cannot show.
    between, closed = set(), False
    for a, b in zip(headers, headers[1:], strict=False):
        record = text[a:b]
        closed = '"compilation_metrics"' in record or (closed and '{"str": ' in record)
        if closed:
            between.add(b)
    cuts = [int(len(text) * k / 40) for k in range(1, 40)] + headers[1::7]
    for cut in cuts:
        if cut in between:
            continue
        rank1.write_text(text[:cut])
        report = load_trace(tmp_path).compare_ranks()
        assert report.status == "incomplete", (cut, report.summary())


def test_a_cut_between_two_compiles_says_the_record_agrees_up_to_its_end(tmp_path):
    text = agreeing_job(tmp_path)
    start = text.index('"dynamo_start"', text.index('"frame_id": 3'))  # 4/0 starts next
    agreeing_job(tmp_path, text[: text.rindex("\n", 0, start) + 1])
    report = load_trace(tmp_path).compare_ranks()
    (part,) = report.divergences  # nothing in the log says it was cut: it is a divergence ...
    assert part.aspect == "compile ids" and part.compile_id == "4/0"
    assert "rank 1's record ends after 3/0 and agrees up to there" in part.detail  # ... said so


def test_lost_entries_mid_log_compare_that_compile_by_id_only(tmp_path):
    text = agreeing_job(tmp_path)
    at = text.index("aot_forward_graph", text.index('"frame_id": 4'))
    payload = text.index("\n\t", at) + 2
    damaged = text[:payload] + "X" + text[payload + 1 :]  # its checksum no longer holds
    agreeing_job(tmp_path, damaged)
    cap = load_trace(tmp_path)
    assert cap.rank(1).skipped[0].reason.startswith("payload cut short or altered")
    assert cap.rank(0).skipped == ()  # each rank's own unreadable entries
    report = cap.compare_ranks()
    assert report.status == "incomplete" and report.groups == ((0, 1),), report.summary()
    (gap,) = report.gaps
    assert gap.damaged == ("4/0",) and "1 entries of its log could not be read" in gap.why


@pytest.mark.parametrize(
    "rank1, why",
    [
        ("", "its log is empty"),
        # Only the interned strings before the first compile: it never compiled, or it stopped
        # before its first compile; a log cannot say which.
        (None, "its log holds no compile: it never compiled, or stopped before it did"),
    ],
)
def test_an_empty_log_and_a_rank_that_never_compiled_are_incomplete(tmp_path, rank1, why):
    text = agreeing_job(tmp_path)
    if rank1 is None:
        rank1 = text[: text.index('"dynamo_start"')].rsplit("\n", 1)[0] + "\n"
    agreeing_job(tmp_path, rank1, ranks=3)
    report = load_trace(tmp_path).compare_ranks()
    assert report.ranks == (0, 1, 2) and report.groups == ((0, 2),)
    assert report.status == "incomplete" and report.exit_code == 3
    (gap,) = report.gaps
    assert gap.rank == 1 and gap.nothing and gap.why == why
    assert f"rank 1: {why}; nothing of it was compared" in report.summary()


def test_a_missing_rank_log_is_incomplete_on_the_command_line(tmp_path):
    agreeing_job(tmp_path)
    out = ranks_cli(str(tmp_path), "--world-size", "3")
    assert out.returncode == 3, out.stdout + out.stderr
    assert "rank 2: no log or saved capture of it was found" in out.stdout
    assert ranks_cli(str(tmp_path)).returncode == 0


def test_saved_rank_captures_that_never_compiled_or_stopped_early(tmp_path):
    logged = load_trace(DDP)
    write_rank(replace(logged.rank(0), world_size=3, rank_logs=()), tmp_path)
    # A saved capture is complete: a rank that compiled nothing in the block really did not.
    write_rank(Capture(ranks=(1,), world_size=3), tmp_path)
    # A rank whose code raised: its capture says so (partial).
    stopped = logged.rank(0)
    stopped = replace(stopped, compiles=stopped.compiles[:5], partial="KeyboardInterrupt raised")
    write_rank(replace(stopped, ranks=(2,), rank_logs=(), world_size=3), tmp_path)
    report = merge_ranks(tmp_path).compare_ranks()
    assert report.status == "diverged" and report.groups == ((0, 2), (1,)), report.summary()
    assert "rank 1 parts from ranks 0, 2 at compile 0/0" in report.summary()
    (gap,) = report.gaps
    assert gap.rank == 2 and "KeyboardInterrupt" in gap.why and gap.not_compared
    # write_rank killed midway: only its .partial file is left.
    (tmp_path / "compilescope_rank_1.json").unlink()
    (tmp_path / "compilescope_rank_1.json.partial").write_text('{"format": "compilescope.ca')
    out = ranks_cli(str(tmp_path))
    assert out.returncode == 3 and "never finished" in out.stdout, out.stdout + out.stderr


def test_every_aspect_reads_every_ranks_whole_record():
    """Issue 21: rank 1 recompiles once more; its extra compiles' graph breaks and inputs once
    did not count ("graph breaks: all agree" beside 4 vs 5 graph breaks)."""
    cap = load_trace(DDP)
    report = cap.compare_ranks()
    profiles = report.profiles
    breaks = [sum(len(c.graph_breaks) for c in profiles[r]) for r in (0, 1)]
    assert breaks == [4, 5]
    for aspect, _ in ASPECTS:
        differ = aspect_key(profiles[0], aspect) != aspect_key(profiles[1], aspect)
        assert (report.aspect_groups[aspect] == ((0,), (1,))) == differ, aspect
    assert report.aspect_groups["graph breaks"] == ((0,), (1,))
    assert report.aspect_groups["inputs"] == ((0,), (1,))
    # The same on the other recorded jobs: aspect lines agree with the group lines.
    for job in (FIXTURES / "ranks", DDP, FIXTURES / "ranks_gpu" / "agree"):
        report = load_trace(job).compare_ranks()
        split = [a for a, groups in report.aspect_groups.items() if len(groups) > 1]
        assert bool(split) == report.diverged, (job, split)
    # ranks_job.py's rank 1 recompiles 0/1 with other inputs: inputs differ too now.
    assert load_trace(FIXTURES / "ranks").compare_ranks().aspect_groups["inputs"] == ((0,), (1,))


def test_a_saved_capture_keeps_where_each_rank_log_ends(tmp_path):
    text = agreeing_job(tmp_path)
    agreeing_job(tmp_path, text[: int(len(text) * 0.6)])
    cap = load_trace(tmp_path)
    again = Capture.from_json(cap.to_json())
    assert again.rank_logs == cap.rank_logs and again.rank_logs[1].ends_early
    assert again.compare_ranks().status == "incomplete"
    # Files of an earlier version, without rank_logs, still load (and compare as before).
    data = json.loads(cap.to_json())
    del data["rank_logs"]
    assert Capture.from_json(json.dumps(data)).rank_logs == ()
