"""The real-step speedup between two captures: ratio, interval and a verdict that never calls a
slower or noisy result a win (issue 31 item 2); built from hand-made RealSteps, no torch."""

from __future__ import annotations

import statistics

import compilescope
import pytest
from compilescope.model.capture import Capture
from compilescope.model.findings.fix_trial import FixTrial
from compilescope.model.findings.parts import Finding, Fix, Setting
from compilescope.model.measured.speedup import StepSpeedup, ratio_interval, verdict
from compilescope.model.measured.timing import RealSteps, Sample, Timings
from compilescope.views.diff_view import diff_data, diff_html
from compilescope.views.findings_view import fix_trial_data, fix_trial_html

# Ten steps of a CPU loop as measured (ms): a few percent of jitter and one step the OS took.
JITTER = (1.00, 1.02, 0.98, 1.00, 0.99, 1.03, 0.97, 1.00, 1.04, 1.31)


def steps(scale_ms: float, jitter=JITTER, device: str = "cpu", note: str = "") -> RealSteps:
    walls = tuple(scale_ms * j / 1e3 for j in jitter)
    sample = Sample(statistics.median(walls), min(walls), max(walls), len(walls))
    return RealSteps(device=device, compiled=sample, step_walls=walls, note=note)


def capture_with(real: RealSteps | None, note: str = "") -> Capture:
    return Capture(timings=Timings(device="cpu", real_steps=real, real_steps_note=note))


def test_twice_as_fast_after_is_faster_with_an_interval_around_two():
    s = StepSpeedup.from_real_steps(steps(3.0), steps(1.5, JITTER[::-1]))
    assert s.ratio == pytest.approx(2.0)
    assert s.before_s == pytest.approx(3.0e-3) and s.after_s == pytest.approx(1.5e-3)
    assert s.low is not None and s.high is not None
    assert 1.8 < s.low <= s.ratio <= s.high < 2.2
    assert s.verdict == "faster" and s.faster
    assert s.steps == (10, 10)
    assert s.text().startswith("step speedup 2.00x [") and "]: faster (" in s.text()


def test_the_same_speed_with_noise_is_within_noise():
    # The same code again: another draw of the same jitter, 1% slower overall.
    other = (1.01, 0.99, 1.03, 0.98, 1.02, 1.00, 1.04, 0.97, 1.00, 0.99)
    s = StepSpeedup.from_real_steps(steps(3.0), steps(3.03, other))
    assert s.ratio == pytest.approx(1.0, abs=0.03)
    assert s.low is not None and s.high is not None and s.low < 1 < s.high
    assert s.verdict == "within noise" and not s.faster
    assert "within noise: no measured change" in s.text()
    # Nor does a small but real-looking gain inside the noise margin count as a win.
    tight = StepSpeedup.from_real_steps(steps(3.0, (1.0,) * 10), steps(2.95, (1.0,) * 10))
    assert tight.low == pytest.approx(3.0 / 2.95) and tight.verdict == "within noise"


def test_a_slower_after_is_slower_and_never_a_win():
    s = StepSpeedup.from_real_steps(steps(2.0), steps(2.6))
    assert s.ratio == pytest.approx(2.0 / 2.6)
    assert s.high is not None and s.high < 1
    assert s.verdict == "slower" and not s.faster
    assert "slower: the steps after take longer" in s.text()


def test_the_interval_is_the_rank_interval_of_pairwise_ratios_and_deterministic():
    before = [float(x) for x in range(10, 20)]
    after = [float(x) for x in range(10, 20)]
    low, high = ratio_interval(before, after)
    ratios = sorted(a / b for a in before for b in after)
    # n = m = 10 at 95%: the 24th smallest and 24th largest of the 100 ratios (Mann-Whitney's
    # critical value 23, as the exact tables give it).
    assert (low, high) == (ratios[23], ratios[76])
    assert ratio_interval(before, after) == (low, high)
    # Two steps a side: too few to leave any out, the widest pair.
    assert ratio_interval([1.0, 2.0], [1.0, 4.0]) == (0.25, 2.0)
    # One outlier step moves the interval little (ranks, not values).
    wild = ratio_interval([*before[:-1], 1000.0], after)
    assert wild[1] < 2 * high


def test_verdict_needs_the_whole_interval_past_the_noise_margin():
    assert verdict(1.05, 1.2) == "faster"
    assert verdict(1.01, 1.2) == "within noise"
    assert verdict(0.9, 1.1) == "within noise"
    assert verdict(0.8, 0.95) == "slower"
    assert verdict(0.8, 0.99) == "within noise"


def test_without_each_step_the_interval_is_the_extremes_of_the_samples():
    a = RealSteps(device="cpu", compiled=Sample(3e-3, 2.9e-3, 3.2e-3, 10))
    b = RealSteps(device="cpu", compiled=Sample(1e-3, 0.95e-3, 1.1e-3, 10))
    s = StepSpeedup.from_real_steps(a, b)
    assert s.ratio == pytest.approx(3.0)
    assert s.low == pytest.approx(2.9 / 1.1) and s.high == pytest.approx(3.2 / 0.95)
    assert s.verdict == "faster"


def test_different_devices_and_disturbed_windows_are_said():
    s = StepSpeedup.from_real_steps(steps(30.0), steps(3.0, device="cuda", note="a noisy machine"))
    assert s.verdict == "faster"
    assert "different devices (before cpu, after cuda)" in s.note
    assert "after steps: a noisy machine" in s.note
    assert s.note in s.text()


