"""%%compile_fx through a real IPython shell: options, semantics, errors and restored state."""

from __future__ import annotations

import gc
import linecache
import tracemalloc
from html import escape

import compilescope
import pytest
from compilescope.views.view_data import capture_data as view_data

from magic.conftest import torch_state

pytestmark = pytest.mark.torch


def test_names_are_written_back_and_result_returned(ip, run):
    ip.user_ns["x"] = __import__("torch").randn(4, 4)
    result = run("y = x.sin() * 2\nz = y.cos()\nz.sum()", "--backend aot_eager --out cap1")
    assert result.success
    torch = ip.user_ns["torch"]
    assert torch.allclose(ip.user_ns["z"], (ip.user_ns["x"].sin() * 2).cos())
    assert torch.allclose(result.result, ip.user_ns["z"].sum())
    cap = ip.user_ns["cap1"]
    assert cap is compilescope.last()
    (c,) = cap
    assert c.frame.function == "__compile_fx_cell__"
    # The frame is the cell itself: its file is the one IPython registered for this cell.
    assert linecache.getline(c.frame.file, 2).strip() == "y = x.sin() * 2"
    assert cap.cells[c.frame.file] == ip.execution_count - 1  # IPython counts on after each cell
    assert c.graph("aot_inference_graph").op_count >= 3


def test_a_name_the_cell_rebinds_keeps_its_old_value_inside(ip, run):
    ip.user_ns["n"] = 3
    run("n = n + 1\nm = n * 2")
    assert ip.user_ns["n"] == 4 and ip.user_ns["m"] == 8


def test_graph_break_is_shown_with_its_cell_line(ip, run):
    result = run(
        "a = x.relu()\nprint('breaks the graph')\nb = a + 1", "--backend aot_eager --out cap_gb"
    )
    assert result.success
    cap = ip.user_ns["cap_gb"]
    ((_, brk),) = cap.graph_breaks
    assert brk.location.line == 3  # the cell's own numbering: line 1 is the %%compile_fx line
    assert linecache.getline(brk.location.file, 3).strip() == "print('breaks the graph')"
    assert cap.cells[brk.location.file] == ip.execution_count - 1
    assert "print" in brk.reason
    assert f"cell [{ip.execution_count - 1}] line 3" in cap.summary()
    assert brk.location.label(cap.cells) == f"cell [{ip.execution_count - 1}] line 3"


def test_backward_in_the_cell_is_captured(ip, run):
    ip.user_ns["w"] = __import__("torch").randn(4, 4, requires_grad=True)
    run("loss = (w.tanh() * 3).sum()\nloss.backward()", "--backend aot_eager --out cap_bw")
    cap = ip.user_ns["cap_bw"]
    assert any(c.graph("aot_backward_graph") for c in cap)


def test_the_cell_can_be_repartitioned_and_its_small_graph_is_swept(ip, run):
    ip.user_ns["w"] = __import__("torch").randn(8, 8, requires_grad=True)
    result = run("loss = (w.sin() @ w).sum()\nloss.backward()", "--backend aot_eager --out cap_lab")
    assert result.success
    (c,) = [c for c in ip.user_ns["cap_lab"] if c.partition is not None]
    assert c.partitioner == "min_cut"
    assert len(c.sweep().min_cut) == 11  # the view's sweep was made by the magic
    assert c.repartition("default").recomputed_ops == 0  # the default partitioner saves instead
    assert ip.user_ns["w"].grad is not None


def test_backward_option_runs_backward_of_the_last_expression(ip, run):
    ip.user_ns["v"] = __import__("torch").randn(3, requires_grad=True)
    run("v.exp() * 2", "--backend aot_eager --backward --out cap_b2")
    (c,) = ip.user_ns["cap_b2"]
    assert c.graph("aot_backward_graph") is not None and c.partition.saved


def test_inductor_generates_cpp_kernels(ip, run):
    run("k = (x.sin() + 1).sum()", "--out cap_ind")
    (c,) = ip.user_ns["cap_ind"]
    assert c.kernels and {k.language for k in c.kernels} == {"cpp"}
    assert "C++ kernels" in repr(
        compilescope.views.offline.summary_html.CaptureView(ip.user_ns["cap_ind"])
    )


def test_syntax_error_is_ipythons_own(ip, run):
    before = compilescope.last()
    result = run("y = = 1")
    assert isinstance(result.error_in_exec, SyntaxError)
    assert compilescope.last() is before


