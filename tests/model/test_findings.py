"""Findings from recorded logs and saved captures: grouped by cause, placed at the user's line,
ranked by cost, with fixes as data (no torch needed)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import compilescope
import pytest
from compilescope.model.compile import Compile
from compilescope.model.compile_id import CompileId
from compilescope.model.findings.guards import guard_of
from compilescope.model.findings.parts import Finding
from compilescope.model.findings.ranked import findings, text
from compilescope.model.findings.torch_hints import torch_texts
from compilescope.model.graph import TensorMeta
from compilescope.model.kernel import Kernel, OutputCode
from compilescope.model.measured.timing import GraphTiming, KernelTiming, Sample, Timings
from compilescope.model.partition import Partition, Repartition, SavedTensor
from compilescope.trace import graph_break_registry

BREAKS = ("graph_break", "data_dependent", "eager_frame")


@pytest.fixture(scope="module")
def registry():
    return graph_break_registry.load()


def of_kind(found, *kinds):
    return [f for f in found if f.kind in kinds]


def test_gpt2_logging_breaks_are_one_finding_with_the_fix_torch_names(loaded, registry):
    found = findings(loaded("gpt2"), registry)
    breaks = of_kind(found, *BREAKS)
    assert len(breaks) == 1  # three frames stop at the same logging call: one cause
    (f,) = breaks
    assert found[0] is f  # it costs the most
    assert f.kind == "graph_break" and "`logger.warning_once`" in f.what
    # Two breaks, as Dynamo counts them (wrapper, loss_function); `forward` cannot resume from
    # the same call and runs the rest eagerly: a fallback, not a third break.
    assert (f.counts.breaks, f.counts.restarts, f.counts.frames) == (2, 3, 3)
    assert f.counts.partly_eager_frames == 1 and "the rest of `forward` runs eagerly" in f.what
    assert f.compile_ids == ("0/0", "0/0_1", "1/0", "1/0_1", "2/0", "2/0_1")
    # Where: the user's own line, and the library line that breaks.
    assert (f.user.file.endswith("tests/workloads.py"), f.user.line) == (True, 81)
    assert f.user.code.startswith("out = torch.compile(model)(input_ids=ids, labels=ids)")
    assert f.at.file.endswith("transformers/modeling_utils.py") and f.at.line == 4769
    assert f.at.code == "logger.warning_once("
    # torch's own words: gb id, explanation, hints, and its message once.
    assert f.torch.gb_id == "GB0291"
    assert f.torch.gb_type == "logging.Logger method not supported for non-export cases"
    assert "logging.Logger methods are not supported" in f.torch.explanation
    assert any("ignore_logging_functions" in h for h in f.torch.hints)
    assert "loss_type=None" in f.torch.message
    # The fix, as data: add the logger's method to Dynamo's ignore list.
    fix = f.fix
    assert fix.kind == "setting" and fix.source == "torch's hint for GB0291"
    (setting,) = fix.settings
    assert setting.target == "torch._dynamo.config.ignore_logging_functions"
    assert setting.op == "add"
    assert setting.value == {"ref": "transformers.modeling_utils:logger.warning_once"}
    assert fix.python() == (
        "torch._dynamo.config.ignore_logging_functions.add("
        "transformers.modeling_utils.logger.warning_once)"
    )
    assert f.cost.graphs == 2 and f.cost.compile_s == pytest.approx(1.328, abs=0.01)


def test_print_break_is_placed_at_the_users_line(loaded, registry):
    found = findings(loaded("graph_break"), registry)
    (f,) = of_kind(found, *BREAKS)
    assert f.kind == "graph_break" and f.what.startswith("`print()` breaks the graph")
    assert f.user.line == 34 and f.user.code == 'print("a print breaks the graph")'
    assert f.at is None  # the user's own code breaks: no library line
    assert f.torch.gb_id == "GB0059"
    # The break, its restart, and the resume function after the print.
    assert f.compile_ids == ("0/0", "0/0_1", "1/0")
    assert (f.counts.breaks, f.counts.restarts) == (1, 1)
    setting_fix, code_fix = f.fixes[:2]
    assert setting_fix.settings[0].target == "torch._dynamo.config.reorderable_logging_functions"
    assert setting_fix.settings[0].value == {"ref": "builtins:print"}
    assert code_fix.kind == "code" and "print" in code_fix.change and code_fix.where.line == 34
    assert not any("report an issue" in fx.change for fx in f.fixes)


def test_recompile_names_the_guard_and_suggests_dynamic(loaded):
    found = findings(loaded("recompile"))
    (f,) = of_kind(found, "recompile")
    assert f.what == "`f` recompiles when dim 0 of `x` changes (4, 6)."
    assert f.compile_ids == ("0/1",) and f.counts.recompiles == 1
    assert f.user.line == 41 and f.cost.compile_s == pytest.approx(0.706, abs=0.01)
    mark, dynamic = f.fixes
    assert [(s.target, s.op, s.value) for s in mark.settings] == [("x", "mark_dynamic", 0)]
    assert [(s.target, s.op, s.value) for s in dynamic.settings] == [
        ("dynamic", "compile_kwarg", True)
    ]

    # Under CUDA graphs (mode="reduce-overhead") each distinct size records a graph, dynamic
    # or not: padding to fixed sizes comes first (the third blind round's batches padded to
    # their longest sequence, 48x slower; pytorch/pytorch#188150).
    def graphed(on_gpu: bool):
        def kernels(c):
            return tuple(
                replace(o, kernels=tuple(replace(k, language="triton") for k in o.kernels))
                for o in c.output_code
            )

        return replace(
            loaded("recompile"),
            compiles=tuple(
                replace(
                    c,
                    metrics={**c.metrics, "cudagraphs": True},
                    output_code=kernels(c) if on_gpu else c.output_code,
                )
                for c in loaded("recompile")
            ),
        )

    from compilescope.model.findings.cudagraph_sizes import _cudagraphs

    first = loaded("recompile").compiles[0]
    for config, on in (('{"a": 1, "triton.cudagraphs": true}', True),
                       ('{"triton.cudagraphs": false, "b": true}', False)):  # fmt: skip
        assert _cudagraphs(replace(first, metrics={"inductor_config": config})) is on
    (cpu,) = of_kind(findings(graphed(False)), "recompile")  # Inductor skips them on a CPU
    assert cpu.fixes[0].title == mark.title
    (g,) = of_kind(findings(graphed(True)), "recompile")
    assert "each distinct size records a graph of its own" in g.what
    assert g.fixes[0].title == "pad inputs to fixed sizes" and "max_length" in g.fixes[0].change
    assert [x.title for x in g.fixes[1:]] == [mark.title, dynamic.title]
    assert guard_of("3/1: tensor 'y' size mismatch at index 1. expected 8, actual 9") == (
        "tensor 'y' size mismatch at index 1"
    )
    # Object ids differ from run to run, and torch appends the source line: both left out.
    type_guard = "0/0: ___check_type_id(self, 1058181840), type=<class 'M'>  # x = f(y)  # a.py:8"
    assert guard_of(type_guard) == "___check_type_id(self, <id>), type=<class 'M'>"


@pytest.mark.parametrize(
    "name",
    ["plain_function", "module_backward", "dynamic_shapes", "inference", "compiled_autograd"],
)
def test_clean_captures_have_no_break_or_recompile_findings(loaded, registry, name):
    found = findings(loaded(name), registry)
    assert not of_kind(found, *BREAKS, "recompile", "recompile_limit")
    # What is left is about time only (on CPU: the C++ compiler's share of compile time).
    assert {f.kind for f in found} <= {"compile_time", "fallback_op"}


def test_compile_time_hot_spot(loaded):
    (f,) = of_kind(findings(loaded("module_backward")), "compile_time")
    c = loaded("module_backward")["0/0"]
    total = sum(s.duration_us for s in c.stage_times if s.depth == 0) / 1e6
    assert f.what.startswith(f"Compile time {total:.1f} s")
    assert "kernel compilation (C++ compiler or Triton)" in f.what.split(":")[1]
    assert 0.5 * total < f.cost.compile_s < total
    # A log's compile missed no cache it knows of, recorded cold: the cache is the remedy.
    assert f.fix is not None and f.fix.title == "reuse torch's compile caches"


def test_ranked_and_json_round_trip(loaded, registry):
    capture = loaded("gpt2")
    found = findings(capture, registry)
    assert [f.score for f in found] == sorted((f.score for f in found), reverse=True)
    assert all(f.score > 0 for f in found)
    for f in found:
        data = json.loads(json.dumps(f.to_dict()))  # plain JSON, nothing live
        assert Finding.from_dict(data) == f
    # A saved capture gives the same findings as the log it was read from.
    assert findings(compilescope.Capture.from_json(capture.to_json()), registry) == found


def test_text_summary(loaded, registry):
    summary = text(findings(loaded("gpt2"), registry))
    first = summary.split("\n2.")[0]
    assert first.startswith("1. [graph break] The logging call `logger.warning_once`")
    assert "(GB0291)" in first and "2 breaks, 3 restarts, 1 partly eager frame" in first
    assert "where: tests/workloads.py:81" in first and "modeling_utils.py:4769" in first
    assert "fix: torch._dynamo.config.ignore_logging_functions.add(" in first
    assert text(()).startswith("no findings")


def test_without_registry_the_message_is_enough(loaded, registry):
    (with_registry,) = of_kind(findings(loaded("gpt2"), registry), *BREAKS)
    (alone,) = of_kind(findings(loaded("gpt2")), *BREAKS)
    assert alone.torch.gb_id == "GB0291" and alone.fixes == with_registry.fixes


def test_registry_fills_what_a_message_leaves_out(registry):
    assert registry["GB0291"][0]["Gb_type"].startswith("logging.Logger method")
    # A restart reason names the break by its type only: the registry gives id and hints.
    (bare,) = torch_texts(
        "logging.Logger method not supported for non-export cases\n  Explanation: x"
    )
    assert bare.gb_id == "" and not bare.hints
    (full,) = torch_texts(
        "logging.Logger method not supported for non-export cases\n  Explanation: x", registry
    )
    assert full.gb_id == "GB0291" and "ignore_logging_functions" in full.hints[0]


def test_registry_is_read_without_importing_torch(tmp_path):
    code = (
        "import sys\nfrom compilescope.trace.graph_break_registry import load, read\n"
        "assert 'GB0291' in load() and 'torch' not in sys.modules\n"
        f"assert read(__import__('pathlib').Path({str(tmp_path / 'none.json')!r})) == {{}}\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- measured captures, built as data ----------------------------------------------------------


def _timed_capture() -> compilescope.Capture:
    """One compile: a library matmul, an ATen fallback and a fused C++ kernel, all timed."""
    kernels = (
        Kernel("extern_kernels.mm", "extern"),
        Kernel("torch.ops.aten.nonzero.default", "extern"),
        Kernel("cpp_fused_relu_0", "cpp"),
    )
    c = Compile(CompileId(frame_id=0, frame_compile_id=0),
                output_code=(OutputCode("", role="forward", kernels=kernels),))  # fmt: skip

    def timed(name: str, seconds: float, nbytes: float, flops: float | None = None):
        sample = Sample(seconds, seconds, seconds, 5)
        return KernelTiming("0/0", name, sample, 1.0, bytes_per_call=nbytes, flops_per_call=flops)

    timings = Timings(
        device="cuda:0",
        graphs=(GraphTiming("0/0", "forward", compiled=Sample(1e-3, 1e-3, 1e-3, 5)),),
        kernels=(
            timed("extern_kernels.mm", 5e-4, 4e6, 2e9),
            timed("torch.ops.aten.nonzero.default", 3e-4, 1e6),
            timed("cpp_fused_relu_0", 2e-4, 8e6),
        ),
        peak_bytes_per_s=1e11,
        peak_flops=1e13,
    )
    return compilescope.Capture((c,), timings=timings)


def _fallbacks_capture(seconds: dict[str, float] | None) -> compilescope.Capture:
    """One compile whose forward calls these ATen ops (name -> seconds per call, of a 1 ms
    step); None: a log, nothing timed."""
    names = ["convolution_backward", "_scaled_dot_product_cudnn_attention_backward", "nonzero"]
    kernels = tuple(Kernel(f"torch.ops.aten.{n}.default", "extern") for n in names)
    c = Compile(CompileId(frame_id=0, frame_compile_id=0),
                output_code=(OutputCode("", role="forward", kernels=kernels),))  # fmt: skip
    if seconds is None:
        return compilescope.Capture((c,))
    timings = Timings(
        device="cuda:0",
        graphs=(GraphTiming("0/0", "forward", compiled=Sample(1e-3, 1e-3, 1e-3, 5)),),
        kernels=tuple(
            KernelTiming("0/0", f"torch.ops.aten.{n}.default", Sample(t, t, t, 5), 1.0)
            for n, t in seconds.items()
        ),
    )
    return compilescope.Capture((c,), timings=timings)


def test_ops_inductor_leaves_to_a_library_on_purpose_are_findings_only_by_their_share():
    """cuDNN's convolution backward and the attention kernels are ATen fallbacks that torch
    makes on purpose (make_fallback(..., warn=False); conv backward stays on cuDNN on CUDA):
    nothing to change. Seen on GPU runs as findings with no fix: `convolution_backward` at 4%
    of a ResNet-18 step, the cuDNN attention at 0% of a GPT-2's."""
    untimed = findings(_fallbacks_capture(None))
    (aten,) = of_kind(untimed, "fallback_op")  # a log: only the op Inductor could have made
    assert aten.what.startswith("`aten.nonzero` runs as an ATen fallback")
    small = findings(_fallbacks_capture({"convolution_backward": 4e-5, "nonzero": 2e-5,
                                         "_scaled_dot_product_cudnn_attention_backward": 0.0}))  # fmt: skip
    assert [f.what.split("`")[1] for f in of_kind(small, "fallback_op")] == ["aten.nonzero"]
    # Timed, an ATen fallback of under 1% of the step is no finding either (the kernel table
    # lists it): `aten.randint` at 0% of a GPU GPT-2 step was one, with nothing to gain.
    tiny = findings(_fallbacks_capture({"convolution_backward": 4e-5, "nonzero": 5e-6}))
    assert not of_kind(tiny, "fallback_op")
    large = findings(_fallbacks_capture({"convolution_backward": 3e-4,
                                         "_scaled_dot_product_cudnn_attention_backward": 2e-4}))  # fmt: skip
    by_op = {f.what.split("`")[1]: f for f in of_kind(large, "fallback_op")}
    conv = by_op["aten.convolution_backward"]
    attention = by_op["aten._scaled_dot_product_cudnn_attention_backward"]
    assert conv.what.startswith("`aten.convolution_backward` runs in a library kernel")
    assert "30% of the step" in conv.what and "20% of the step" in attention.what
    assert not conv.fixes and not attention.fixes