def test_one_capture_without_real_steps_says_why():
    why = "no optimizer.step() ran inside the capture"
    s = StepSpeedup.from_timings(capture_with(steps(3.0)).timings, capture_with(None, why).timings)
    assert s is not None and s.verdict == "not measured" and s.ratio is None
    assert s.before_s == pytest.approx(3e-3) and s.after_s is None
    assert s.text() == f"step speedup: not measured (after: no real steps timed ({why}))"
    # Neither followed any step: nothing to say about steps.
    assert StepSpeedup.from_timings(Timings(), None) is None


def test_diff_names_the_speedup_in_text_view_and_json():
    d = compilescope.diff(capture_with(steps(3.0)), capture_with(steps(1.5, JITTER[::-1])))
    assert d.step_speedup is not None and d.step_speedup.verdict == "faster"
    # Nothing compiled differently (a code change such as a fused optimizer): the steps say it.
    assert "no differences in compile ids" in str(d)
    assert "  real steps: step speedup 2.00x [" in str(d) and "]: faster (3.000 -> 1.500 ms" in str(
        d
    )
    data = diff_data(d)
    assert data["step_speedup"]["verdict"] == "faster"
    assert data["step_speedup"]["ratio"] == pytest.approx(2.0)
    assert data["step_speedup"]["text"] == d.step_speedup.text()
    assert "class='cs-step-speedup' data-verdict='faster'>real steps: step speedup 2.00x" in (
        diff_html(data)
    )
    # A slower one reads slower in the view too, and a note is escaped.
    slow = compilescope.diff(
        capture_with(steps(2.0)), capture_with(steps(2.6, note="<b>recompiled</b>"))
    )
    html = diff_html(diff_data(slow))
    assert "data-verdict='slower'" in html and "&lt;b&gt;recompiled&lt;/b&gt;" in html
    assert "<b>recompiled" not in html
    # Captures that followed no steps: no speedup line.
    assert compilescope.diff(Capture(), Capture()).step_speedup is None
    assert "real steps" not in str(compilescope.diff(Capture(), Capture()))


def test_a_fix_trial_reports_the_real_step_verdict_not_a_win_when_noisy():
    fix = Fix("setting", "max-autotune", (Setting("mode", "compile_kwarg", "max-autotune"),))
    finding = Finding(kind="speed", what="fp32 matmuls", key="tf32", fixes=(fix,))
    other = (1.01, 0.99, 1.03, 0.98, 1.02, 1.00, 1.04, 0.97, 1.00, 0.99)
    trial = FixTrial(finding, fix, capture_with(steps(3.0)), capture_with(steps(3.0, other)))
    assert trial.step_speedup is not None and trial.step_speedup.verdict == "within noise"
    assert "real steps: step speedup 1.00x [" in str(trial) and "within noise" in str(trial)
    assert fix_trial_data(trial)["step_speedup"]["verdict"] == "within noise"
    assert "data-verdict='within noise'" in fix_trial_html(trial)
    failed = FixTrial(finding, fix, capture_with(steps(3.0)), None, "RuntimeError: boom")
    assert failed.step_speedup is None and fix_trial_data(failed)["step_speedup"] is None


def test_a_longer_compile_says_after_how_many_steps_it_pays_back():
    # max-autotune: 30 s more compiling for 1 ms less per step pays back after 30,000 steps.
    s = StepSpeedup.from_real_steps(steps(3.0), steps(2.0)).with_compile_times(10.0, 40.0)
    assert s.payback() == (
        "compiling took 30.0 s longer; 1.000 ms saved per step pays it back after 30,000 steps"
    )
    assert s.payback() in s.text()
    # A longer compile with no measured gain says so, never a number of steps.
    same = StepSpeedup.from_real_steps(steps(3.0), steps(3.0, JITTER[::-1]))
    assert same.with_compile_times(10.0, 40.0).payback() == (
        "compiling took 30.0 s longer, for no measured gain per step"
    )
    # Nothing to pay back: a compile as long or shorter, or not measured.
    assert s.with_compile_times(40.0, 10.0).payback() == ""
    assert s.with_compile_times(None, 40.0).payback() == ""


def test_a_fix_trial_and_a_diff_carry_the_compile_times_into_the_payback():
    from compilescope.model.compile import Compile, CompileId, Frame

    def timed(real: RealSteps, compile_s: float) -> Capture:
        c = Compile(CompileId(0, 0), frame=Frame("f", "x.py", 1),
                    metrics={"entire_frame_compile_time_s": compile_s})  # fmt: skip
        return Capture((c,), timings=Timings(device="cpu", real_steps=real))

    before, after = timed(steps(3.0), 10.0), timed(steps(2.0), 40.0)
    setting = Setting("torch._inductor.config.max_autotune_gemm", "set", True)
    fix = Fix("setting", "max-autotune for matmuls", (setting,))
    finding = Finding("library_matmul", "", "library_matmul", fixes=(fix,))
    trial = FixTrial(finding, fix, before, after)
    assert "pays it back after 30,000 steps" in trial.summary()
    assert fix_trial_data(trial)["step_speedup"]["payback"].endswith("after 30,000 steps")
    d = compilescope.diff(before, after)
    assert d.step_speedup is not None and d.step_speedup.compile_s == (10.0, 40.0)
    assert "pays it back after 30,000 steps" in diff_data(d)["step_speedup"]["text"]
