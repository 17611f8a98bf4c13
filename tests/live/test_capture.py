"""Live capture on CPU with real torch.compile: the API, completeness, and restored state."""

from __future__ import annotations

import logging
from collections import Counter

import compilescope
import pytest
import torch
import torch._inductor.config as inductor_config
from workloads import TinyMLP

pytestmark = pytest.mark.torch


def stages(compile_) -> Counter:
    return Counter({kind: len(graphs) for kind, graphs in compile_.graphs.items()})


def trace_logger_state():
    logger = logging.getLogger("torch.__trace")
    return list(logger.handlers), logger.level


def settings_state():
    import os

    import torch._functorch.config as functorch_config

    return (
        inductor_config.force_disable_caches,
        inductor_config.fx_graph_cache,
        functorch_config.enable_autograd_cache,
        os.environ.get("TORCHINDUCTOR_CACHE_DIR"),
        os.environ.get("TRITON_CACHE_DIR"),
        inductor_config.trace.provenance_tracking_level,
        functorch_config.force_non_lazy_backward_lowering,  # torch's default stands: lazy
    )


@pytest.fixture(scope="module")
def mlp_capture():
    torch.manual_seed(0)
    model = TinyMLP()
    hook_calls = []
    model.register_forward_hook(lambda *_: hook_calls.append(1))
    cap = compilescope.capture(model, torch.randn(4, 16))
    return cap, model, hook_calls


def test_capture_holds_every_training_stage(mlp_capture):
    cap, _, _ = mlp_capture
    (c,) = cap
    for kind in (
        "dynamo_output_graph",
        "aot_joint_graph",
        "aot_forward_graph",
        "aot_backward_graph",
        "inductor_post_grad_graph",
    ):
        assert c.graph(kind) is not None, kind
    assert [o.role for o in c.output_code] == ["forward", "backward"]
    assert c.partition.saved_bytes > 0
    assert c.frame.function == "forward"
    # Every generated kernel, backward ones included, names the post-grad nodes it computes
    # (lowered lazily at the first backward, as torch does, and given their node maps).
    generated = [(o.role, k) for o in c.output_code for k in o.kernels if k.language != "extern"]
    assert {role for role, _ in generated} == {"forward", "backward"}
    assert all(k.fused_nodes for _, k in generated), [k.name for _, k in generated]
    # and the user's lines it comes from (Inductor's kernel stack traces, provenance level 2).
    assert all(k.source_lines for _, k in generated), [k.name for _, k in generated]


def test_module_hooks_still_run_and_module_is_restored(mlp_capture):
    _, model, hook_calls = mlp_capture
    assert hook_calls == [1]
    assert "forward" not in vars(model)


def test_live_objects_add_module_paths(mlp_capture):
    cap, _, _ = mlp_capture
    dynamo = cap[0].graph("dynamo_output_graph")
    by_name = {n.name: n.module_path for n in dynamo.nodes}
    assert by_name["linear"] == "fc1" and by_name["linear_1"] == "fc2"


def test_aot_and_post_grad_graphs_get_module_paths(mlp_capture):
    # The logs print these graphs without node meta; the live joint and post-grad graphs have
    # it (backward nodes as the forward module they differentiate).
    c = mlp_capture[0][0]
    for kind in ("aot_joint_graph", "aot_forward_graph", "aot_backward_graph"):
        ops = [n for n in c.graph(kind).nodes if n.op == "call_function"]
        assert {"fc1", "fc2"} <= {n.module_path for n in ops}, kind
    forward_post, backward_post = c.graphs["inductor_post_grad_graph"]
    for graph in (forward_post, backward_post):
        assert {"fc1", "fc2"} <= {n.module_path for n in graph.nodes}


def test_same_code_twice_gives_same_stages_twice():
    def f(x):
        return torch.relu(x @ x).sum()

    x = torch.randn(8, 8, requires_grad=True)
    first = compilescope.capture(f, x, backend="aot_eager")
    second = compilescope.capture(f, x, backend="aot_eager")
    assert len(first) == len(second) == 1
    assert stages(first[0]) == stages(second[0])
    assert first[0].id != second[0].id  # a fresh compile, not a cache hit
    assert "aot_backward_graph" in first[0].graphs


def test_capturing_sees_the_users_own_compile_and_restores_state():
    before = trace_logger_state(), settings_state()
    with compilescope.capturing(fresh=True) as cap:
        torch.compile(lambda a: a.cos() + 1, backend="aot_eager")(torch.randn(4))
        inside = settings_state()
        # graph caches off, one fresh cache folder for the capture, provenance (level 2), the backward lowered lazily as without us
        assert inside[:3] == (False, False, False) and inside[-2:] == (2, False)
        assert inside[3] != before[1][3] and inside[4].startswith(inside[3])
    assert (trace_logger_state(), settings_state()) == before
    # capturing()'s default: every setting in Inductor's cache key as the user had it.
    with compilescope.capturing():
        assert settings_state() == before[1]
    assert (trace_logger_state(), settings_state()) == before
    (c,) = cap
    assert c.graph("aot_inference_graph").op_count == 2


def test_show_and_diff_take_the_capturing_handle(capsys):
    with compilescope.capturing() as cap:
        torch.compile(lambda a: a.tan() * 3, backend="aot_eager")(torch.randn(4))
    compilescope.show(cap)  # outside a notebook IPython's display prints the text fallback
    assert "ops: dynamo 2, infer 2" in capsys.readouterr().out
    assert compilescope.diff(cap, cap.capture).same
    with pytest.raises(TypeError, match="show\\(\\) takes a compilescope.Capture for 'before'"):
        compilescope.show(cap, before=42)


