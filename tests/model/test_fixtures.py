"""What the parser reads from recorded TORCH_TRACE logs, checked against what each workload did."""

from __future__ import annotations

import inspect

import compilescope
import workloads
from compilescope import CompileId, load_trace
from conftest import FIXTURES


def line_of(function, text: str) -> int:
    """Line number, in tests/workloads.py, of the first line of `function` containing `text`."""
    lines, start = inspect.getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_plain_function_has_every_stage_of_training(loaded):
    cap = loaded("plain_function")
    assert cap.compile_ids == ("0/0",)
    c = cap["0/0"]
    assert c.frame.function == "f" and c.frame.file.endswith("workloads.py")
    for kind in ("dynamo_output_graph", "aot_inference_graph", "inductor_post_grad_graph"):
        assert c.graph(kind) is not None, kind
    dynamo = c.graph("dynamo_output_graph")
    sin = next(n for n in dynamo.nodes if n.target.endswith("sin"))
    assert sin.source.line == line_of(workloads.plain_function, "x.sin()")
    assert [str(t) for t in sin.tensors] == ["f32[8, 8][8, 1]cpu"]
    assert {k.language for k in c.kernels} == {"cpp"}
    assert cap.torch_version.startswith("2.13")


def test_module_backward_partition_and_kernels(loaded):
    c = loaded("module_backward")["0/0"]
    forward, backward = c.graph("aot_forward_graph"), c.graph("aot_backward_graph")
    assert forward and backward and c.graph("aot_joint_graph")
    saved = c.partition.saved
    assert saved, "the forward must save activations for backward"
    forward_outputs = set(forward.output.inputs)
    assert {s.name for s in saved} <= forward_outputs
    # relu's mask or output and the input are saved: sizes come from the printed tensors.
    assert c.partition.saved_bytes == sum(s.tensor.nbytes for s in saved)
    assert c.partition.saved_bytes > 0
    assert [o.role for o in c.output_code] == ["forward", "backward"]
    fused = [k for k in c.output_code[0].kernels if k.fused_nodes]
    assert fused, "provenance must name the post-grad nodes each forward kernel computes"
    post_grad_names = {n.name for n in c.graphs["inductor_post_grad_graph"][0].nodes}
    for kernel in fused:
        assert set(kernel.fused_nodes) <= post_grad_names, kernel.name
    lines = {loc.line for k in c.kernels for loc in k.source_lines}
    assert line_of(workloads.TinyMLP.forward, "fc2") in lines
    extern = [k for k in c.kernels if k.language == "extern"]
    assert any(k.name.startswith("extern_kernels.") for k in extern)


def test_graph_break_reason_and_user_line(loaded):
    cap = loaded("graph_break")
    assert cap.compile_ids == ("0/0", "0/0_1", "1/0")
    ((cid, brk),) = cap.graph_breaks
    assert cid == CompileId.parse("0/0")
    assert "print" in brk.reason
    assert brk.location.line == line_of(workloads.graph_break, "print(")
    assert cap["0/0"].status == "restarted"
    assert cap["1/0"].frame.function.startswith("torch_dynamo_resume_in_f")
    assert cap["0/0_1"].graph("dynamo_output_graph").op_count == 2  # relu, mul


def test_recompile_reason(loaded):
    cap = loaded("recompile")
    assert cap.compile_ids == ("0/0", "0/1")
    (reason,) = cap["0/1"].recompile_reasons
    assert "size mismatch" in reason and "expected 4, actual 6" in reason


def test_dynamic_shapes_symbols_and_guards(loaded):
    c = loaded("dynamic_shapes")["0/0"]
    sources = {s.source for s in c.symbols}
    assert "L['x'].size()[0]" in sources
    symbol = next(s for s in c.symbols if s.source == "L['x'].size()[0]")
    assert any(symbol.name in g.expr for g in c.shape_guards)
    placeholder = c.graph("dynamo_output_graph").placeholders
    assert any(symbol.name in t.shape for n in placeholder for t in n.tensors)
    # Symbolic sizes have no byte count; they are reported, not counted as zero.
    assert all(t.nbytes is None for n in placeholder for t in n.tensors if symbol.name in t.shape)