def test_no_findings_says_whether_speed_was_judged():
    """A log holds no step times: "nothing stood out" would claim a speed verdict never made
    (a ResNet-18 GPU log read "no findings: nothing broke, recompiled or stood out")."""
    from compilescope.views.result_view import fallback_html, view_data

    empty = Compile(CompileId(frame_id=0, frame_compile_id=0))
    untimed = compilescope.Capture((empty,))
    timed = _fallbacks_capture({"convolution_backward": 1e-5})
    timed = replace(timed, compiles=(empty,))
    for cap, says in ((untimed, "Speed is not judged without step times"),
                      (timed, "nothing broke, recompiled or stood out")):  # fmt: skip
        assert findings(cap) == ()
        data = view_data(cap)
        assert says in data["findings_none"]
        assert says in fallback_html(cap, data, (), brief=True)
    assert "stood out" not in view_data(untimed)["findings_none"]


def test_fallbacks_and_hot_kernels_by_measured_share():
    found = findings(_timed_capture())
    (aten,) = of_kind(found, "fallback_op")
    assert aten.what.startswith("`aten.nonzero` runs as an ATen fallback")
    assert aten.cost.share == pytest.approx(0.3) and aten.cost.step_s == pytest.approx(3e-4)
    # On a GPU the library matmuls come together, with max-autotune and its compile-time cost.
    (mm,) = of_kind(found, "library_matmul")
    assert mm.cost.share == pytest.approx(0.5) and "`mm` 50%" in mm.what
    assert mm.fix.settings[0].target == "torch._inductor.config.max_autotune_gemm"
    assert "compile time" in mm.what and "compile" in mm.fix.tradeoff
    (hot,) = of_kind(found, "hot_kernel")
    # 8 MB in 0.2 ms: 40 GB/s of a 100 GB/s roof, no FLOPs: memory-bound at 40%.
    assert "20% of the step" in hot.what and "memory-bound at 40%" in hot.what
    assert found.index(mm) < found.index(aten) < found.index(hot)


