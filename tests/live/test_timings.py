"""Timings on CPU: per-graph eager vs compiled, per-kernel times joined to nodes and lines."""

from __future__ import annotations

import contextlib

import compilescope
import pytest
import torch
from compilescope.views.offline.summary_html import capture_html
from workloads import TinyMLP

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def timed():
    torch.manual_seed(0)
    return compilescope.capture(TinyMLP(), torch.randn(64, 16))  # timings on by default


def _helper(x):
    y = x.sin() * 2
    print("a print inside an inlined function: Dynamo restarts the frame")
    return y.cos() + 1


class _Breaking(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        return _helper(self.fc(x)).relu()


@pytest.fixture(scope="module")
def restarted():
    torch.manual_seed(0)
    return compilescope.capture(_Breaking(), torch.randn(8, 16), timings=True)


def test_a_restarted_compile_has_a_time_for_each_of_its_kernels(restarted):
    # The break inside `_helper` makes Dynamo restart `forward`: its graphs and kernels are
    # logged under `0/0_1`, while the backend's CompileContext reads `0/0`.
    ids = restarted.compile_ids
    assert any(cid.endswith("_1") for cid in ids), ids
    with_kernels = [c for c in restarted if c.kernels]
    assert any(c.id.attempt for c in with_kernels)
    graphs = {g.compile_id: g for g in restarted.timings.graphs}
    assert set(graphs) <= set(ids), "timings are keyed by the capture's own compile ids"
    for c in with_kernels:
        cid = str(c.id)
        g = graphs.get(cid)
        assert g is not None and g.compiled is not None and g.compiled_backward is not None, cid
        for code in c.output_code:
            timed = {k.kernel for k in restarted.timings.kernels_of(cid, code.role)}
            assert {k.name for k in code.kernels} <= timed, (cid, code.role)


def test_the_backward_is_timed_whole_and_per_kernel(timed):
    (c,) = timed
    g = timed.timings.graph(str(c.id))
    for sample in (g.eager_backward, g.compiled_backward):
        assert sample is not None and sample.repeats >= 3 and 0 < sample.median_s
    assert g.backward_speedup is not None
    assert g.step_s() == pytest.approx(g.compiled.median_s + g.compiled_backward.median_s)
    (backward,) = [o for o in c.output_code if o.role == "backward"]
    times = timed.timings.kernels_of(str(c.id), "backward")
    assert {t.kernel for t in times} == {k.name for k in backward.kernels}
    assert all(t.time.median_s > 0 and t.calls_per_run >= 1 for t in times)
    # An extern matmul's FLOPs follow from its shapes; every kernel says what it was passed.
    mm = [t for t in timed.timings.kernels if t.kernel.endswith("mm")]
    assert mm and all(t.flops_per_call and t.flops_per_call > 0 for t in mm)
    assert all(t.bytes_per_call and t.bytes_per_call > 0 for t in timed.timings.kernels)


def test_every_graph_has_real_eager_and_compiled_times(timed):
    (c,) = timed
    (g,) = timed.timings.graphs
    assert g.compile_id == str(c.id)
    for sample in (g.eager, g.compiled):
        assert sample is not None and 3 <= sample.repeats <= 10 and sample.warmup >= 1
        assert 0 < sample.min_s <= sample.median_s <= sample.max_s
    assert "recorded shapes" in g.what and "backward" in g.what


def test_kernel_times_join_to_kernels_nodes_and_lines(timed):
    (c,) = timed
    forward = {k.name: k for k in c.output_code[0].kernels}
    times = timed.timings.kernels_of(str(c.id))
    times = [t for t in times if t.role == "forward"]
    assert {t.kernel for t in times} == set(forward), "every forward kernel gets a time"
    for t in times:
        assert t.time.median_s > 0 and t.time.repeats >= 3 and t.calls_per_run >= 1
    fused = [t for t in times if forward[t.kernel].fused_nodes]
    assert fused and all(forward[t.kernel].source_lines for t in fused)
    assert 0 < timed.timings.kernel_sum_s(str(c.id))


def test_times_survive_json_and_show_in_the_view(timed):
    back = compilescope.Capture.from_json(timed.to_json())
    assert back.timings == timed.timings
    html = capture_html(timed)
    assert "Times on cpu" in html and "cpp_fused" in html and "speedup" in html
    assert "peak memory, eager / compiled" in html and "KiB / " in html
    assert "time: eager" in timed.summary()


def test_a_graph_that_cannot_run_alone_says_so_without_a_number():
    from compilescope.live.timing.measure import RecordedGraph, measure

    def broken(*args):
        raise RuntimeError("needs state it does not have")

    cap = compilescope.capture(lambda a: a + 1, torch.randn(3), backend="eager", timings=False)
    layout = [((3,), (1,), torch.float32, torch.device("cpu"), False)]
    timings = measure({cap.compile_ids[0]: RecordedGraph(broken, broken, layout)}, cap)
    (g,) = timings.graphs
    assert g.eager is None and g.compiled is None and g.speedup is None
    assert "could not run alone" in g.note and "needs state" in g.note
    assert "not measured" in capture_html(__import__("dataclasses").replace(cap, timings=timings))


def test_timings_are_on_by_default_and_off_when_asked():
    cap = compilescope.capture(lambda a: a * 2, torch.randn(3), backend="eager")
    assert cap.timings is not None and cap.timings.graphs
    off = compilescope.capture(lambda a: a * 2, torch.randn(3), backend="eager", timings=False)
    assert off.timings is None


def test_a_fixed_number_of_runs_when_asked():
    cap = compilescope.capture(lambda a: a * 2, torch.randn(3), backend="eager", timings=4)
    (g,) = cap.timings.graphs
    assert g.compiled.repeats == 4 and g.eager.repeats == 4


def test_dynamic_shapes_are_timed_with_concrete_sizes():
    # With dynamic=True the graph takes the batch size as a SymInt input; it runs with its value.
    cap = compilescope.capture(TinyMLP(), torch.randn(8, 16), dynamic=True, timings=True)
    (g,) = cap.timings.graphs
    assert g.note == "" and g.compiled.median_s > 0
    assert any(
        n.type_text.startswith("Sym(") for n in cap[0].graph("aot_forward_graph").placeholders
    )


def test_cpu_peak_memory_is_measured_from_allocation_events(timed):
    # The graph's output alone is 64 x 4 floats (1 KiB), fc1's activation 64 x 32 (8 KiB):
    # a peak below the output or in megabytes would be a wrong reading.
    (g,) = timed.timings.graphs
    for peak in (g.eager_peak_bytes, g.compiled_peak_bytes):
        assert peak is not None and 1024 <= peak < 1 << 20, peak
    assert g.eager_peak_bytes >= 64 * 32 * 4  # eager keeps fc1's output for backward


def test_cpu_peak_counts_what_is_alive_at_once():
    from compilescope.live.timing.memory import cpu_peak_bytes as _cpu_peak_bytes

    x = torch.randn(256, 1024)  # 1 MiB
    mib = 1 << 20

    def three_alive(t):
        a = t * 2
        b = a.sin()
        return (b + a).sum()  # a, b and b + a alive together: 3 MiB

    def one_at_a_time(t):
        for _ in range(3):
            (t * 2).sum()

    assert 3 * mib <= _cpu_peak_bytes(three_alive, [x]) < 3 * mib + 4096
    assert mib <= _cpu_peak_bytes(one_at_a_time, [x]) < mib + 4096


def test_code_under_no_grad_is_timed_under_no_grad():
    # Compiled with grad off: timing it with grad on would time a training forward instead.
    model = TinyMLP()
    with torch.no_grad():
        cap = compilescope.capture(model, torch.randn(8, 16), timings=True, backward=False)
    (g,) = cap.timings.graphs
    assert "grad mode off" in g.what and g.compiled.median_s > 0
    assert cap[0].graph("aot_inference_graph") is not None


def test_no_grad_inside_the_code_is_called_an_inference_graph():
    model = TinyMLP()

    def infer(x):
        with torch.no_grad():
            return model(x)

    cap = compilescope.capture(infer, torch.randn(8, 16), timings=True, backward=False)
    graphs = [g for g in cap.timings.graphs if g.compiled is not None]
    assert graphs and all("inference graph" in g.what for g in graphs)
    assert not any("training mode" in g.what for g in graphs)


@pytest.mark.timing  # beside other workers' compiles, the kernels' clocks read 922x the step
def test_kernel_shares_and_rates_are_of_the_step_and_the_device(timed):
    """The kernels' shares of the step add up to about the step, and each kernel's bandwidth is
    under the device's measured peak. The sum is no fixed figure on a tiny CPU graph: kernels
    are timed apart from their graph, and the graph's time holds its Python wrapper (0.19 to
    1.53 in earlier runs). Both are clocks read at different moments, so both need a quiet
    machine: under load the peak probe ran slow and a kernel's rate above it was (rightly) not
    given."""
    from compilescope.model.measured.kernel_table import kernel_rows

    rows = kernel_rows(timed)
    assert 0 < sum(r["share"] for r in rows) <= 3
    assert all(r["bytes_per_s"] > 0 and r["of_peak_bandwidth"] > 0 for r in rows)
    assert any(r["flops_per_s"] and r["of_peak_flops"] for r in rows)  # the matmuls


def test_kernels_ranked_by_time_per_step_with_module_line_and_throughput(timed):
    from compilescope.model.measured.kernel_table import COLUMNS, kernel_rows, step_total_s

    rows = kernel_rows(timed)
    assert len(rows) == len(timed.timings.kernels) and {r["role"] for r in rows} == {
        "forward",
        "backward",
    }
    per_step = [r["per_step_s"] for r in rows]
    assert per_step == sorted(per_step, reverse=True) and [r["rank"] for r in rows][:2] == [1, 2]
    # Each share is of the step (every graph's compiled forward and backward), exactly; what
    # they sum to is measured time (test_kernel_shares_and_rates_are_of_the_step_and_the_device).
    whole = step_total_s(timed)
    assert whole > 0 and all(r["share"] == pytest.approx(r["per_step_s"] / whole) for r in rows)
    assert all(r["line"].startswith("tests/workloads.py:") for r in rows)  # TinyMLP.forward
    assert {"fc1", "fc2"} & {r["module"] for r in rows}
    assert timed.timings.peak_bytes_per_s > 0 and timed.timings.peak_flops > 0
    assert all(r["bytes"] > 0 for r in rows) and any(r["flops"] for r in rows)  # the matmuls
    table = compilescope.kernel_table(timed)
    rows_back = table.to_dict("records") if hasattr(table, "to_dict") else table
    assert [r["kernel"] for r in rows_back] == [r["kernel"] for r in rows]
    assert list(rows_back[0]) == list(COLUMNS)
    html = capture_html(timed)
    assert "share of step" in html and "of peak" in html and "backward eager / compiled" in html


def test_compiled_autograds_graph_is_timed_under_its_own_id():
    torch.manual_seed(0)
    cap = compilescope.capture(TinyMLP(), torch.randn(16, 16), compiled_autograd=True)
    ca = [c for c in cap if c.id.compiled_autograd_id is not None and c.kernels]
    assert ca, cap.compile_ids
    for c in ca:
        g = cap.timings.graph(str(c.id))
        assert g is not None and g.compiled is not None and g.note == "", g
        timed = {t.kernel for t in cap.timings.kernels_of(str(c.id))}
        assert {k.name for k in c.kernels} <= timed


def test_the_roofline_picture_draws_the_timed_kernels(timed):
    from compilescope.views.charts.roofline import roofline_data, roofline_figure

    data = roofline_data(timed)
    assert data["peak_flops"] and data["peak_bytes_per_s"]
    assert any(p["intensity"] and p["flops_per_s"] for p in data["points"])  # the matmuls
    fig = roofline_figure(timed)
    roof, band = fig.axes
    assert roof.get_xscale() == "log" and len(band.collections[0].get_offsets()) == len(
        data["points"]
    )
    # ... and in the fallback (and so the report), as matplotlib's script-free SVG.
    from compilescope.views.result_view import fallback_html, view_data

    chart = view_data(timed)["charts"]["roofline"]
    assert chart.startswith("<svg") and chart in fallback_html(timed, view_data(timed))


def test_measuring_leaves_torchs_random_numbers_as_they_were():
    x = torch.randn(4)
    torch.manual_seed(7)
    compilescope.capture(lambda a: a * 2, x, backend="eager", timings=False)
    expected = torch.rand(3)
    torch.manual_seed(7)
    compilescope.capture(lambda a: a * 2, x, backend="eager")  # fresh random inputs inside
    assert torch.equal(torch.rand(3), expected)


def test_extern_calls_through_aten_are_timed_in_each_module():
    # Dropout's seeds come from `aten.randint.low_out(...)` in the forward module; each module's
    # namespaces must hand out that module's own kernels (a closure bug once gave the last's).
    def f(x):
        return torch.nn.functional.dropout(x, 0.1, training=True).sin()

    cap = compilescope.capture(f, torch.randn(64, 64, requires_grad=True))
    (c,) = [c for c in cap if c.kernels]
    for code in c.output_code:
        timed = {t.kernel for t in cap.timings.kernels_of(str(c.id), code.role)}
        assert {k.name for k in code.kernels} <= timed, code.role
    assert any(k.name.startswith("aten.") for k in c.kernels)


def test_one_kernel_name_called_with_several_shapes_has_mean_sizes():
    # extern_kernels.mm runs every matmul of a graph: its FLOPs and bytes per call are the mean
    # of a step's calls (the first call's once made the H200 capture report 1356% of peak).
    def two_matmuls(a, b, c, d):
        return (a @ b).sum() + (c @ d).sum()

    shapes = ((64, 32), (32, 16), (8, 4), (4, 2))
    cap = compilescope.capture(
        two_matmuls, *(torch.randn(*s) for s in shapes), backward=False, timings=3
    )
    (mm,) = [k for k in cap.timings.kernels if k.kernel == "extern_kernels.mm"]
    assert mm.calls_per_run == 2
    assert mm.flops_per_call == pytest.approx((2 * 64 * 32 * 16 + 2 * 8 * 4 * 2) / 2)


def test_a_name_called_several_times_a_step_is_timed_per_step():
    from compilescope.live.timing.kernel_timer import _per_call

    # Two calls a step of very different sizes: each step's mean per call, not the median call.
    assert _per_call([1.0, 9.0, 1.0, 9.0, 1.0, 9.0], 2) == [5.0, 5.0, 5.0]
    assert _per_call([1.0, 2.0, 3.0], 1) == [1.0, 2.0, 3.0]
    assert _per_call([1.0, 2.0, 3.0], 2) == [1.0, 2.0, 3.0]  # incomplete steps: as measured


@contextlib.contextmanager
def _inputs_made():
    """The inputs measuring makes for each graph, in a list, while inside."""
    from compilescope.live.timing import inputs as timing_inputs

    made, real_make = [], timing_inputs.make_inputs

    def spy(layout, values=None, moments=None):
        made.append(real_make(layout, values, moments))
        return made[-1]

    timing_inputs.make_inputs = spy
    try:
        yield made
    finally:
        timing_inputs.make_inputs = real_make


def test_integer_inputs_are_timed_on_their_recorded_values():
    # An embedding's backward adds rows with atomics: timed on all-zero ids every token hits
    # row 0 (2.6x slower than real tokens on an H200), so ids keep the values they compiled with.
    weight = torch.randn(50, 8, requires_grad=True)
    ids = torch.randint(1, 50, (4, 6))

    def lookup(ids):
        return torch.nn.functional.embedding(ids, weight).sum(-1)

    with _inputs_made() as made:
        cap = compilescope.capture(lookup, ids)
    assert cap.timings.graphs and cap.timings.graphs[0].compiled is not None
    (inputs,) = made
    integers = [t for t in inputs if isinstance(t, torch.Tensor) and not t.is_floating_point()]
    assert len(integers) == 1 and torch.equal(integers[0], ids)
    assert integers[0].data_ptr() != ids.data_ptr(), "a copy, never the user's own tensor"


def test_integer_values_are_copied_within_a_size_limit_with_their_strides():
    from compilescope.live.timing.inputs import input_layout, input_values, make_inputs

    small = torch.arange(12).reshape(3, 4).t()  # transposed: strides (1, 4)
    big = torch.ones(1000, dtype=torch.int64)
    mask = torch.tensor([True, False, True])
    example = [torch.randn(3), small, big, mask]
    values = input_values(example, limit=small.numel() * 8 + mask.numel())
    assert sorted(values) == [1, 3], "the float is random anyway; the big one is over the limit"
    small.add_(100)  # the user changes theirs afterwards: the copy holds what it compiled with
    inputs = make_inputs(input_layout(example), values)
    assert torch.equal(inputs[1], torch.arange(12).reshape(3, 4).t())
    assert inputs[1].stride() == (1, 4)
    assert torch.equal(inputs[3], mask)
    assert not inputs[2].any(), "past the limit: zeros, always valid indices"


def test_float_inputs_are_drawn_with_their_recorded_mean_and_deviation():
    # A GELU's tanh costs what its values make it cost: standard normal weights saturate it.
    from compilescope.live.timing.inputs import input_layout, input_moments, make_inputs

    torch.manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(256, 64) * 0.02 + 0.5)
    mask = torch.zeros(8, 8).masked_fill(torch.ones(8, 8).triu(1).bool(), float("-inf"))
    example = [weight, mask, torch.randn(1)]
    moments = input_moments(example)
    assert sorted(moments) == [0, 1], "a one-element tensor has no deviation"
    inputs = make_inputs(input_layout(example), {}, moments)
    assert inputs[0].requires_grad and inputs[0].data_ptr() != weight.data_ptr()
    assert abs(inputs[0].mean().item() - 0.5) < 0.01
    assert abs(inputs[0].std().item() - 0.02) < 0.005
    assert torch.isfinite(inputs[1]).all(), "no finite moments (an -inf mask): drawn as before"