def test_user_exception_shows_partial_capture_and_cell_lines(ip, run, capsys):
    state = torch_state()
    result = run("p = x.cos()\nprint('break')\nq = p.sum()\nraise ValueError('boom in the cell')")
    assert isinstance(result.error_in_exec, ValueError)
    assert torch_state() == state
    cap = compilescope.last()
    assert cap.partial.startswith("ValueError")
    assert any(c.graph("dynamo_output_graph") for c in cap), (
        "what compiled before the error is kept"
    )
    text = capsys.readouterr()
    assert "PARTIAL" in text.out
    assert "line 5" in text.out + text.err and "boom in the cell" in text.out + text.err
    assert "p" not in ip.user_ns or ip.user_ns.get("p") is not None


def test_interrupt_restores_state(ip, run):
    state = torch_state()
    result = run("r = x.sin()\nprint('break')\nraise KeyboardInterrupt")
    assert isinstance(result.error_in_exec, KeyboardInterrupt)
    assert torch_state() == state
    assert compilescope.last().partial.startswith("KeyboardInterrupt")


@pytest.mark.parametrize(
    "line, message",
    [
        ("--backend nope", "invalid choice"),
        ("--options max_autotune", "KEY=VALUE"),
        ("--backend aot_eager --mode max-autotune", "only to --backend inductor"),
        ("--diff missing_name", "no capture is stored"),
        ("--backend eager --partitioner default", "--partitioner needs"),
        ("--options no_such_option=1", "no_such_option"),
    ],
)
def test_bad_options_say_what_and_run_nothing(ip, run, capsys, line, message):
    ip.user_ns["side_effects"] = []
    result = run("side_effects.append(1)", line)
    assert not result.success
    assert ip.user_ns["side_effects"] == []
    captured = capsys.readouterr()
    assert message in captured.out + captured.err
    assert torch_state()[2:] == (False, 0, None)


def test_options_are_literals_never_code(ip, run):
    ip.user_ns["side_effects"] = []
    result = run(
        "ok = x + 1", "--options max_autotune=__import__('os').system('false') --out cap_opt"
    )
    # The value is not a Python literal, so it stays a string (and Inductor rejects or ignores it).
    assert ip.user_ns["side_effects"] == []
    assert result.success or result.error_in_exec is not None


def test_partitioners_both_run(ip, run):
    ip.user_ns["u"] = __import__("torch").randn(64, 64, requires_grad=True)
    cell = "h = (u.sin().cos().tanh() * 2).sum()\nh.backward()"
    run(cell, "--backend aot_eager --partitioner default --out cap_default")
    run(cell, "--backend aot_eager --partitioner min_cut --out cap_mincut")
    default = next(c for c in ip.user_ns["cap_default"] if c.partition)
    mincut = next(c for c in ip.user_ns["cap_mincut"] if c.partition)
    # The default partitioner saves intermediates; min-cut recomputes cheap ops instead.
    assert default.partition.saved_bytes > mincut.partition.saved_bytes
    assert torch_state()[4] is None


def test_default_partitioner_with_inductor(ip, run):
    # Inductor calls its custom partitioner with min-cut's keywords (compiler=...); this
    # used to raise TypeError inside default_partition.
    ip.user_ns["v"] = __import__("torch").randn(8, requires_grad=True)
    result = run(
        "g = (v.sin() * 2).sum()\ng.backward()",
        "--backend inductor --partitioner default --out cap_ind_default",
    )
    assert result.success, result.error_in_exec
    assert any(c.partition for c in ip.user_ns["cap_ind_default"])
    assert any(c.kernels for c in ip.user_ns["cap_ind_default"])
    assert torch_state()[4] is None


def test_compiled_autograd_graph(ip, run):
    ip.user_ns["t"] = __import__("torch").randn(8, requires_grad=True)
    run("s = (t * t).sum()\ns.backward()", "--backend aot_eager --compiled-autograd --out cap_ca")
    assert any(c.graph("compiled_autograd_graph") for c in ip.user_ns["cap_ca"])


def test_diff_with_a_stored_capture(ip, run, capsys):
    run("d1 = x.sin()", "--backend aot_eager --out cap_d1")
    capsys.readouterr()
    run("d1 = x.sin()", "--backend aot_eager --diff cap_d1")
    assert "no differences" in capsys.readouterr().out
    run("d1 = x.sin().cos()", "--backend aot_eager --diff cap_d1")
    assert "aot_inference_graph" in capsys.readouterr().out


