"""Charts are matplotlib Figures; the fallback and report embed them as SVG, text escaped."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

from compilescope.model.measured.timing import KernelTiming, Sample, Timings
from compilescope.views.charts import figures
from compilescope.views.result_view import fallback_html, view_data
from matplotlib.figure import Figure

EVIL = "</svg><script>alert(1)</script><img src=x onerror=alert(2)> $x^2$"


def _timed(capture):
    c = capture.compiles[0]
    kernels = tuple(
        KernelTiming(str(c.id), name, Sample(2e-6 * (i + 1), 1e-6, 9e-6, 10), 1.0)
        for i, name in enumerate([EVIL, "cpp_fused_a", "cpp_fused_b"])
    )
    return dataclasses.replace(capture, timings=Timings(device="cpu", kernels=kernels))


def test_each_chart_is_a_figure(loaded):
    capture = _timed(loaded("module_backward"))
    for make in (figures.stage_waterfall, figures.kernel_ranking, figures.memory_chart):
        fig = make(capture)
        assert isinstance(fig, Figure) and fig.axes, make.__name__
        assert fig._repr_png_().startswith(b"\x89PNG")  # shows itself in a notebook
    assert figures.kernel_ranking(loaded("module_backward")) is None  # nothing timed: no chart
    ranked = [t.get_text() for t in figures.kernel_ranking(capture).axes[0].get_yticklabels()]
    assert ranked[0].endswith("cpp_fused_b")  # the slowest first
    roles = {k.role for k in capture.timings.kernels}
    assert all(any(f" {r} " in label for r in ("fwd", "bwd")) for label in ranked), (roles, ranked)


def test_a_whisker_cut_at_the_edge_says_where_it_ends(loaded):
    capture = _timed(loaded("module_backward"))
    k = capture.timings.kernels[1]
    outlier = dataclasses.replace(k, time=Sample(k.time.median_s, k.time.min_s, 1e-3, 10))
    timings = dataclasses.replace(capture.timings, kernels=(capture.timings.kernels[0], outlier))
    ax = figures.kernel_ranking(dataclasses.replace(capture, timings=timings)).axes[0]
    notes = [t.get_text() for t in ax.texts if t.get_text().startswith("max ")]
    edge = ax.get_xlim()[1]
    assert "max 1000 us \u25b8" in notes and edge < 1000  # the outlier's whisker, cut and named
    assert all(float(n.split()[1]) > edge for n in notes), (notes, edge)  # only cut ones


def test_fallback_charts_come_from_matplotlib_and_escape_text(loaded):
    capture = _timed(loaded("module_backward"))
    html = fallback_html(capture, view_data(capture))
    # stages, kernel ranking, roofline and memory
    assert html.count("class='cs-figure'") == 4 and "Matplotlib" in html
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html


def test_figures_leave_the_users_backend_and_pyplot_alone(loaded):
    code = (
        "import matplotlib, sys\nmatplotlib.use('svg')\n"
        "import compilescope\nfrom compilescope.views.charts import figures\n"
        "cap = compilescope.load_trace(sys.argv[1])\nfigures.svg(figures.stage_waterfall(cap))\n"
        "print(matplotlib.get_backend(), 'matplotlib.pyplot' in sys.modules)\n"
    )
    from conftest import FIXTURES

    out = subprocess.run(
        [sys.executable, "-c", code, str(FIXTURES / "module_backward.log.gz")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.split() == ["svg", "False"]


def test_one_outlier_run_does_not_squash_the_kernel_bars(loaded):
    capture = _timed(loaded("module_backward"))
    c = capture.compiles[0]
    # the slowest kernel's median is 6 us; one run of another took 2 ms (a CPU hiccup)
    outlier = KernelTiming(str(c.id), "cpp_fused_c", Sample(5e-6, 1e-6, 2e-3, 10), 1.0)
    kernels = (*capture.timings.kernels, outlier)
    capture = dataclasses.replace(capture, timings=Timings(device="cpu", kernels=kernels))
    low, high = figures.kernel_ranking(capture).axes[0].get_xlim()
    assert low == 0 and high <= 1.5 * 6.0 + 1e-9, "microseconds: bars stay readable"


def test_a_log_says_it_holds_no_times(loaded):
    from compilescope.views.offline.summary_html import timings_html

    capture = loaded("module_backward")
    assert capture.timings is None and capture.source != "live"
    assert "none in a log" in timings_html(capture)
    assert "turned off" in timings_html(dataclasses.replace(capture, source="live"))


def test_byte_axes_read_in_a_unit_that_fits_the_largest_bar(loaded):
    from compilescope.common import byte_scale

    assert byte_scale(500) == ("KiB", 1024) and byte_scale(64 * 2**20) == ("MiB", 2**20)
    assert byte_scale(3 * 2**30) == ("GiB", 2**30)
    assert figures.memory_chart(loaded("module_backward")).axes[0].get_xlabel() == "KiB"


def test_the_kernel_ranking_shows_the_real_steps_kernels_where_they_were_timed(loaded):
    # The kernel table and the roofline use the user's own steps; the ranking showed the
    # synthetic re-runs beside them (on a Llama cell: one kernel, against the table's 24).
    from compilescope.model.measured.timing import RealSteps

    capture = _timed(loaded("module_backward"))
    cid = str(capture.compiles[0].id)
    real = tuple(
        KernelTiming(cid, f"cpp_fused_real_{i}", Sample(1e-5 * (i + 1), 1e-5, 1e-4, 10), 2.0)
        for i in range(4)
    )
    steps = RealSteps(device="cpu", compiled=Sample(1e-3, 1e-3, 1e-3, 10), kernels=real)
    with_steps = dataclasses.replace(
        capture, timings=dataclasses.replace(capture.timings, real_steps=steps)
    )
    axis = figures.kernel_ranking(with_steps).axes[0]
    labels = [t.get_text() for t in axis.get_yticklabels()]
    assert len(labels) == 4 and labels[0].endswith("cpp_fused_real_3"), labels
    assert "in your steps" in axis.get_title(loc="left")
    assert "median per run" in figures.kernel_ranking(capture).axes[0].get_title(loc="left")
