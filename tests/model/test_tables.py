"""The view's tables as rows from Python (and DataFrames where pandas is installed)."""

from __future__ import annotations

import compilescope
import pytest


def test_kernel_rows_match_the_capture(loaded):
    capture = loaded("module_backward")
    rows = compilescope.tables.kernels(capture)
    assert len(rows) == sum(len(c.kernels) for c in capture) > 0
    assert {r["kernel"] for r in rows} == {k.name for c in capture for k in c.kernels}
    assert all(tuple(r) == rows.columns for r in rows)
    assert {r["graph"] for r in rows} == {"forward", "backward"}
    assert "<td>" in rows._repr_html_()


def test_graph_break_and_saved_tensor_rows(loaded):
    breaks = compilescope.tables.graph_breaks(loaded("graph_break"))
    assert breaks and all(r["reason"] and r["line"] for r in breaks)
    capture = loaded("module_backward")
    saved = compilescope.tables.saved_tensors(capture)
    total = sum(c.partition.saved_bytes for c in capture if c.partition)
    assert sum(r["bytes"] or 0 for r in saved) == total > 0
    assert compilescope.tables.timings(capture) == []  # nothing timed: no rows, same columns


def test_tables_as_dataframes(loaded):
    pandas = pytest.importorskip("pandas")
    frame = compilescope.tables.saved_tensors(loaded("module_backward")).to_pandas()
    assert isinstance(frame, pandas.DataFrame) and list(frame.columns)[:2] == ["compile_id", "name"]


def test_a_library_frame_is_named_with_the_users_line_that_led_into_it():
    # transformers wraps a model's forward (utils/deprecation.py's `wrapped_func`): the compile
    # table named only that; now also the user's line, as for a frame inside torch.
    from compilescope.model.compile import Frame
    from compilescope.model.place import Place

    lib = "/venv/lib/python3.11/site-packages/transformers/utils/deprecation.py"
    user = Place(file="/home/me/train.py", line=31, function="<module>")
    stack = (user, Place(file=lib, line=172, function="wrapped_func"))
    frame = Frame(function="wrapped_func", file=lib, line=121, stack=stack)
    assert frame.label() == "wrapped_func (utils/deprecation.py:121) called at me/train.py:31"
    assert frame.label({"/home/me/train.py": 4}).endswith("called at cell [4] line 31")
    # The user's own frame, and a library frame with no user line above it, read as before.
    assert (
        Frame(function="step", file="/home/me/train.py", line=9).label() == "step (me/train.py:9)"
    )
    assert Frame(function="wrapped_func", file=lib, line=121).label() == (
        "wrapped_func (utils/deprecation.py:121)"
    )