def test_diff_shows_nodes_and_kernel_source_changes(ip, run, capsys):
    # Inductor names a kernel by what it fuses, so adding cos() replaces cpp_fused_sin_0 by a
    # kernel with another name: the diff pairs them and shows the source diff.
    from compilescope.views.result_view import fallback_html
    from compilescope.views.result_view import view_data as full_view_data

    run("k1 = x.sin()", "--out cap_k1")
    run("k1 = x.sin().cos()", "--out cap_k2")
    before, after = ip.user_ns["cap_k1"], ip.user_ns["cap_k2"]
    d = compilescope.diff(before, after)
    dynamo = next(g for g in d.graphs if g.kind == "dynamo_output_graph")
    (cos,) = [n for n in dynamo.nodes if n.change == "added"]
    assert "cos" in cos.after and cos.before == ""
    (kernel,) = [k for k in d.kernels if k.change == "replaced"]
    assert "sin" in kernel.name and "cos" in kernel.name.split("->")[1]
    added = [line for line in kernel.source_diff() if line.startswith("+")]
    assert any("cos" in line for line in added), kernel.source_diff()
    data = full_view_data(after, before)
    shown = data["diff"]
    assert shown["kernels"][0]["diff"] == kernel.source_diff()
    assert any(g["kind"] == "dynamo_output_graph" for g in shown["graphs"])
    html = fallback_html(after, data)
    assert "cs-diff" in html and any("cos" in line for line in added)
    assert escape(added[-1]) in html  # the kernel diff, escaped, without script


def test_time_option_measures_without_printing_into_the_cell(ip, run, capfd):
    run("t1 = (x.sin() * 2).sum()", "--time --out cap_t1 --quiet")
    err = capfd.readouterr().err
    assert "Compiled module path" not in err, err  # Inductor's benchmark_kernel print, CPU
    (g,) = ip.user_ns["cap_t1"].timings.graphs
    assert g.compiled.median_s > 0 and g.eager.median_s > 0
    assert g.compiled_peak_bytes is not None


def test_a_compiled_module_called_in_a_cell_is_named_by_that_cell(ip):
    ip.run_cell(
        # Shapes no other test compiles: Dynamo would reuse an earlier Linear's code and
        # compile nothing.
        "import compilescope\ncm = torch.compile(torch.nn.Linear(5, 11), backend='aot_eager')"
    )
    result = ip.run_cell(
        "with compilescope.capturing() as held:\n    cm(torch.randn(3, 5))", store_history=True
    )
    assert result.success, result.error_in_exec
    cap = ip.user_ns["held"].capture
    (c,) = cap
    assert (
        c.frame.label(cap.cells)
        == f"compiled module called at cell [{ip.execution_count - 1}] line 2"
    )


def test_torchs_frames_in_a_training_cell_are_named_by_the_cell_not_by_compilescope(ip, run):
    # The optimizer's own frames compile when the cell's loop calls opt.step(); their caller
    # was shown as compilescope/magic.py (the magic makes the call), then as IPython's
    # run_cell. Compilescope's hooks in a compiled step compile none of our own frames either.
    ip.run_cell(
        "tm = torch.nn.Linear(6, 7)\ntopt = torch.optim.AdamW(tm.parameters(), lr=1e-3)\n"
        "tx = torch.randn(3, 6)"
    )
    result = run(
        "for _ in range(3):\n    tm(tx).pow(2).mean().backward()\n    topt.step()\n"
        "    topt.zero_grad()",
        "--backend aot_eager --quiet --real-steps 0 --out tcap",
    )
    assert result.success, result.error_in_exec
    cap = ip.user_ns["tcap"]
    labels = [c.frame.label(cap.cells) for c in cap]
    in_torch = [label for c, label in zip(cap, labels, strict=True) if c.frame.in_torch]
    assert in_torch and all(f"cell [{ip.execution_count - 1}] line" in x for x in in_torch)
    assert not [x for x in labels if "compilescope" in x or "interactiveshell" in x], labels


def test_diff_of_the_same_cell_with_a_graph_break_is_empty(ip, run, capsys):
    # Each run of a cell gets a new file name (<ipython-input-N-...>); the graph break's
    # line in the cell is what identifies it, so identical code shows no difference.
    cell = "d2 = x.sin()\nprint('break')\nd3 = d2.cos()"
    run(cell, "--backend aot_eager --out cap_d2")
    capsys.readouterr()
    run(cell, "--backend aot_eager --diff cap_d2")
    out = capsys.readouterr().out
    assert "no differences" in out, out
    run(cell.replace("print('break')", "pass"), "--backend aot_eager --diff cap_d2")
    assert "- graph break cell line 3" in capsys.readouterr().out


def test_line_form(ip):
    ip.run_cell("def f(a):\n    return a.exp() + 1")
    result = ip.run_cell("%compile_fx --backend aot_eager --quiet f x")
    assert result.success
    assert compilescope.last()[0].frame.function == "f"