def test_inference_has_no_backward(loaded):
    c = loaded("inference")["0/0"]
    assert c.graph("aot_inference_graph") is not None
    assert c.graph("aot_backward_graph") is None and c.partition is None
    assert [o.role for o in c.output_code] == ["inference"]


def test_joint_graph_passes_are_kept(loaded):
    # Inductor logs the inference graph before and after its joint-graph passes.
    c = loaded("inference")["0/0"]
    before, after = c.graph("before_joint_graph"), c.graph("after_joint_graph")
    assert before is not None and after is not None
    assert before.op_count > 0 and after.op_count > 0
    assert not loaded("module_backward")["0/0"].graphs.get("before_joint_graph")


def test_compiled_autograd_graph(loaded):
    cap = loaded("compiled_autograd")
    ca = [c for c in cap if c.id.compiled_autograd_id is not None]
    assert ca, "compiled autograd compile ids carry tlparse's ! prefix"
    assert any(c.graph("compiled_autograd_graph") for c in ca)
    assert any(str(c.id).startswith("!0/") for c in ca)


def test_stage_times_and_metrics(loaded):
    c = loaded("module_backward")["0/0"]
    names = {s.name for s in c.stage_times}
    assert {"dynamo", "entire_frame_compile"} <= names
    assert all(s.duration_us >= 0 for s in c.stage_times)
    assert c.compile_time_s and c.compile_time_s > 0
    assert c.metrics["co_name"] == "forward"


def test_gpt2_is_big_and_complete(loaded):
    cap = loaded("gpt2")
    biggest = max(cap, key=lambda c: len(c.kernels))
    assert len(biggest.graph("aot_backward_graph").nodes) > 200
    assert len(biggest.partition.saved) > 20
    modules = {n.module_path for n in biggest.graph("dynamo_output_graph").nodes if n.module_path}
    assert any(m.startswith("transformer") for m in modules)


def test_ranks_are_part_of_the_key():
    cap = load_trace(FIXTURES / "ranks")
    assert cap.ranks == (0, 1)
    assert cap.compile_ids == ("rank0:0/0", "rank1:0/0", "rank1:0/1")
    assert cap.rank(1)["rank1:0/1"].recompile_reasons
    assert len(cap.rank(0)) == 1


def test_triton_kernels_from_the_gpu_run(loaded):
    """Recorded on an H100 with torch 2.11 and Triton 3.6 (benchmarks/recorders/gpu_check.py)."""
    c = loaded("gpu_module_backward")["0/0"]
    triton = [k for k in c.kernels if k.language == "triton"]
    assert len(triton) == 3
    for kernel in triton:
        assert "@triton.jit" in kernel.source and f"def {kernel.name}(" in kernel.source
        assert kernel.calls == 1
    fused = next(k for k in triton if k.name == "triton_poi_fused_addmm_relu_0")
    assert fused.fused_nodes == ("add_tensor", "relu")
    assert fused.origin_nodes == ("relu",) and fused.aten_ops == ("aten.addmm", "aten.relu")
    assert {loc.line for loc in fused.source_lines} == {line_of(workloads.TinyMLP.forward, "fc2")}
    assert {k.name for k in c.kernels if k.language == "extern"} == {
        "extern_kernels.mm",
        "extern_kernels.addmm",
    }


def test_diff_of_two_ranks_and_of_a_capture_with_itself(loaded):
    cap = load_trace(FIXTURES / "ranks")
    between = compilescope.diff(cap.rank(0), cap.rank(1))
    assert between.compiles_added == ("0/1",) and not between.compiles_removed
    assert not between.same
    same = compilescope.diff(loaded("module_backward"), loaded("module_backward"))
    assert same.same and "no differences" in same.summary()
    other = compilescope.diff(loaded("recompile"), loaded("graph_break"))
    assert "0/0_1" in other.compiles_added and other.breaks_added
    assert any(k.change == "removed" for k in other.kernels)