def test_a_capture_draws_its_timing_inputs_from_the_recorded_moments():
    x = torch.randn(64, 32) * 3 + 10

    with _inputs_made() as made:
        compilescope.capture(lambda x: torch.tanh(x).sum(), x)
    (inputs,) = made
    (drawn,) = [t for t in inputs if isinstance(t, torch.Tensor)]
    assert abs(drawn.mean().item() - 10) < 0.5 and abs(drawn.std().item() - 3) < 0.5


def test_inputs_without_readable_values_are_skipped_not_raised():
    # These run inside the user's compile: an input we cannot read must not break it.
    from compilescope.live.timing.inputs import input_moments, input_values

    sparse = torch.eye(3).to_sparse()
    meta = torch.empty(4, 4, device="meta")
    ids_meta = torch.empty(4, dtype=torch.int64, device="meta")
    example = [sparse, meta, ids_meta, sparse.long()]
    assert input_values(example) == {} and input_moments(example) == {}


def test_an_eager_arm_that_does_not_fit_leaves_the_compiled_times(monkeypatch):
    """The compiled step fits where an eager re-run does not (a GPU filled up): the capture
    returns, the user's result stands, and the compiled graph is timed without the eager arm."""
    from compilescope.live.timing import measure as measure_module

    real_measure = measure_module.measure
    original_call = torch.fx.GraphModule.__call__
    state = {"measuring": False}

    def eager_out_of_memory(self, *args, **kwargs):
        if state["measuring"]:
            raise torch.OutOfMemoryError(
                "CUDA out of memory. Tried to allocate 2.00 GiB (injected)"
            )
        return original_call(self, *args, **kwargs)

    def measuring(*args, **kwargs):
        state["measuring"] = True
        try:
            return real_measure(*args, **kwargs)
        finally:
            state["measuring"] = False

    monkeypatch.setattr(torch.fx.GraphModule, "__call__", eager_out_of_memory)
    monkeypatch.setattr(measure_module, "measure", measuring)
    from compilescope.live import session as session_module

    monkeypatch.setattr(session_module, "measure", measuring)
    torch.manual_seed(0)
    model, x = TinyMLP(), torch.randn(16, 16)
    expected = model(x)
    cap = compilescope.capture(model, x, timings=3)
    (g,) = cap.timings.graphs
    assert g.eager is None and g.compiled is not None and g.compiled.repeats == 3
    assert "eager not timed (OutOfMemoryError" in g.note
    assert g.compiled_backward is not None and g.eager_backward is None
    assert g.eager_peak_bytes is None
    assert "eager not timed" in cap.summary() and "compiled" in cap.summary()
    torch.testing.assert_close(model(x), expected)