def test_activation_memory_against_the_budget_sweep(loaded):
    capture = loaded("module_backward")
    c = capture["0/0"]
    now = c.partition.activation_bytes
    assert now > 0

    def point(budget, nbytes, recomputed):
        meta = TensorMeta("u8", (str(nbytes),), ("1",), "cpu")
        saved = (SavedTensor("a", meta, kind="activation"),) if nbytes else ()
        names = tuple(f"r{i}" for i in range(recomputed))
        return Repartition("min_cut", budget, Partition(saved, names, 0, None, "min_cut", budget))

    sweep = (point(0.0, 0, 9), point(0.5, now // 2, 3), point(0.8, now - 8, 1), point(None, now, 0))
    capture = replace(capture, compiles=(replace(c, repartitions=sweep),))
    (f,) = of_kind(findings(capture), "activation_memory")
    # Half the possible saving at the largest budget that gets it: 0.5.
    (setting,) = f.fix.settings
    assert (setting.target, setting.op, setting.value) == (
        "torch._functorch.config.activation_memory_budget", "set", 0.5
    )  # fmt: skip
    assert f.cost.bytes == now and f.cost.saved_bytes == now - now // 2
    assert "recomputes 3 ops" in f.fix.tradeoff


def test_activation_memory_leaves_out_the_point_without_a_budget(loaded):
    # The re-partition without a budget (None) saves the most here, but it is no setting to
    # suggest, and None cannot be compared with a budget when picking the largest one.
    capture = loaded("module_backward")
    c = capture["0/0"]
    now = c.partition.activation_bytes
    assert now > 0

    def point(budget, nbytes, recomputed):
        meta = TensorMeta("u8", (str(nbytes),), ("1",), "cpu")
        saved = (SavedTensor("a", meta, kind="activation"),) if nbytes else ()
        names = tuple(f"r{i}" for i in range(recomputed))
        return Repartition("min_cut", budget, Partition(saved, names, 0, None, "min_cut", budget))

    sweep = (point(0.2, now // 4, 6), point(0.5, now // 2, 3), point(None, now // 8, 0))
    capture = replace(capture, compiles=(replace(c, repartitions=sweep),))
    (f,) = of_kind(findings(capture), "activation_memory")
    # Among the budgets set (0.2, 0.5), 0.5 is the largest with half the possible saving.
    (setting,) = f.fix.settings
    assert (setting.target, setting.op, setting.value) == (
        "torch._functorch.config.activation_memory_budget", "set", 0.5
    )  # fmt: skip
    assert f.cost.saved_bytes == now - now // 2
    assert "memory budget of 0.5 saves" in f.what


def test_print_of_what_torch_cannot_reorder_gets_no_reorder_fix():
    """torch reorders a logging call only when its arguments are tensors, constants or string
    formatters: `print("h:", h.shape)` would break again, so the setting is not offered."""
    from compilescope.model.findings.parts import TorchText
    from compilescope.model.findings.torch_hints import hint_fixes

    hints = (
        "Avoid calling builtin `print` with argument types ['str', 'torch.Size'].",
        "If you are attempting to call a logging function (e.g. `print`), you can try adding it "
        "to `torch._dynamo.config.reorderable_logging_functions`.",
    )
    size = "builtin print [<class 'torch._dynamo.variables.constant.ConstantVariable'>, <class 'torch._dynamo.variables.lists.SizeVariable'>] False"  # fmt: skip
    constant = "builtin print [<class 'torch._dynamo.variables.constant.ConstantVariable'>] False"
    for context, offered in ((size, False), (constant, True)):
        text = TorchText("GB0059", "Failed to trace builtin operator", "", hints, context, "")
        fixes = hint_fixes((text,), None)
        settings = [s for f in fixes for s in f.settings]
        assert any(s.target.endswith("reorderable_logging_functions") for s in settings) is offered
        assert any(f.kind == "code" and "Avoid calling builtin" in f.change for f in fixes)


def test_a_numpy_function_torch_cannot_trace_gets_a_code_fix():
    # GB0294's only hint asks for a bug report; the change a user can make is ours to say.
    from compilescope.model.findings.parts import TorchText
    from compilescope.model.findings.torch_hints import hint_fixes

    text = TorchText(
        gb_id="GB0294",
        gb_type="attempted to trace numpy function unsupported by PyTorch",
        hints=("It may be possible to write Dynamo tracing rules for this code. Please report an "
               "issue to PyTorch if you encounter this graph break often.",),
        context="numpy function: <function polyval at 0x7f>, args: [], kwargs: {} "
        "(corresponding torch function: None)",
    )  # fmt: skip
    (fix,) = hint_fixes((text,), None)
    assert fix.kind == "code" and fix.source == "compilescope"
    assert "no np.polyval" in fix.change and "outside the compiled function" in fix.change


def test_what_a_break_is_comes_after_what_to_do_about_it():
    # torch 2.11's data-dependent branch (GB0170): its first hint says the break is
    # fundamental, its second names `torch.cond`; the fix to try is the second.
    from compilescope.model.findings.parts import TorchText
    from compilescope.model.findings.torch_hints import hint_fixes

    text = TorchText(
        gb_id="GB0170",
        gb_type="Data-dependent branching",
        hints=("This graph break is fundamental - it is unlikely that Dynamo will ever be able "
               "to trace through your code. Consider finding a workaround.",
               "Use `torch.cond` to express dynamic control flow."),
    )  # fmt: skip
    first, second = hint_fixes((text,), None)
    assert "torch.cond" in first.change and "fundamental" in second.change
