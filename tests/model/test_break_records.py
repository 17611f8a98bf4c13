"""Graph-break messages read from logs and JSON: breaks Dynamo counts apart from its fallbacks."""

from __future__ import annotations

import json

import jsonschema
from compilescope import Capture
from compilescope.model.breaks import Fallback, GraphBreak, fallback_scope
from compilescope.model.serialize import json_schema
from compilescope.trace.builder import CaptureBuilder
from compilescope.trace.events import Event


def test_gpt2_cannot_resume_is_a_fallback_not_a_third_break(loaded):
    cap = loaded("gpt2")
    # Dynamo counted 2 on this run: the logging call in `wrapper` and in `loss_function`.
    assert [str(c.id) for c in cap if c.graph_breaks] == ["0/0", "2/0"]
    (rest,) = [c for c in cap if c.fallbacks]
    assert (str(rest.id), rest.frame.function, rest.status) == ("1/0", "forward", "restarted")
    (fallback,) = rest.fallbacks
    assert fallback.scope == "rest" and fallback.location.line == 4769
    assert fallback.cause.startswith("logging.Logger method not supported")
    head, *lines = str(cap).splitlines()
    assert "8 compile ids, 2 graph breaks, 1 fallback to eager" in head
    assert sum("graph break at" in line for line in lines) == 2
    assert sum("rest of the frame runs eagerly (cannot resume)" in line for line in lines) == 1


def test_fallbacks_round_trip_and_old_captures_read_them_apart(loaded):
    cap = loaded("gpt2")
    text = cap.to_json()
    assert Capture.from_json(text) == cap
    jsonschema.validate(json.loads(text), json_schema())
    # A capture saved before fallbacks had their own field kept them among the breaks.
    old = json.loads(text)
    for c in old["compiles"]:
        c["graph_breaks"] = c.get("graph_breaks", []) + c.pop("fallbacks", [])
        for b in c["graph_breaks"]:
            b.pop("scope", None)
    assert Capture.from_json(json.dumps(old)) == cap


def test_only_the_head_of_a_message_makes_a_fallback():
    loop = "graph break in loop\n  Explanation: ... Skipping the frame and falling back to eager"
    assert (
        fallback_scope(f"Encountered graph break when attempting to trace CALL:\n\n{loop}") is None
    )
    assert (
        fallback_scope(
            "Failed to handle graph break gracefully. Skipping the function and falling back to "
            f"eager. Graph break encountered:\n\n{loop}"
        )
        == "frame"
    )
    assert fallback_scope("Encountered graph break that we cannot resume from. Compiling") == "rest"


def _read(payload: str) -> Capture:
    builder = CaptureBuilder(cell_resolver=lambda _: None)
    meta = {"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"}}
    ids = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    builder.add(Event("dynamo_graph_break_reason", meta | ids, payload, 1))
    return builder.build()


def test_convert_frames_skip_message_is_a_frame_fallback_at_its_user_line():
    # torch/_dynamo/convert_frame.py, with graph_breaks logging on: its own words and stack.
    (c,) = _read(
        "Graph break: torch.compile cannot properly resume from this graph break, which results "
        "in a skip.\ntorch.compile will skip tracing the frame f (/u/a.py line 3) and fall back "
        "to eager.\nThe graph break occurred in the following user code:\n"
        '  File "/u/a.py", line 5, in f\n    print(x)\n\nTraceback (most recent call last):\n'
    )
    assert c.graph_breaks == ()
    (f,) = c.fallbacks
    assert isinstance(f, Fallback) and f.scope == "frame"
    assert (f.location.file, f.location.line) == ("/u/a.py", 5)
    assert f.user_stack[0].code == "print(x)"


def test_a_counted_break_stays_a_break():
    (c,) = _read(
        "Graph break in user code at /u/a.py:5\nGraph Break Reason: Encountered graph break when "
        "attempting to trace CALL: a function call\n\nCall to `torch._dynamo.graph_break()`\n"
        'User code traceback:\n  File "/u/a.py", line 5, in f\n    torch._dynamo.graph_break()\n'
    )
    (b,) = c.graph_breaks
    assert isinstance(b, GraphBreak) and c.fallbacks == ()
    assert (b.location.line, b.user_stack[0].function) == (5, "f")


def test_a_log_keeps_the_number_of_the_cell_a_break_is_in_once():
    # A log read from disk: IPython's file name says the cell; the capture keeps it by file.
    cell = "<ipython-input-4-0a1b2c3d>"
    builder = CaptureBuilder()  # the default resolver reads IPython's file names
    meta = {"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"}}
    ids = {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}
    builder.add(
        Event(
            "dynamo_graph_break_reason",
            meta | ids,
            f"Graph break in user code at {cell}:5\nGraph Break Reason: a function call\n",
            1,
        )
    )
    cap = builder.build()
    assert cap.cells == {cell: 4}
    ((_, brk),) = cap.graph_breaks
    assert brk.location.label(cap.cells) == "cell [4] line 5"
    assert "graph break at cell [4] line 5" in str(cap)