def test_show_without_ipython_prints_the_summary(capsys, monkeypatch):
    import sys

    with compilescope.capturing() as cap:
        torch.compile(lambda a: a.cos() + 1, backend="aot_eager")(torch.randn(4))
    monkeypatch.setitem(sys.modules, "IPython.display", None)  # import fails, as without IPython
    compilescope.show(cap, before=cap)
    out = capsys.readouterr().out
    assert "ops: dynamo 2" in out and "no differences" in out


def test_state_is_restored_when_the_code_raises():
    before = trace_logger_state(), settings_state()
    with pytest.raises(ZeroDivisionError):
        with compilescope.capturing() as cap:
            torch.compile(lambda a: a.sin(), backend="aot_eager")(torch.randn(4))
            raise ZeroDivisionError
    assert (trace_logger_state(), settings_state()) == before
    assert len(cap) == 1  # what compiled before the error is kept


def test_repeated_captures_leave_nothing_behind():
    before = trace_logger_state()
    for _ in range(5):
        with compilescope.capturing():
            torch.compile(lambda a: a.tan(), backend="eager")(torch.randn(2))
    assert trace_logger_state() == before


def test_captures_do_not_nest():
    with compilescope.capturing():
        with pytest.raises(RuntimeError, match="already running"):
            with compilescope.capturing():
                pass


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="got int"):
        compilescope.capture(3)
    with pytest.raises(ValueError, match="only to backend='inductor'"):
        compilescope.capture(lambda x: x, torch.randn(2), backend="eager", mode="max-autotune")
    with pytest.raises(KeyError, match="no_such_option"):
        with compilescope.capturing(no_such_option=1):
            pass
    state = settings_state()
    assert state[:3] == (False, True, True) and state[-2:] == (0, False)


def test_no_backward_when_asked_not_to():
    cap = compilescope.capture(
        lambda x: x.exp(), torch.randn(3, requires_grad=True), backward=False, backend="aot_eager"
    )
    # The forward is compiled for training (it could be differentiated), but backward never ran.
    assert cap[0].graph("aot_forward_graph") is not None


def test_a_compiled_module_is_named_by_the_line_that_called_it():
    # torch.compile(module) compiles torch's own wrapper (external_utils.inner), not forward:
    # the capture names the user's line that called the module instead.
    import inspect

    model = torch.compile(torch.nn.Linear(4, 4), backend="aot_eager")
    with compilescope.capturing() as handle:
        line = inspect.currentframe().f_lineno + 1
        model(torch.randn(2, 4))
    (c,) = handle.capture
    assert c.frame.in_torch and c.frame.function == "inner"
    assert c.frame.label() == f"compiled module called at live/test_capture.py:{line}"
    assert "compiled module called at" in handle.capture.summary()


def test_torchs_warnings_are_kept_in_the_capture_not_printed(capfd):
    import torch._dynamo

    def f(x):
        y = x.cos()
        return y * y.sum().item()  # torch warns: "Graph break from `Tensor.item()`"

    torch._dynamo.reset()
    # torch says this once per process (functools.cache): a test before this one may have.
    from torch._dynamo.variables.tensor import TensorVariable

    TensorVariable._warn_capture_scalar_outputs.cache_clear()
    with compilescope.capturing() as cap:
        torch.compile(f, backend="eager")(torch.randn(3))
    said = [m for m in cap.capture.messages if "Tensor.item()" in m.message]
    assert len(said) == 1 and said[0].compile_id == "0/0"
    assert "Tensor.item()" not in capfd.readouterr().err


def test_a_torch_module_is_named_by_the_users_line_not_by_capture():
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    cap = compilescope.capture(layer, torch.randn(2, 4, 16), backend="aot_eager", timings=False)
    label = cap.compiles[0].frame.label(cap.cells)
    assert "test_capture.py" in label and "session.py" not in label, label


def test_lazily_lowered_backwards_name_their_own_nodes_only():
    # Two graphs (a graph break), both backwards lowered lazily at the first backward: each
    # backward kernel names nodes of its own backward graph, none of the other compile's.
    torch.manual_seed(0)
    first, second = torch.nn.Linear(8, 8), torch.nn.Linear(8, 4)

    def step(x):
        h = torch.nn.functional.gelu(first(x)) * 2
        torch._dynamo.graph_break()
        return torch.tanh(second(h)).sum()

    cap = compilescope.capture(step, torch.randn(4, 8), timings=False)
    backwards = [c for c in cap if any(o.role == "backward" for o in c.output_code)]
    assert len(backwards) == 2
    for c in backwards:
        names = {n.name for n in c.graphs["inductor_post_grad_graph"][-1].nodes}
        kernels = [k for o in c.output_code if o.role == "backward" for k in o.kernels]
        generated = [k for k in kernels if k.language != "extern"]
        assert generated and all(k.fused_nodes for k in generated), c.id
        assert all(set(k.fused_nodes) <= names for k in kernels), c.id


def test_a_forward_only_capture_says_the_backward_was_not_compiled():
    # torch lowers the backward at its first call; a capture that never ran backward has its
    # backward graph (from the partition) and no backward kernels, and the view says why.
    from compilescope.views.view_data import capture_data

    torch.manual_seed(0)
    forward_only = compilescope.capture(
        TinyMLP(), torch.randn(4, 16), backward=False, timings=False
    )
    (c,) = [c for c in forward_only if c.output_code]
    assert c.graph("aot_backward_graph") is not None
    assert [o.role for o in c.output_code] == ["forward"]
    (shown,) = [d for d in capture_data(forward_only)["compiles"] if d["output_code"]]
    assert shown["backward_pending"] is True
    both = compilescope.capture(TinyMLP(), torch.randn(4, 16), timings=False)
    assert not any(d["backward_pending"] for d in capture_data(both)["compiles"])
