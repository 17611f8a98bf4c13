"""The HTML summary: every string from a capture is escaped; nothing runs."""

from __future__ import annotations

from dataclasses import replace

from compilescope.model.compile import GraphBreak
from compilescope.model.place import Place
from compilescope.views.offline.summary_html import CaptureView, capture_html

HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(2)>', "javascript:alert(3)"]


def test_hostile_strings_are_escaped(loaded):
    cap = loaded("graph_break")
    first = cap.compiles[0]
    evil = GraphBreak(
        " ".join(HOSTILE), Place(HOSTILE[1], 3, HOSTILE[0], HOSTILE[2]), text=HOSTILE[0]
    )
    frame = replace(first.frame, function=HOSTILE[0], file=HOSTILE[1])
    cap = replace(
        cap, compiles=(replace(first, graph_breaks=(evil,), frame=frame), *cap.compiles[1:])
    )
    html = capture_html(cap)
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;" in html


def test_view_has_html_and_text(loaded):
    view = CaptureView(loaded("module_backward"))
    assert "<table>" in view._repr_html_() and "cpu (C++ kernels)" in view._repr_html_()
    assert "compile ids" in repr(view) and "ran on cpu" in repr(view)


def test_the_script_free_compile_table_folds_each_restart_into_its_compile_id(loaded):
    # Issue 32: "each restarted id appears twice (0/0 and 0/0_1)"; the widget folds them, and
    # so does the HTML without scripts.
    from compilescope.views.offline.summary_html import capture_html, folded_restarts

    capture = loaded("gpt2")
    restarted = [c for c in capture if c.id.attempt]
    assert restarted  # GPT-2's logging break restarts frames
    rows = folded_restarts(capture)
    assert len(rows) == len(capture.compiles) - len(restarted)
    html = capture_html(capture, details=False)
    for c, earlier in rows:
        if earlier:
            assert f"<td>{c.id} \u21bb {', '.join(str(e.id) for e in earlier)}</td>" in html
    for c in restarted:  # an earlier attempt never has a row of its own
        base = str(c.id).rsplit("_", 1)[0]
        assert f"<tr><td>{base}</td>" not in html