def test_a_rendering_bug_never_hides_the_result(ip, run, capsys, monkeypatch):
    from compilescope.views import result_view

    def broken(*args, **kwargs):
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr(result_view, "view_data", broken)
    result = run("e = x * 3\ne.sum()")
    assert result.success and ip.user_ns["e"] is not None
    out = capsys.readouterr().out
    assert out.count("renderer exploded") == 1 and "compile ids" in out


def test_fifty_runs_leave_no_handlers_and_bounded_memory(ip, run):
    ip.user_ns["x"] = __import__("torch").randn(4, 4)
    state = torch_state()

    def magic_runs(n):
        for i in range(n):
            assert run(f"g = x + {i}", "--backend eager --quiet").success

    def growth(runs) -> int:
        # torch keeps its last 64 compiles' metrics: fill that first. Trace from the start, so
        # memory freed later was traced when it was allocated.
        tracemalloc.start()
        runs(70)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        runs(50)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        return grown

    grown = growth(magic_runs)
    assert torch_state() == state
    # Dynamo itself keeps some state of every function it compiled: about 3.0 MB for 50 fresh
    # functions like these, measured without compilescope on torch 2.11 and 2.13. A capture
    # that outlived its cell (torch keeps every backend it saw) took this test to 6.9 MB.
    assert grown < 4_500_000, f"50 cells kept {grown} bytes"


def test_kernel_lines_in_another_cell_are_named_by_cell(ip, run):
    # A function defined in one cell and compiled from another: the kernel's source line is in
    # the first cell, and the capture knows that cell's number and code.
    ip.run_cell("def scaled_sine(a):\n    return a.sin() * 2", store_history=True)
    defining_cell = ip.execution_count - 1
    ip.user_ns["w"] = __import__("torch").randn(16)
    run("out = scaled_sine(w)", "--backend inductor --out cap_cells")
    cap = ip.user_ns["cap_cells"]
    files = {loc.file for c in cap for k in c.kernels for loc in k.source_lines}
    defining = [f for f in files if cap.cells.get(f) == defining_cell]
    assert defining, (files, cap.cells)
    assert "return a.sin() * 2" in cap.sources[defining[0]]
    cells = {c["file"]: c["cell"] for c in view_data(cap)["cells"]}
    assert cells[defining[0]] == defining_cell


def test_cell_graphs_have_module_paths(ip, run):
    # The cell's frame is restarted after a graph break (`0/0_1`) while the backend hears
    # `0/0`; module paths must survive that, and a notebook global keeps its name as the root.
    ip.run_cell(
        "import torch\nnet = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(),"
        " torch.nn.Sequential(torch.nn.Linear(4, 2)))"
    )
    ip.user_ns["u4"] = __import__("torch").randn(3, 4)
    run("h = net(u4)\nprint('break')\nh2 = h.sum()", "--backend aot_eager --out cap_mods")
    first = next(c for c in ip.user_ns["cap_mods"] if c.graph("dynamo_output_graph"))
    assert first.id.attempt >= 1  # the restart this test is about
    paths = {n.module_path for n in first.graph("dynamo_output_graph").nodes if n.module_path}
    assert {"net.0", "net.1", "net.2.0"} <= paths


def test_torch_warnings_go_to_the_view_not_stderr(ip, run, capfd, recwarn):
    from compilescope.live.torch_words import _Keep, _torch_handlers

    ip.user_ns["x"] = __import__("torch").randn(4)
    # torch says this once per process (functools.cache): a test before this one may have.
    from torch._dynamo.variables.tensor import TensorVariable

    TensorVariable._warn_capture_scalar_outputs.cache_clear()
    capfd.readouterr()
    result = run(
        "y = x.sin()\nn = y.sum().item()\nz = y * n\n"
        "import warnings\nprint('my own print')\nwarnings.warn('my own warning')",
        "--backend eager --fresh --out cap_said",
    )
    assert result.success
    out, err = capfd.readouterr()
    # torch's graph-break warning is in the capture, once, with its compile id; not on stderr.
    said = [m for m in ip.user_ns["cap_said"].messages if "Tensor.item()" in m.message]
    assert len(said) == 1 and said[0].compile_id.count("/") == 1, said
    assert said[0].origin.startswith("torch._dynamo") and said[0].where.startswith("torch/")
    assert "Tensor.item()" not in err
    # The user's own print and warning are shown as usual.
    assert "my own print" in out  # and the warning, to stderr (here pytest records it):
    assert "my own warning" in err + " ".join(str(w.message) for w in recwarn)
    # Every handler torch had is back as it was: no filter of ours left behind.
    assert not any(isinstance(f, _Keep) for h in _torch_handlers() for f in h.filters)
    html = view_data(ip.user_ns["cap_said"])["messages"]
    assert any("Tensor.item()" in m["text"] for m in html)
