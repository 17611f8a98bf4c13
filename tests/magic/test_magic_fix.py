"""`%%compile_fx --fix N`: a finding's fix applied to the next capture, through a real IPython."""

from __future__ import annotations

import compilescope
import pytest

pytestmark = pytest.mark.torch


def test_fix_keeps_item_in_the_graph_and_restores_the_setting(ip, run, capsys):
    import torch

    ip.user_ns["xs"] = torch.randn(8)
    cell = "s = xs.sum().item()\ny = xs * s\ny"
    run(cell, "--backend aot_eager --no-time --quiet")
    found = compilescope.findings(compilescope.last())
    number = next(i for i, f in enumerate(found, 1) if "capture_scalar_outputs" in f.fix.python())
    assert found[number - 1].counts.breaks >= 1
    before = compilescope.last()
    result = run(cell, f"--backend aot_eager --no-time --quiet --fix {number}")
    assert result.success
    after = compilescope.last()
    assert sum(len(c.graph_breaks) for c in before) >= 1
    assert sum(len(c.graph_breaks) for c in after) == 0
    assert torch._dynamo.config.capture_scalar_outputs is False  # restored
    assert torch.equal(ip.user_ns["y"], ip.user_ns["xs"] * ip.user_ns["xs"].sum().item())


def test_fix_numbers_are_checked_before_anything_runs(ip, run, capsys):
    run("z = 1 + 1", "--backend eager --no-time --quiet")
    n = len(compilescope.findings(compilescope.last()))
    result = run("marker_fix_never_ran = 1", f"--backend eager --quiet --fix {n + 5}")
    assert "marker_fix_never_ran" not in ip.user_ns
    assert f"--fix {n + 5}: the last capture has {n} findings" in capsys.readouterr().err + str(
        result.error_in_exec or ""
    )


def test_a_users_error_under_a_fix_stays_the_users(ip, run):
    import torch

    ip.user_ns["xs"] = torch.randn(8)
    run("s = xs.sum().item()\nxs * s", "--backend aot_eager --no-time --quiet")
    found = compilescope.findings(compilescope.last())
    number = next(i for i, f in enumerate(found, 1) if "capture_scalar_outputs" in f.fix.python())
    result = run("raise ValueError('mine')", f"--backend aot_eager --quiet --fix {number}")
    assert isinstance(result.error_in_exec, ValueError) and str(result.error_in_exec) == "mine"
    assert torch._dynamo.config.capture_scalar_outputs is False
