"""The public API behaves as pandas and anywidget users expect: every name listed, the result
types exported, `cap.to_html` like `DataFrame.to_html`, a Capture drawn once by `show()`."""

from __future__ import annotations

import json
import re

import compilescope
from conftest import FIXTURES

WIDGET = "application/vnd.jupyter.widget-view+json"


def test_dir_lists_every_public_name_lazy_ones_too():
    listed = dir(compilescope)
    missing = [name for name in compilescope.__all__ if name not in listed]
    assert not missing
    # the lazily loaded ones are listed before anything loaded them
    assert {"capture", "capturing", "CaptureHandle", "tables", "figures"} <= set(listed)
    assert not [name for name in compilescope.__all__ if not hasattr(compilescope, name)]


def test_the_types_public_functions_return_are_exported(loaded):
    from compilescope.live.pipeline import CaptureHandle
    from compilescope.model.findings.fix_trial import FixTrial

    before, after = loaded("graph_break"), loaded("plain_function")
    assert isinstance(compilescope.diff(before, after), compilescope.CaptureDiff)
    found = compilescope.findings(before)
    assert found and all(isinstance(f, compilescope.Finding) for f in found)
    fix = next(f.fix for f in found if f.fix is not None)
    assert isinstance(fix, compilescope.Fix)
    assert all(isinstance(s, compilescope.Setting) for s in fix.settings)
    ranks = compilescope.load_trace(FIXTURES / "ranks_gpu" / "diverge")
    assert isinstance(compilescope.compare_ranks(ranks), compilescope.RankReport)
    first = before[0]
    assert isinstance(first, compilescope.Compile)
    assert all(isinstance(g, compilescope.Graph) for g in first.graphs.values())
    assert compilescope.FixTrial is FixTrial  # try_fix's result (needs torch to make one)
    assert compilescope.CaptureHandle is CaptureHandle  # what capturing() yields
    from compilescope.model.measured.speedup import StepSpeedup

    assert compilescope.StepSpeedup is StepSpeedup  # CaptureDiff.step_speedup
    for name in ("CaptureDiff", "Finding", "Fix", "Setting", "FixTrial", "StepSpeedup"):
        assert name in compilescope.__all__


def _payload_ids(html: str) -> list[str]:
    found = re.search(r"<script type='application/json' id='cs-data'>(.*?)</script>", html)
    assert found is not None, "no capture data in the report"
    return [c["id"] for c in json.loads(found.group(1))["compiles"]]


def test_to_html_writes_to_a_path_or_returns_the_html(loaded, tmp_path):
    cap = loaded("graph_break")
    path = tmp_path / "report.html"
    assert cap.to_html(path) == str(path)
    written = path.read_text("utf-8")
    assert written.startswith("<!DOCTYPE html>") and _payload_ids(written) == list(cap.compile_ids)
    html = cap.to_html()  # no path: the report as a string, as DataFrame.to_html()
    assert html.startswith("<!DOCTYPE html>") and _payload_ids(html) == list(cap.compile_ids)
    # the module function stays, and does the same
    assert compilescope.to_html(cap, tmp_path / "b.html") == str(tmp_path / "b.html")
    assert _payload_ids(compilescope.to_html(cap)) == list(cap.compile_ids)


def test_to_html_with_before_holds_the_diff(loaded):
    before, after = loaded("graph_break"), loaded("plain_function")
    found = re.search(r"id='cs-data'>(.*?)</script>", after.to_html(before=before))
    assert found is not None and json.loads(found.group(1)).get("diff")


def test_show_draws_a_rank_report_once(monkeypatch):
    import IPython.display

    shown: list = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **_: shown.extend(objs))
    cap = compilescope.load_trace(FIXTURES / "ranks_gpu" / "diverge")
    compilescope.show(cap)
    (view,) = shown  # one output: the view, the rank report inside it
    bundle, _ = view._repr_mimebundle_()
    assert bundle["text/html"].count("cs-rank-verdict") == 1
    assert "ranks diverge" in json.loads(view.data)["ranks_html"]
