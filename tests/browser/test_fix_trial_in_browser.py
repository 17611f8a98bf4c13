"""A tried fix's result in the widget, on the 2-layer GPT-2 capture at 1400 x 1000 (issue 32).

The widget's own bundle (static/dist/result.js) runs in real Chromium against a stand-in for
anywidget's model; "try this fix" goes through ResultWidget's message handler, whose answer is
`fix_trial_data` of a FixTrial of the recorded GPT-2 capture. (tests/browser/
test_findings_in_browser.py tries a fix for real in JupyterLab, on a small cell.) The result
sits under the finding it came from, says what its baseline was, names the break left, and
reads in human units with the direction of change. Screenshot: tests/artifacts/laptop/.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from browser.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser]

PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>{css}</style></head>
<body><div id="host"></div></body></html>"""
# anywidget's model, as much as the view uses: get, on("change:x"), send.
MOUNT = """async ([bundle, data, tryable]) => {
  const state = { data, trial: "null", tryable }, handlers = {};
  window.sent = [];
  window.model = {
    get: (k) => state[k],
    on: (event, cb) => { (handlers[event] = handlers[event] || []).push(cb); },
    send: (msg) => window.sent.push(msg),
    set: (k, v) => { state[k] = v; for (const cb of handlers["change:" + k] || []) cb(); },
  };
  const url = URL.createObjectURL(new Blob([bundle], { type: "text/javascript" }));
  const view = (await import(url)).default;
  view.render({ model: window.model, el: document.getElementById("host") });
}"""


@pytest.fixture(scope="module")
def widget(loaded):
    from compilescope.model.findings.fix_trial import FixTrial
    from compilescope.model.findings.ranked import findings
    from compilescope.views.findings_view import fix_trial_data
    from compilescope.views.result_view import result_view

    capture = loaded("gpt2")
    found = findings(capture)
    assert found[0].kind == "graph_break" and found[0].fix.kind == "setting"
    # The capture after the fix, as far as a log can say it: the compile ids torch restarted at
    # the logging call are gone; one break is left; the big frame's compile is not timed again
    # (as if it came from the cache), so that compile time goes down.
    kept = [c for c in capture if not c.restart_reasons]
    kept = [dataclasses.replace(c, stage_times=()) if str(c.id) == "1/0" else c for c in kept]
    after = dataclasses.replace(capture, compiles=tuple(kept))
    trial = FixTrial(found[0], found[0].fix, capture, after)
    view = result_view(capture, found=found, on_try=lambda number: fix_trial_data(trial))
    return view, trial


def test_the_result_of_a_fix_sits_by_its_finding_in_human_units(browser, widget):
    from compilescope.views.widget import static_text

    view, trial = widget
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_content(PAGE.format(css=static_text("compilescope.css")))
    page.evaluate(MOUNT, [static_text("dist/result.js"), view.data, True])
    page.wait_for_selector(".cs-root[data-ready='1']")
    first = page.locator(".cs-finding[data-finding='1']")
    first.locator(".cs-try-fix").click()
    assert page.evaluate("window.sent") == [{"kind": "try_fix", "number": 1}]
    # The kernel's side: the widget's handler answers in its `trial` traitlet.
    view._message(view, {"kind": "try_fix", "number": 1}, [])
    assert json.loads(view.trial)["number"] == 1
    page.evaluate("t => window.model.set('trial', t)", view.trial)
    result = first.locator(".cs-fix-trial[data-trial='done']")
    result.wait_for()
    # Under the finding it came from, right after its button; no other result box is filled.
    assert page.locator(".cs-fix-trial[data-trial]").count() == 1
    assert result.evaluate("r => r.previousElementSibling.classList.contains('cs-try-fix')")
    button = first.locator(".cs-try-fix").bounding_box()
    box = result.bounding_box()
    assert 0 <= box["y"] - (button["y"] + button["height"]) < 20
    # Human units and which way each figure went.
    rows = {
        r.get_attribute("data-figure"): r.locator("td").all_inner_texts()
        for r in result.locator("tr[data-figure]").all()
    }
    assert rows["compile ids"][1:] == ["8", "5", "down 3"]
    assert rows["graph breaks"][3] == "same"
    predicted = rows["activations, predicted"]
    assert predicted[1].endswith("KiB") and predicted[3].startswith("down ")
    assert rows["compile time"][1].endswith(" s") and rows["compile time"][3].startswith("down ")
    # What "before" was (a second capture), beside the first capture's own compile time.
    baseline = result.locator("[data-baseline]").inner_text()
    assert "captured again without the fix" in baseline
    assert "the capture above compiled in" in baseline
    # The break left is named.
    left = result.locator("[data-left]")
    assert left.get_attribute("data-left") == "1" and "logger.warning_once" in left.inner_text()
    # Nothing cut at the right edge: the code tried and the table fit the finding.
    for part in (result.locator("pre"), result.locator("table")):
        assert part.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    assert box["x"] + box["width"] <= 1400
    # The button is back for another try.
    assert first.locator(".cs-try-fix").is_enabled()
    result.scroll_into_view_if_needed()
    (ARTIFACTS / "laptop").mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "laptop" / "try_fix_by_its_finding_1400.png"))
    assert errors == []
    context.close()
