"""%%compile_fx times by default, says nothing while it measures, and --no-time turns it off."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.torch

# What Inductor or the profiler would print if they leaked: Inductor's benchmark_kernel line,
# kineto's start/stop lines (torch 2.13 CPU builds), the profiler's warnings.
_LEAKS = ("Compiled module path", "USDT", "profiler", "STAGE:", "Warning", "[W")


def test_a_cell_is_timed_by_default_and_nothing_leaks_into_its_output(ip, run, capfd):
    torch = ip.user_ns["torch"]
    ip.user_ns["lin"] = torch.nn.Linear(16, 8)
    ip.user_ns["xs"] = torch.randn(32, 16)
    capfd.readouterr()  # start clean: only this cell's output below
    result = run("y = lin(xs).relu()\ny.sum()", "--backend inductor --backward --out cap_t --quiet")
    assert result.success
    out, err = capfd.readouterr()  # OS-level stdout and stderr, as Jupyter's kernel forwards
    assert not [leak for leak in _LEAKS if leak in out + err], out + err
    assert err == "", err
    cap = ip.user_ns["cap_t"]
    (g,) = cap.timings.graphs
    assert g.compiled is not None and g.compiled_backward is not None
    assert {t.role for t in cap.timings.kernels} == {"forward", "backward"}


def test_no_time_turns_timings_off_and_time_is_still_accepted(ip, run):
    assert run("a = xs * 2", "--backend aot_eager --no-time --out cap_nt --quiet").success
    assert ip.user_ns["cap_nt"].timings is None
    assert run("b = xs * 3", "--backend aot_eager --time --out cap_yt --quiet").success
    assert ip.user_ns["cap_yt"].timings is not None
