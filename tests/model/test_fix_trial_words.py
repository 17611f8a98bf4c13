"""A tried fix in words (issue 32 item 3): bytes and times in human units with the direction of
change, what "before" was, and the breaks the fix left; on the recorded GPT-2 log, no torch."""

from __future__ import annotations

import dataclasses

import pytest
from compilescope.model.findings.fix_trial import FixTrial, _change
from compilescope.model.findings.ranked import findings
from compilescope.views.findings_view import fix_trial_data, fix_trial_html


def gpt2_trial(loaded, **kw) -> FixTrial:
    capture = loaded("gpt2")
    finding = findings(capture)[0]
    assert "warning_once" in finding.what
    # No restarts after the fix, and the big frame's compile no longer timed (as if it came
    # from the cache): the compile time goes down by that frame's 20.2 s of 23.6 s.
    kept = [c for c in capture if not c.restart_reasons]
    kept = [dataclasses.replace(c, stage_times=()) if str(c.id) == "1/0" else c for c in kept]
    after = dataclasses.replace(capture, compiles=tuple(kept))
    return FixTrial(finding, finding.fix, capture, after, **kw)


def test_figures_read_in_human_units_with_their_change(loaded):
    changes = {name: (a, b, c) for name, a, b, c in gpt2_trial(loaded).changes()}
    assert changes["compile ids"] == ("8", "5", "down 3")
    assert changes["graph breaks"] == ("2", "2", "same")
    before, after, change = changes["activations, predicted"]
    assert before == "638.5 KiB" and after.endswith(" KiB") and change == "down 100%"
    assert changes["compile time"] == ("23.6 s", "3.3 s", "down 86%")
    assert changes["compiled step"] == ("-", "-", "")  # a log times nothing


def test_a_change_says_which_way_and_how_much():
    assert _change(2913812, 3425812) == "up 18%"
    assert _change(0.0123, 0.0061) == "down 50%"
    assert _change(5, 1) == "down 4" and _change(3, 3) == "same"
    assert _change(None, 3) == "" and _change(0, 4096) == "up"


def test_the_trial_says_its_baseline_and_what_is_left(loaded):
    trial = gpt2_trial(loaded)
    assert "captured again without the fix" in trial.baseline_text()
    assert gpt2_trial(loaded, rerun_baseline=False).baseline_text() == (
        "before: the capture the finding came from"
    )
    left = trial.left()
    assert len(left) == 1 and "logger.warning_once" in left[0] and "workloads.py:81" in left[0]
    text = str(trial)
    assert "compile ids" in text and "down 3" in text and "left: The logging call" in text
    data = fix_trial_data(trial, 1)
    assert data["number"] == 1 and data["left"] == left and data["rerun_baseline"] is True
    assert ["compile ids", "8", "5", "down 3"] in data["changes"]


def test_the_script_free_trial_is_escaped(loaded):
    trial = gpt2_trial(loaded)
    hostile = dataclasses.replace(trial.fix, title="<img src=x onerror=alert(1)>")
    html = fix_trial_html(dataclasses.replace(trial, fix=hostile))
    assert "<img" not in html and "&lt;img src=x" in html
    assert "<td>down 3</td>" in html and "left after the fix: The logging call" in html
    assert "captured again without the fix" in html


def test_compile_time_counts_backward_compiles_and_each_frame_once(loaded):
    from compilescope.model.compile import compile_seconds

    capture = loaded("gpt2")
    # Dynamo's `dynamo` and `entire_backward_compile` events (the backward compiles at its
    # first run: 3.6 s of frame 1's 20.2 s), not also the restarts' metrics of the same frames.
    assert compile_seconds(capture) == pytest.approx(23.57, abs=0.01)
    assert compile_seconds([capture["1/0"]]) == pytest.approx(20.22, abs=0.01)
    # Without the events (another torch's log): the frames' metrics; neither: not known.
    bare = [dataclasses.replace(c, stage_times=()) for c in capture]
    assert compile_seconds(bare) == pytest.approx(0.7848 + 16.6514 + 0.0374 + 1.5961 + 0.0687)
    assert compile_seconds([dataclasses.replace(c, metrics={}) for c in bare]) is None
