"""A Capture in a real IPython: text in a terminal, the widget where the front end shows HTML."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.torch
WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def shell(ip):
    types = list(ip.display_formatter.active_types)
    yield ip
    ip.display_formatter.active_types = types


def test_a_terminal_shows_the_text_summary_a_notebook_the_widget(shell, loaded):
    cap = loaded("graph_break")
    # A terminal IPython shows text/plain only: the summary, and no widget is built.
    assert shell.display_formatter.active_types == ["text/plain"]
    data, _ = shell.display_formatter.format(cap)
    assert set(data) == {"text/plain"} and data["text/plain"] == cap.summary() == str(cap)
    assert cap._repr_mimebundle_() is None
    # A front end that shows HTML (a kernel's) gets the widget and its script-free HTML.
    shell.display_formatter.active_types = [*shell.display_formatter.active_types, "text/html"]
    data, _ = shell.display_formatter.format(cap)
    assert "model_id" in data[WIDGET] and "cs-fallback" in data["text/html"]


def test_without_anywidget_a_capture_shows_its_script_free_html(shell, loaded, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "compilescope.views.widget", None)  # as if not installed
    shell.display_formatter.active_types = [*shell.display_formatter.active_types, "text/html"]
    cap = loaded("graph_break")
    data, _ = shell.display_formatter.format(cap)
    assert WIDGET not in data and "cs-fallback" in data["text/html"]
    assert data["text/plain"].startswith(cap.summary())


def test_findings_show_as_html_in_a_notebook_and_text_in_a_terminal(shell, loaded):
    import compilescope

    found = compilescope.findings(loaded("graph_break"))
    data, _ = shell.display_formatter.format(found)  # a terminal: text
    assert set(data) == {"text/plain"} and data["text/plain"] == str(found)
    assert data["text/plain"].startswith("1. [")
    shell.display_formatter.active_types = [*shell.display_formatter.active_types, "text/html"]
    data, _ = shell.display_formatter.format(found)  # a notebook: the findings' HTML
    html = data["text/html"]
    assert "data-kind=" in html and "Finding(kind=" not in html
    data, _ = shell.display_formatter.format(found[0])
    assert "data-kind=" in data["text/html"]
