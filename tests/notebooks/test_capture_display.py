"""A Capture as a cell's last expression shows the widget in a real kernel (nbclient), and
`cap.to_html(path)` writes the report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from notebooks.kernel import KERNEL_NAME, install_kernelspec

pytestmark = pytest.mark.torch
WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    install_kernelspec(tmp_path_factory.mktemp("jupyter"))
    report = tmp_path_factory.mktemp("report") / "cap.html"
    cells = {
        "setup": "import torch, compilescope\n"
        "def f(x):\n    y = x.sin()\n    print('break')\n    return y.cos() + 1\n"
        "cap = compilescope.capture(f, torch.randn(8), backend='aot_eager', timings=False)",
        "capture": "cap",
        "handle": "with compilescope.capturing(real_steps=0) as handle:\n"
        "    torch.compile(lambda x: x * 2, backend='eager')(torch.randn(4))\nhandle",
        "report": f"print(cap.to_html({str(report)!r}))\nprint(*cap.compile_ids)",
        "text": "print(repr(cap) == cap.summary() == str(cap), 'graph break' in repr(cap))",
    }
    nb = nbformat.v4.new_notebook()
    for tag, source in cells.items():
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata={"tags": [tag]}))
    NotebookClient(nb, kernel_name=KERNEL_NAME, timeout=600, record_timing=False).execute()
    outputs = {cell.metadata["tags"][0]: cell.outputs for cell in nb.cells}
    for tag, outs in outputs.items():
        assert not any(o.output_type == "error" for o in outs), (tag, outs)
    return outputs, report


def _result(outputs) -> dict:
    (result,) = [o for o in outputs if o.output_type == "execute_result"]
    return result.data


def test_a_capture_shows_as_the_widget_with_its_html(executed):
    outputs, _ = executed
    data = _result(outputs["capture"])
    assert "model_id" in data[WIDGET]  # the anywidget's view, as %%compile_fx shows it
    # the script-free fallback (nbconvert, GitHub): the summary table and the graph break
    assert "<table>" in data["text/html"] and "cs-fallback" in data["text/html"]
    assert "print" in data["text/html"]  # the break's cause
    assert "compile ids" in data["text/plain"] or "0/0" in data["text/plain"]


def test_what_capturing_yields_shows_as_the_widget(executed):
    outputs, _ = executed
    data = _result(outputs["handle"])
    assert "model_id" in data[WIDGET] and "cs-fallback" in data["text/html"]


def test_to_html_writes_a_report_with_the_capture_s_compile_ids(executed):
    outputs, report = executed
    printed = "".join(o.text for o in outputs["report"] if o.output_type == "stream")
    path, ids = printed.splitlines()
    assert Path(path) == report and report.exists()
    html = report.read_text("utf-8")
    assert html.startswith("<!DOCTYPE html>")
    payload = re.search(r"<script type='application/json' id='cs-data'>(.*?)</script>", html)
    assert payload is not None
    shown = [c["id"] for c in json.loads(payload.group(1))["compiles"]]
    assert shown == ids.split() and len(shown) >= 2  # the graph break splits f in two


def test_repr_and_str_stay_the_text_summary(executed):
    outputs, _ = executed
    assert "True True" in "".join(o.text for o in outputs["text"] if o.output_type == "stream")
