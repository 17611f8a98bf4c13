"""The realistic GPU capture (GPT-2 6 x 768, bf16 training step on an H200;
benchmarks/recorders/gpu_realistic.py made it): every kernel timed under the restarted compile
id, and the kernel table's rates never above the device's measured peaks."""

from __future__ import annotations

import gzip
from pathlib import Path

import compilescope
import pytest
from compilescope.model.measured.kernel_table import kernel_rows

CAPTURE = (
    Path(__file__).resolve().parents[2]
    / "benchmarks"
    / "data"
    / "gpu_realistic_capture"
    / "gpt2_6x768_bf16_train.json.gz"
)


@pytest.fixture(scope="module")
def realistic():
    with gzip.open(CAPTURE, "rt", encoding="utf-8") as f:
        return compilescope.Capture.from_json(f.read())


def test_every_kernel_of_the_restarted_compile_has_a_time(realistic):
    c = realistic["2/0_1"]  # transformers' graph breaks restart the frame
    timed = {k.kernel for k in realistic.timings.kernels if k.compile_id == "2/0_1"}
    triton = {k.name for k in c.kernels if k.language == "triton"}
    assert triton and triton <= timed
    roles = {k.role for k in realistic.timings.kernels if k.compile_id == "2/0_1"}
    assert roles == {"forward", "backward"}


def test_rates_are_never_above_the_measured_peaks(realistic):
    rows = kernel_rows(realistic)
    assert len(rows) == len(realistic.timings.kernels)
    assert all((r["of_peak_flops"] or 0) <= 1 for r in rows)
    assert all((r["of_peak_bandwidth"] or 0) <= 1 for r in rows)
    assert any(r["of_peak_flops"] for r in rows) and any(r["of_peak_bandwidth"] for r in rows)


def test_the_kernels_table_gives_forward_and_backward_their_own_times(realistic):
    # `extern_kernels.mm` runs in the forward and in the backward module of 2/0_1, at other times.
    times = {(k.compile_id, k.role, k.kernel): k.time.median_s for k in realistic.timings.kernels}
    rows = [r for r in compilescope.tables.kernels(realistic) if r["kernel"] == "extern_kernels.mm"]
    by_graph = {(r["compile_id"], r["graph"]): r["median_s"] for r in rows}
    forward, backward = by_graph[("2/0_1", "forward")], by_graph[("2/0_1", "backward")]
    assert forward == times[("2/0_1", "forward", "extern_kernels.mm")]
    assert backward == times[("2/0_1", "backward", "extern_kernels.mm")]
    assert forward != backward


def test_a_kernel_called_from_many_places_names_its_own_line_and_all_its_modules(realistic):
    rows = {
        (r["role"], r["kernel"]): r for r in kernel_rows(realistic) if r["compile_id"] == "2/0_1"
    }
    # The attention op's own line, not one of the views its provenance also names.
    sdpa = next(r for (role, k), r in rows.items() if role == "forward" and "scaled_dot" in k)
    assert sdpa["line"] == "integrations/sdpa_attention.py:158"
    assert "scaled_dot_product_attention" in sdpa["code"]
    assert sdpa["module"] == "transformer.h.* (6 modules)"
    # One name runs every matmul of the backward: most come from Conv1D's addmm, one from the head.
    mm = rows[("backward", "extern_kernels.mm")]
    assert mm["line"] == "transformers/pytorch_utils.py:119 (+1 more line)"
    assert mm["module"] == "transformer.h.* (24 modules)"
    head = rows[("forward", "extern_kernels.mm")]  # called once: one module, one line
    assert (head["module"], head["line"]) == ("lm_head", "gpt2/modeling_gpt2.py:697")


def test_rates_above_a_thousand_giga_are_written_in_tera(realistic):
    from compilescope.views.offline.summary_html import kernel_rows_html

    html = kernel_rows_html(realistic)
    assert "TFLOP/s" in html and "TB/s" in html
    assert not any(len(part.split()[-1].split(".")[0]) > 3 for part in html.split(" GFLOP/s")[:-1])


def test_the_memory_chart_reads_in_mib_on_a_real_training_step(realistic):
    # Its largest saved tensors are tens of MiB: the axis read "60000 KiB" before.
    from compilescope.views.charts.figures import memory_chart

    axis = memory_chart(realistic).axes[0]
    largest = max(s.nbytes or 0 for c in realistic if c.partition for s in c.partition.saved)
    assert axis.get_xlabel() == "MiB" and 2**20 <= largest < 2**30
    assert max(bar.get_width() for bar in axis.patches) == largest / 2**20
