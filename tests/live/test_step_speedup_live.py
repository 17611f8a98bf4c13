"""A code change proven on the user's real steps: an eager per-parameter Adam, then a fused one,
each loop captured, and diff(before, after) gives the step speedup with its verdict (issue 31)."""

from __future__ import annotations

import compilescope
import pytest
import torch
from compilescope.model.measured.speedup import NOISE, verdict

pytestmark = [pytest.mark.torch, pytest.mark.timing]  # a measured speedup


def _captured_loop(**optimizer_flags: bool) -> compilescope.Capture:
    torch.manual_seed(0)
    torch._dynamo.reset()  # each loop compiles its own model from scratch
    # Many small parameter tensors: an eager per-parameter Adam is most of such a step.
    model = torch.nn.Sequential(*[torch.nn.Linear(16, 16) for _ in range(40)])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, **optimizer_flags)
    compiled = torch.compile(model)
    x = torch.randn(8, 16)
    with compilescope.capturing() as cap:
        for _ in range(40):
            compiled(x).pow(2).mean().backward()
            opt.step()
            opt.zero_grad()
    return cap.capture


def test_a_fused_optimizer_shows_as_a_step_speedup_in_the_diff():
    # One thread: on 2 cores shared with other jobs, the fused CPU Adam's parallel loop stalls
    # whenever another process holds a core (measured 1.5 ms steps one run, 10.6 ms the next);
    # on one thread it measured 1.91x-2.22x faster on 3 runs (foreach=True: 1.29x-1.35x).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        before = _captured_loop(foreach=False)
        after = _captured_loop(fused=True)
    finally:
        torch.set_num_threads(threads)
    real_a, real_b = before.timings.real_steps, after.timings.real_steps
    assert real_a is not None and real_b is not None, before.timings.real_steps_note

    # Before: the optimizer is named in the top 3, with its share, its line and the fix.
    found = compilescope.findings(before)
    (opt,) = [f for f in found[:3] if f.kind == "eager_optimizer"]
    assert (
        "`Adam`" in opt.what and "80 parameter tensors" in opt.what and "foreach=False" in opt.what
    )
    assert opt.cost.share == pytest.approx(real_a.optimizer_s / real_a.compiled.median_s)
    assert opt.cost.share > 0.3  # most of such a step (measured 0.5-0.6)
    assert opt.user is not None and "torch.optim.Adam(" in opt.user.code
    assert opt.fixes[0].title == "a fused optimizer" and "fused=True" in opt.fixes[0].change
    # After: the fused step is a small share, and no finding (nothing measured to help is left).
    assert real_b.optimizer_s < real_a.optimizer_s
    assert "eager_optimizer" not in [f.kind for f in compilescope.findings(after)]

    d = compilescope.diff(before, after)
    s = d.step_speedup
    assert s is not None and s.ratio is not None and s.low is not None and s.high is not None
    assert s.ratio == pytest.approx(real_a.compiled.median_s / real_b.compiled.median_s)
    assert s.low <= s.ratio <= s.high
    assert s.steps == (len(real_a.step_walls), len(real_b.step_walls)) == (10, 10)
    # The verdict is the interval's, whatever this noisy machine measured.
    assert s.verdict == verdict(s.low, s.high)
    assert (s.verdict == "faster") == (s.low > 1 + NOISE)
    # Not asserted: s.ratio > 1. It measured 1.9x or more on 3 quiet runs, but another process
    # on a shared 2-core machine can slow one capture's steps (tutorial 10's same fix read 0.89x
    # once in CI); the fix's own effect, the optimizer's time, is asserted above.
    assert f"real steps: {s.text()}" in str(d)
    assert "different devices" not in s.note
