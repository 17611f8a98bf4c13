"""A log that ends inside a compile marks that compile incomplete, on its own line, in the text
summary, the view's data and the report; a whole log marks nothing (issue 30: a cut compile
showed post_grad 259 nodes and 15 kernels of 531 and 26, with no mark). No torch needed."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from dataclasses import replace

import jsonschema
import pytest
from compilescope import Capture, load_trace
from compilescope.model.serialize import json_schema
from compilescope.views.offline.report import report_html
from compilescope.views.view_data import capture_data
from compilescope.views.widget import static_text
from conftest import FIXTURES

GPT2 = FIXTURES / "gpt2.log.gz"
CUT_ID = "1/0_1"  # the model's forward and backward: 531 post-grad nodes, 26 kernels in all


def records_through(text: str, event: str, after: str) -> str:
    """`text` up to the end of the first `event` record that follows `after`: whole records,
    as a log of a process killed just after writing it reads."""
    at = text.index(f'"{event}"', text.index(after))
    end = text.index("\n", at) + 1
    while text.startswith("\t", end):  # the record's payload lines
        end = text.index("\n", end) + 1
    return text[:end]


@pytest.fixture(scope="module")
def cut_log(tmp_path_factory):
    """gpt2.log.gz cut after compile 1/0_1's first post-grad graph (its backward not logged)."""
    text = gzip.open(GPT2, "rt", encoding="utf-8").read()
    head = '"frame_id": 1, "frame_compile_id": 0, "attempt": 1'
    path = tmp_path_factory.mktemp("cut") / "gpt2_cut.log"
    path.write_text(records_through(text, "inductor_post_grad_graph", head))
    return path


@pytest.fixture(scope="module")
def cut(cut_log):
    return load_trace(cut_log)


def test_the_compile_the_log_ends_inside_is_marked_and_no_other(cut):
    marked = [str(c.id) for c in cut if c.incomplete]
    assert marked == [CUT_ID]
    assert "the log ends inside it" in cut[CUT_ID].incomplete
    # Its counts are of what was read: the forward's post-grad graph alone.
    post_grad = cut[CUT_ID].graphs["inductor_post_grad_graph"]
    assert sum(g.op_count for g in post_grad) < 531 and len(cut[CUT_ID].kernels) < 26


def test_a_whole_log_marks_nothing():
    whole = load_trace(GPT2)
    assert not any(c.incomplete for c in whole)
    assert "INCOMPLETE" not in str(whole)
    assert not any(c["incomplete"] for c in capture_data(whole)["compiles"])
    # Restarted attempts and compiled autograd's own id get no compilation_metrics in whole
    # logs either: none of them is marked.
    for name in ("graph_break", "compiled_autograd", "gpu_module_backward"):
        assert not any(c.incomplete for c in load_trace(FIXTURES / f"{name}.log.gz")), name


def test_the_summary_marks_it_on_its_own_line(cut):
    lines = str(cut).splitlines()
    (line,) = [x for x in lines if "INCOMPLETE" in x]
    assert line.split()[0] == CUT_ID and "post_grad" in line
    assert "the log ends inside it" in line


def test_the_view_data_and_the_report_mark_it(cut, tmp_path):
    rows = {c["id"]: c for c in capture_data(cut)["compiles"]}
    assert rows[CUT_ID]["incomplete"] == cut[CUT_ID].incomplete
    assert all(not r["incomplete"] for cid, r in rows.items() if cid != CUT_ID)
    # The compile table draws the mark (static/result_overview.js, bundled in static/dist).
    assert "data-incomplete" in static_text("dist/result.js")
    assert "data-incomplete" in static_text("dist/report.js")
    html = report_html(cut)
    data = json.loads(html.split("id='cs-data'>", 1)[1].split("</script>", 1)[0])
    assert [c["id"] for c in data["compiles"] if c["incomplete"]] == [CUT_ID]
    noscript = html.split("<noscript>", 1)[1].split("</noscript>", 1)[0]
    (row,) = [r for r in noscript.split("<tr>") if "INCOMPLETE" in r]
    assert row.startswith(f"<td>{CUT_ID} \u21bb 1/0</td>")  # its row, the restart folded in
    assert "INCOMPLETE" not in report_html(load_trace(GPT2)).split("<noscript>", 1)[1]


def test_the_report_command_marks_it(cut_log, tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "compilescope", "report", str(cut_log), "-o", "r.html"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "r.html").read_text("utf-8")
    assert "INCOMPLETE: the log ends inside it" in page


def test_the_mark_is_kept_in_json(cut):
    text = cut.to_json()
    jsonschema.validate(json.loads(text), json_schema())
    again = Capture.from_json(text)
    assert again[CUT_ID].incomplete == cut[CUT_ID].incomplete
    assert [str(c.id) for c in again if c.incomplete] == [CUT_ID]
    assert "incomplete" not in json.loads(load_trace(GPT2).to_json())["compiles"][0]


def test_a_rank_log_cut_inside_a_compile_marks_it_as_the_rank_report_reads_it(tmp_path):
    """One reading of where a log ends: the compiles the rank report compares as far as
    logged include the one the capture marks."""
    ddp = FIXTURES / "ranks_ddp"
    for rank in (0, 1):
        name = f"dedicated_log_torch_trace_rank_{rank}_fixture.log.gz"
        text = gzip.open(ddp / name, "rt", encoding="utf-8").read()
        if rank == 1:
            text = records_through(
                text, "aot_forward_graph", '"frame_id": 4, "frame_compile_id": 1'
            )
        (tmp_path / name.replace(".gz", "")).write_text(text)
    cap = load_trace(tmp_path)
    marked = [str(replace(c.id, rank=None)) for c in cap.rank(1) if c.incomplete]
    assert marked == ["4/1"] and not any(c.incomplete for c in cap.rank(0))
    (gap,) = cap.compare_ranks().gaps
    assert set(marked) <= set(gap.in_part)
