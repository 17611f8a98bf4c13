"""%%compile_fx on a real kernel (nbclient): display, names, errors, state, and an interrupt."""

from __future__ import annotations

import re
import time
import warnings
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from notebooks.kernel import KERNEL_NAME, install_kernelspec

pytestmark = pytest.mark.torch
HERE = Path(__file__).resolve().parent


def text_of(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("display_data", "execute_result"):
            parts.append(out.data.get("text/plain", ""))
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
    return "\n".join(parts)


def html_of(cell) -> str:
    return "\n".join(
        out.data.get("text/html", "")
        for out in cell.get("outputs", [])
        if out.output_type in ("display_data", "execute_result", "update_display_data")
    )


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    install_kernelspec(tmp_path_factory.mktemp("jupyter"))
    nb = nbformat.read(HERE / "compile_fx_options.ipynb", as_version=4)
    NotebookClient(nb, kernel_name=KERNEL_NAME, timeout=600, record_timing=False).execute()
    return {cell.metadata["tags"][0]: cell for cell in nb.cells}


def test_view_is_shown_under_the_cell(executed):
    html = html_of(executed["inductor"])
    assert "compilescope" in html and "cpu (C++ kernels)" in html and "<table>" in html
    assert "compile_fx: starting" not in text_of(executed["inductor"])  # progress replaced
    assert "tensor(" in text_of(executed["inductor"])  # the last expression is the cell's Out


def test_names_are_written_back(executed):
    assert "y is" in text_of(executed["written-back"])


def test_graph_break_is_shown_with_its_cell_and_line(executed):
    cell = executed["graph-break"]
    assert "graph break at cell [" in html_of(cell) + text_of(cell)
    number, line = text_of(executed["break-line"]).split()
    assert int(number) == cell.execution_count and int(line) == 3  # line 1: %%compile_fx


def test_backward_and_compiled_autograd(executed):
    assert "bwd True True" in text_of(executed["backward-check"])
    assert "ca True" in text_of(executed["ca-check"])


@pytest.mark.parametrize("tag", ["dynamic", "no-dynamic", "fullgraph", "diff"])
def test_each_option_shows_a_view(executed, tag):
    cell = executed[tag]
    assert "compilescope" in html_of(cell), text_of(cell)
    assert not any(o.output_type == "error" for o in cell.outputs)


@pytest.mark.parametrize("tag", ["mode", "options", "partitioner", "fresh", "quiet"])
def test_quiet_options_run_cleanly(executed, tag):
    cell = executed[tag]
    assert not any(o.output_type == "error" for o in cell.outputs), text_of(cell)
    assert html_of(cell) == ""


def test_diff_says_what_changed(executed):
    assert "aot_inference_graph" in text_of(executed["diff"]) or "differences" in text_of(
        executed["diff"]
    )


def test_user_error_shows_traceback_and_partial_capture(executed):
    cell = executed["user-error"]
    (error,) = [o for o in cell.outputs if o.output_type == "error"]
    assert error.ename == "ValueError" and "boom from the cell" in error.evalue
    trace = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error.traceback))  # without colours
    # Cell In[N], line 4: the raise, numbered as the user sees the cell (line 1: the magic).
    assert f"In[{cell.execution_count}], line 4" in trace
    assert "raise ValueError('boom from the cell')" in trace
    assert "PARTIAL" in html_of(cell)


def test_syntax_error_and_bad_option(executed):
    errors = [o for o in executed["syntax-error"].outputs if o.output_type == "error"]
    assert len(errors) == 1, executed["syntax-error"].outputs
    (syntax,) = errors
    assert syntax.ename == "SyntaxError"
    # IPython reports a UsageError as one line on stderr, without a traceback.
    usage = text_of(executed["bad-option"])
    assert "UsageError" in usage and "invalid choice" in usage


def test_state_is_restored_and_bad_cells_ran_nothing(executed):
    assert "state [] False 0 False" in text_of(executed["state"])


