"""Chart labels never overlap (issue 23), on the realistic GPU capture and a CNN's: every text
matplotlib draws in the Timings figures, measured with its renderer; the names the roofline's
labels leave off are on hover and in a table under it."""

from __future__ import annotations

import gzip
import itertools
import re
from pathlib import Path
from unittest import mock

import compilescope
import pytest
from compilescope.views.charts import figures
from compilescope.views.charts.roofline import roofline_data
from matplotlib.text import Text

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
CAPTURES = {
    "gpt2": BENCHMARKS / "data" / "gpu_realistic_capture" / "gpt2_6x768_bf16_train.json.gz",
    "cnn": BENCHMARKS / "data" / "gpu_captures" / "cnn_bfloat16.json.gz",
}


@pytest.fixture(scope="module", params=sorted(CAPTURES))
def capture(request):
    with gzip.open(CAPTURES[request.param], "rt", encoding="utf-8") as f:
        return compilescope.Capture.from_json(f.read())


def drawn_texts(fig) -> list[tuple[str, object]]:
    """Each text the figure draws (tick labels outside the axes' limits are made, not drawn),
    with its box in pixels."""
    drawn = []
    draw = Text.draw

    def record(text, renderer):
        draw(text, renderer)
        if text.get_visible() and text.get_text().strip():
            drawn.append((text.get_text(), text.get_window_extent(renderer)))

    with mock.patch.object(Text, "draw", record):
        fig.canvas.draw()
    return drawn


def test_no_two_labels_of_the_timings_figures_overlap(capture):
    made = {
        "stages": figures.stage_waterfall(capture),
        "kernels": figures.kernel_ranking(capture),
        "roofline": figures.roofline(capture),
        "memory": figures.memory_chart(capture),
    }
    assert made["roofline"] is not None and made["kernels"] is not None
    for name, fig in made.items():
        if fig is None:
            continue
        texts = drawn_texts(fig)
        assert len(texts) > 10, name
        overlapping = [
            (a, b)
            for (a, box_a), (b, box_b) in itertools.combinations(texts, 2)
            if min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0) > 0.5
            and min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0) > 0.5
        ]
        assert overlapping == [], (name, overlapping)


@pytest.fixture(scope="module")
def roofline_texts(capture) -> list[str]:
    """Each text the capture's roofline draws (drawn once for the tests that read them)."""
    return [t for t, _ in drawn_texts(figures.roofline(capture))]


def test_roofline_points_are_numbered_as_the_kernel_table_ranks_them(capture, roofline_texts):
    points = roofline_data(capture)["points"]
    labels = [t for t in roofline_texts if t.startswith("#")]
    numbers = {int(re.match(r"#(\d+)", t).group(1)) for t in labels}
    assert numbers <= {p["rank"] for p in points}
    assert 1 in numbers  # the costliest kernel is always labelled
    assert any(" " in t for t in labels)  # with a name where one fits


def test_every_point_has_its_full_name_on_hover_and_in_the_key(capture):
    chart = figures.charts(capture)["roofline"]
    points = roofline_data(capture)["points"]
    svg, key = chart.split("</svg>", 1)
    titles = re.findall(r"<title>(.*?)</title>", svg)
    for p in points:  # the bandwidth panel draws every point
        assert any(t.startswith(f"#{p['rank']} ") and p["kernel"] in t for t in titles), p
    assert key.strip().startswith("<details class='cs-chart-key'>")
    assert key.count("<tr>") == len(points) + 1 and "<script" not in chart


def test_the_rooflines_log_axes_are_labelled_in_plain_text_powers_of_ten(roofline_texts):
    # Math text ($10^{6}$) is parsed by matplotlib's pyparsing grammar on every draw: 14% of
    # drawing the four charts of the GPT-2 capture. Plain "10⁶" reads the same.
    texts = roofline_texts
    powers = [
        t for t in texts if re.fullmatch("10[\u207b\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+", t)
    ]
    assert len(powers) >= 4, texts  # at least two decades on each log axis
    assert not any("$" in t or "mathdefault" in t for t in texts), texts
