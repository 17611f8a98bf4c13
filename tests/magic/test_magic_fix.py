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


def _item_finding_with(monkeypatch, run, ip, *extra):
    """The `.item()` break's finding of a first capture, its fix given `extra` settings too,
    offered as finding 1 of the last capture (what `--fix 1` reads)."""
    import dataclasses

    import compilescope.model.findings.ranked as findings_module
    import torch
    from compilescope.model.findings.parts import Setting

    ip.user_ns["xs"] = torch.randn(8)
    run("s = xs.sum().item()\ny = xs * s\ny", "--backend aot_eager --no-time --quiet")
    found = compilescope.findings(compilescope.last())
    item = next(f for f in found if "capture_scalar_outputs" in f.fix.python())
    fix = dataclasses.replace(
        item.fix, settings=(*item.fix.settings, *(Setting(*e) for e in extra))
    )
    changed = dataclasses.replace(item, fixes=(fix,))
    monkeypatch.setattr(findings_module, "findings", lambda *_: (changed,))
    return compilescope.last()


def test_a_fix_goes_through_the_same_path_as_try_fix(ip, run, monkeypatch):
    # A config setting and a torch.compile argument (backend) in one fix: the magic applies
    # both, as try_fix does (its own copy knew only dynamic= and fullgraph=).
    import torch

    before = _item_finding_with(monkeypatch, run, ip, ("backend", "compile_kwarg", "eager"))
    assert any(k.startswith("aot_") for c in before for k in c.graphs)
    result = run(
        "s = xs.sum().item()\ny = xs * s\ny", "--backend aot_eager --no-time --quiet --fix 1"
    )
    assert result.success
    after = compilescope.last()
    assert sum(len(c.graph_breaks) for c in after) == 0  # capture_scalar_outputs held
    assert after.compiles and not any(k.startswith("aot_") for c in after for k in c.graphs)
    assert torch._dynamo.config.capture_scalar_outputs is False  # restored


def test_a_fix_that_cannot_be_applied_is_a_usage_error_and_runs_nothing(ip, run, monkeypatch):
    import torch

    _item_finding_with(monkeypatch, run, ip, ("torch._dynamo.config.no_such_key", "set", 1))
    result = run("marker_unapplied_fix = 1", "--backend aot_eager --quiet --fix 1")
    assert "marker_unapplied_fix" not in ip.user_ns
    assert "this torch has no setting torch._dynamo.config.no_such_key" in str(
        result.error_in_exec or ""
    )
    assert torch._dynamo.config.capture_scalar_outputs is False  # undone
