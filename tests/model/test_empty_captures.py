"""Every view of an empty or partial capture: 0 compile ids (code compiled before the block),
only the user's real steps timed, a compile with no graphs or kernels, timings missing their
samples. None may raise, and each says what there is (issue 30 item 7); no torch."""

from __future__ import annotations

import dataclasses
import json
import warnings

import compilescope
import pytest
from compilescope.model.capture import Capture
from compilescope.model.compile import Compile
from compilescope.model.compile_id import CompileId
from compilescope.model.measured.timing import (
    GraphShare,
    GraphTiming,
    KernelTiming,
    RealSteps,
    Sample,
    Timings,
)
from compilescope.model.partition import BudgetSweep
from compilescope.model.serialize import FORMAT, VERSION
from compilescope.views import tables
from compilescope.views.charts import figures
from compilescope.views.offline.report import report_html
from compilescope.views.offline.summary_html import CaptureView, capture_html
from compilescope.views.result_view import fallback_html, result_view, view_data

EVIL = '"><img src=x onerror=alert(1)></script><script>alert(2)</script>'
NOTHING = "no compile ids in this capture: "


def real_steps_only() -> Capture:
    """What a capture of code compiled before the block looks like: steps timed, no compile ids."""
    real = RealSteps(device="cpu", compiled=Sample(0.01, 0.009, 0.011, 10))
    return Capture(source="live", timings=Timings(device="cpu", real_steps=real))


def partial_compiles() -> Capture:
    """A compile with no graphs or kernels, one that failed, a graph timing with no samples,
    a kernel timed at 0 us and real steps whose graph share ran no kernels."""
    real = RealSteps(
        device="cpu",
        compiled=Sample(0.01, 0.009, 0.011, 10),
        split_wall=Sample(0.012, 0.011, 0.013, 5),
        graphs=(GraphShare("0/0", "forward", 0.0, 0),),
    )
    timings = Timings(
        device="cpu",
        graphs=(GraphTiming("0/0", "nothing to run", note="no graph to run"),),
        kernels=(KernelTiming("0/0", "cpp_fused_0", Sample(0.0, 0.0, 0.0, 3), 0.0),),
        real_steps=real,
    )
    compiles = (Compile(CompileId.parse("0/0")), Compile(CompileId.parse("1/0"), failure="boom"))
    return Capture(compiles=compiles, source="live", timings=timings)


CAPTURES = {
    "empty": Capture,
    "empty_live": lambda: Capture(source="live", torch_version="2.13.0"),
    "minimal_json": lambda: Capture.from_json(json.dumps({"format": FORMAT, "version": VERSION})),
    "real_steps_only": real_steps_only,
    "steps_not_timed": lambda: Capture(
        source="live", timings=Timings(device="cpu", real_steps_note="no optimizer.step() ran")
    ),
    "partial_compiles": partial_compiles,
}


@pytest.fixture(params=sorted(CAPTURES))
def capture(request) -> Capture:
    return CAPTURES[request.param]()


def test_no_view_raises_or_warns(capture, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a chart of nothing must not even warn
        assert str(capture).startswith("compilescope capture: ")
        data = view_data(capture)
        json.dumps(data)  # JSON-ready for the widget and the report
        fallback_html(capture, data)
        capture_html(capture)
        CaptureView(capture)._repr_html_()
        repr(result_view(capture))
        report_html(capture)
        assert compilescope.to_html(capture, str(tmp_path / "r.html")).endswith("r.html")
        for name, chart in figures.charts(capture).items():
            assert isinstance(chart, str), name
        for make in (figures.stage_waterfall, figures.kernel_ranking, figures.memory_chart,
                     figures.roofline):  # fmt: skip
            figures.svg(make(capture))
        for table in (tables.kernels, tables.timings, tables.graph_breaks, tables.saved_tensors):
            assert "<table>" in table(capture)._repr_html_()


def test_an_empty_capture_says_there_are_no_compile_ids():
    cap = Capture(source="live", torch_version="2.13.0")
    data = view_data(cap)
    assert data["compiles"] == [] and data["graphs"] == []
    assert data["nothing_compiled"].startswith(NOTHING)
    assert data["note"] == ""
    html = fallback_html(cap, data)
    assert "data-no-compiles" in html and NOTHING in html
    assert "<th>compile id</th>" not in html  # no table of no rows
    assert tables.kernels(cap)._repr_html_().endswith("<i>no rows</i></td></tr></table>")
    assert figures.charts(cap) == {"stages": "", "timings": "", "roofline": "", "memory": ""}
    # Where compile ids exist, none of it.
    assert view_data(partial_compiles())["nothing_compiled"] == ""
    assert "data-no-compiles" not in capture_html(partial_compiles())


def test_real_steps_only_shows_the_steps_and_where_they_ran():
    cap = real_steps_only()
    data = view_data(cap)
    assert data["device"] == "cpu"  # not "unknown device": the steps ran on the CPU
    assert data["real_steps"]["compiled"]["median"] == 0.01
    assert data["nothing_compiled"].startswith(NOTHING)
    assert "steps were still timed" in data["nothing_compiled"]
    html = capture_html(cap)
    assert "0 compile ids on cpu" in html
    assert "Your steps as they ran" in html and "compiled 10.000 ms per step" in html
    assert "<th>forward eager</th>" not in html  # no table of graphs re-run: there are none
    assert "real steps (cpu, median of 10): compiled 10.000 ms per step" in str(cap)


def test_the_capture_note_is_shown_escaped():
    # The live capture's note (why nothing compiled): every view shows it, escaped.
    cap = dataclasses.replace(real_steps_only(), note=f"compiled before the block {EVIL}")
    data = view_data(cap)
    assert data["note"] == f"compiled before the block {EVIL}"
    for html in (capture_html(cap), fallback_html(cap, data), report_html(cap)):
        assert "<img" not in html and "<script>alert" not in html
    assert "data-capture-note" in capture_html(cap)
    assert "compiled before the block &quot;&gt;&lt;img" in capture_html(cap)


def test_a_steps_note_reads_once_in_the_script_free_view():
    cap = CAPTURES["steps_not_timed"]()
    html = capture_html(cap)
    assert "Your steps as they ran: not timed (no optimizer.step() ran)." in html


def test_figures_of_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # A kernel timed at 0 us (a coarse clock) still gives a chart, with a positive axis.
        fig = figures.kernel_ranking(partial_compiles())
        assert fig is not None and fig.axes[0].get_xlim()[1] > 0
        # A sweep with no partitions: a figure that says so, which still saves.
        sweep = figures.sweep_figure(BudgetSweep(()), "0/0: activation memory budget")
        assert "no partitions to draw" in figures.svg(sweep)
