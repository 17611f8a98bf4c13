"""`report --pages`: a folder with a script-free index and a page per compile id; rank logs read
in parallel give the same index as read one by one."""

from __future__ import annotations

import re
import subprocess
import sys

from compilescope.report_job import write_report_folder
from compilescope.views.offline.report_index import index_html
from compilescope.views.static_files import static_text
from conftest import FIXTURES


def test_pages_of_a_rank_folder(tmp_path):
    out = tmp_path / "job.html"  # a folder named after it: job/
    done = subprocess.run(
        [sys.executable, "-m", "compilescope", "report", str(FIXTURES / "ranks_ddp"), "--pages",
         "-o", str(out), "--jobs", "2"], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "job"
    assert f"wrote {folder / 'index.html'}" in done.stdout and "ranks: diverged" in done.stdout
    index = (folder / "index.html").read_text()
    assert "<script" not in index  # opens at once: nothing to run
    links = re.findall(r"<a href='(compiles/[^']+)'>([^<]+)</a>", index)
    assert len(links) == 27 and ("compiles/rank1_0_1.html", "rank1:0/1") in links
    for href, cid in links:
        page = (folder / href).read_text()
        assert "<script src='../report.js'></script>" in page and f'"id":"{cid}"' in page
    assert (folder / "report.js").read_text() == static_text("dist/report.js")
    assert "parts from rank 0" in index


def test_parallel_and_serial_reads_write_the_same_report(tmp_path):
    one = write_report_folder(FIXTURES / "ranks_ddp", tmp_path / "serial", jobs=1)
    two = write_report_folder(FIXTURES / "ranks_ddp", tmp_path / "parallel", jobs=2)
    assert one[1] == two[1] == 27 and one[2] is not None and two[2] is not None
    assert one[2].to_dict() == two[2].to_dict()
    assert one[0].read_text() == two[0].read_text()
    serial = sorted(p.name for p in (tmp_path / "serial" / "compiles").iterdir())
    assert serial == sorted(p.name for p in (tmp_path / "parallel" / "compiles").iterdir())


def test_a_missing_rank_counts_in_the_folder_report(tmp_path):
    _, _, report = write_report_folder(FIXTURES / "ranks_ddp", tmp_path / "r", world_size=3, jobs=1)
    assert report is not None and report.status == "diverged" and 2 in report.missing_ranks
    index = (tmp_path / "r" / "index.html").read_text()
    assert "rank 2" in index


def test_small_logs_still_get_one_file(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "compilescope", "report", str(FIXTURES / "graph_break.log.gz")],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["compilescope_report.html"]


def test_a_finding_on_every_rank_is_one_block_on_ranks_0_to_n(tmp_path):
    index, _, report = write_report_folder(FIXTURES / "ranks_gpu" / "agree", tmp_path, jobs=1)
    assert report is not None and report.status == "agree"
    html = index.read_text()
    found = html.split("<h3>Findings</h3>", 1)[1].split("<h3>Compile ids", 1)[0]
    # Each finding once, not once per rank: the breaks, the eager frame, the recompile (the
    # efficient-attention kernels, which Inductor leaves to a library on purpose, are none).
    assert found.count("<li data-kind=") == 4
    assert found.count("(on ranks 0, 1)") == 4 and "rank0:" not in found
    assert "[rank" not in found and "[1/0, 1/0_1, 2/0" in found  # compile ids without the rank
    many = index_html("t", "h", "", [("<p>f</p>", list(range(64)))], [], [])
    assert "(on ranks 0-63)" in many
