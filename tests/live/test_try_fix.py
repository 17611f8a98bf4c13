"""try_fix and applying: a fix applied to a second capture of the same code, settings restored."""

from __future__ import annotations

import logging
import sys

import compilescope
import pytest
from compilescope.live.trials.fixes import applying, resolve_ref
from compilescope.model.findings.parts import Finding, Fix, Setting

pytestmark = pytest.mark.torch


def item_in_loss(x):
    return x * x.sum().item()


def test_try_fix_removes_the_item_break_and_restores_the_setting():
    import torch

    cap = compilescope.capture(
        item_in_loss, torch.randn(8), backward=False, backend="aot_eager", timings=False
    )
    found = compilescope.findings(cap)
    top = found[0]
    assert top.kind == "data_dependent" and "capture_scalar_outputs" in top.fix.python()
    trial = compilescope.try_fix(cap, 1)
    rows = {name: (a, b) for name, a, b in trial.rows()}
    assert rows["graph breaks"][0] >= 1 and rows["graph breaks"][1] == 0
    assert rows["compile ids"][1] == 1
    assert torch._dynamo.config.capture_scalar_outputs is False
    assert "graph breaks" in str(trial) and "capture_scalar_outputs = True" in str(trial)


def test_recompiles_from_a_changing_size_go_with_dynamic():
    import torch

    def grow(x):
        return (x.sin() + 1).sum()

    def step(n):
        return grow(torch.randn(n))

    def loop():
        for n in (2, 3, 4, 5):
            grow_compiled(torch.randn(n))

    grow_compiled = torch.compile(grow, backend="aot_eager")
    with compilescope.capturing() as cap:
        loop()
    found = [f for f in compilescope.findings(cap.capture) if f.kind == "recompile"]
    assert found and any(s.op == "compile_kwarg" for fix in found[0].fixes for s in fix.settings)
    # capturing() cannot run the code again: the error says how to apply the fix instead
    with pytest.raises(ValueError, match="applying"):
        compilescope.try_fix(cap.capture, found[0])


def test_a_code_fix_is_shown_not_applied():
    import torch

    cap = compilescope.capture(
        item_in_loss, torch.randn(4), backward=False, backend="eager", timings=False
    )
    code = Fix("code", "move it", change="compute the scalar outside the compiled function")
    with pytest.raises(ValueError, match="change to your code"):
        compilescope.try_fix(cap, Finding("graph_break", "x", "k", fixes=(code,)))


def test_applying_restores_on_error_and_adds_logging_methods():
    import torch

    log = logging.getLogger("compilescope.test.app")
    fix = Fix(
        "setting",
        "ignore it",
        (
            Setting(
                "torch._dynamo.config.ignore_logging_functions",
                "add",
                {"logger": log.name, "method": "warning"},
            ),
            Setting("torch._dynamo.config.capture_scalar_outputs", "set", True),
        ),
    )
    with pytest.raises(RuntimeError), applying(fix):
        assert log.warning in torch._dynamo.config.ignore_logging_functions
        assert torch._dynamo.config.capture_scalar_outputs is True
        raise RuntimeError("boom")
    assert log.warning not in torch._dynamo.config.ignore_logging_functions
    assert torch._dynamo.config.capture_scalar_outputs is False


def test_references_resolve_only_to_imported_modules_and_plain_names():
    assert resolve_ref({"ref": "logging:getLogger"}) is logging.getLogger
    assert "compilescope_never_imported_xyz" not in sys.modules
    for bad in (
        {"ref": "compilescope_never_imported_xyz:f"},  # importing would run its code
        {"ref": "os:__class__"},
        {"ref": "os:system()"},
        {"ref": "os"},
        "os.system",
    ):
        with pytest.raises(ValueError):
            resolve_ref(bad)
    with pytest.raises(ValueError, match="config modules only"):
        with applying(Fix("setting", "x", (Setting("os.environ", "set", 1),))):
            pass


def test_the_cudnn_auto_tuner_fix_is_held_and_restored():
    import torch
    from compilescope.model.findings.catalog import remedy

    fix = remedy("cudnn_benchmark").fix()
    before = torch.backends.cudnn.benchmark
    with pytest.raises(RuntimeError), applying(fix):
        assert torch.backends.cudnn.benchmark is True
        raise RuntimeError("boom")
    assert torch.backends.cudnn.benchmark is before


def test_the_cudnn_back_on_fix_is_held_and_restored():
    import torch
    from compilescope.model.findings.catalog import remedy

    torch.backends.cudnn.enabled = False  # as the fourth blind round's loop left it
    try:
        with applying(remedy("cudnn_enabled").fix()):
            assert torch.backends.cudnn.enabled is True
        assert torch.backends.cudnn.enabled is False
    finally:
        torch.backends.cudnn.enabled = True


def test_the_step_settings_read_the_debugging_ones():
    import torch
    from compilescope.live.timing.step_context import step_settings

    assert step_settings(gpu=False).anomaly_detection is False
    with torch.autograd.set_detect_anomaly(True):
        assert step_settings(gpu=False).anomaly_detection is True
    assert step_settings(gpu=False).anomaly_detection is False
    assert step_settings(gpu=False).profiler is False
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        assert step_settings(gpu=False).profiler is True
    assert step_settings(gpu=False).deterministic is False
    torch.use_deterministic_algorithms(True)
    try:
        assert step_settings(gpu=False).deterministic is True
    finally:
        torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.deterministic = True
    try:
        assert step_settings(gpu=False).deterministic is True
    finally:
        torch.backends.cudnn.deterministic = False


def test_attention_backends_off_are_read_and_the_determinism_fix_is_held_and_restored():
    import torch
    from compilescope.live.timing.step_context import _sdpa_math_only
    from compilescope.model.findings.catalog import remedy
    from torch.nn.attention import SDPBackend, sdpa_kernel

    assert _sdpa_math_only() is False
    with sdpa_kernel(SDPBackend.MATH):
        assert _sdpa_math_only() is True
    assert _sdpa_math_only() is False
    torch.backends.cudnn.deterministic = True
    try:
        with applying(remedy("nondeterministic_kernels").fix()):
            assert torch.backends.cudnn.deterministic is False
        assert torch.backends.cudnn.deterministic is True
    finally:
        torch.backends.cudnn.deterministic = False