def test_interrupt_stops_cleanly_and_restores_state(tmp_path):
    from jupyter_client.manager import start_new_kernel

    install_kernelspec(tmp_path)
    km, kc = start_new_kernel(kernel_name=KERNEL_NAME)
    try:
        kc.execute_interactive(
            "%load_ext compilescope\nimport torch, logging\nx = torch.randn(16)", timeout=120
        )
        # A first capture, as a user's earlier cell would make: in a new kernel the first one
        # also checks the C++ compiler's vector instructions (6 g++ runs where the cache folder
        # is new) before compiling, and an interrupt there finds nothing captured yet.
        kc.execute_interactive("%%compile_fx --quiet\nz = x + 1", timeout=120)
        # A long compile: thousands of ops for Inductor to lower and generate code for.
        long_cell = "%%compile_fx\ny = x\nfor i in range(3000):\n    y = (y * 1.0001).sin()\n"
        msg_id = kc.execute(long_cell)
        deadline = time.time() + 120
        while time.time() < deadline:  # wait until compiling has visibly started
            msg = kc.get_iopub_msg(timeout=120)
            content = msg["content"]
            if "compile_fx:" in str(content.get("data", {}).get("text/plain", "")):
                break
        time.sleep(2)
        km.interrupt_kernel()
        interrupted_at = time.time()
        reply = kc.get_shell_msg(timeout=120)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = kc.get_shell_msg(timeout=120)
        # Twice in about twelve clean-clone runs the cell ended "ok": Python took the interrupt
        # in a weakref callback of Dynamo's fake tensors and dropped it (live/interrupts.py
        # raises it again). Should it recur: how long after the interrupt, and at what stage.
        took = f"{time.time() - interrupted_at:.1f} s after the interrupt"
        assert reply["content"]["status"] == "error", (took, _stage_at(kc, msg_id, interrupted_at))
        assert reply["content"]["ename"] == "KeyboardInterrupt"
        # The cell's value (its execute_result), read below with any error's name and value.
        check = (
            "import torch._inductor.config as cfg, compilescope\n"
            "' '.join(map(str, ('after', logging.getLogger('torch.__trace').handlers, "
            "cfg.force_disable_caches, compilescope.last().partial.split()[0], 'y' in dir())))"
        )

        def checked() -> tuple[str, list[str]]:
            outputs: list[str] = []
            # The cell's value, or an error's name and value (a failure says what it met).
            reply = kc.execute_interactive(
                check,
                timeout=60,
                output_hook=lambda m: outputs.append(
                    m["content"].get("data", {}).get("text/plain")
                    or f"{m['content'].get('ename', '')} {m['content'].get('evalue', '')}".strip()
                ),
            )
            return reply["content"].get("ename", ""), outputs

        interrupted, outputs = checked()
        if interrupted == "KeyboardInterrupt" or not "".join(outputs):
            # On a loaded machine (CI's 2 cores) the check itself once met a KeyboardInterrupt
            # (the signal reached the kernel's process group late), and a few times it ran
            # with no output at all (['', '']: one message, then idle, with no value; with a
            # print and with the cell's value alike; not a backlog: 7 messages were pending
            # after the interrupt). Said, and the state checked again: what this test
            # is about is the kernel's state, and a second empty check still fails.
            warnings.warn(
                f"the check after the interrupt gave {interrupted or 'no output'}: {outputs}",
                stacklevel=1,
            )
            interrupted, outputs = checked()
        assert interrupted == "", outputs
        assert "after [] False KeyboardInterrupt False" in "".join(outputs), outputs
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _stage_at(kc, msg_id: str, when: float) -> str:
    """The cell's progress line as it read at `when` (its updates, up to the cell's end)."""
    stage = "no progress line before then"
    while True:
        msg = kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return stage
        text = str(msg["content"].get("data", {}).get("text/plain", ""))
        if text.startswith("compile_fx:") and msg["header"]["date"].timestamp() <= when:
            stage = text


def test_nbconvert_export_shows_the_script_free_fallback(executed):
    from nbconvert import HTMLExporter

    nb = nbformat.v4.new_notebook(cells=[executed["inductor"]])
    body, _ = HTMLExporter().from_notebook_node(nb)
    # No widget state was saved, so nbconvert falls back to the output's text/html.
    assert "cpu (C++ kernels)" in body and "<svg" in body
