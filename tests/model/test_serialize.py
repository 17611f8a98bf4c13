"""The JSON format: lossless round trip, valid against its schema, clear errors on bad input."""

from __future__ import annotations

import json

import jsonschema
import pytest
from compilescope import Capture, CompileId, FormatError
from compilescope.model.serialize import json_schema
from conftest import PARSER_FIXTURES


@pytest.mark.parametrize("name", PARSER_FIXTURES)
def test_round_trip_is_lossless_and_valid(loaded, name):
    cap = loaded(name)
    text = cap.to_json()
    back = Capture.from_json(text)
    assert back == cap
    assert back.to_json() == text
    jsonschema.validate(json.loads(text), json_schema())


def test_compile_ids_in_tlparse_form():
    for text in ("0/0", "1/0_1", "!0/2/0", "!1/-/-", "rank1:0/0", "-/-"):
        assert str(CompileId.parse(text)) == text
    assert CompileId.parse("[0/0_1]") == CompileId(frame_id=0, frame_compile_id=0, attempt=1)
    with pytest.raises(ValueError, match="not a compile id: 'zero'"):
        CompileId.parse("zero")


def test_bad_documents_say_what_is_wrong(loaded):
    with pytest.raises(FormatError, match="not JSON"):
        Capture.from_json("{oops")
    with pytest.raises(FormatError, match="not a compilescope capture"):
        Capture.from_json('{"compiles": []}')
    newer = loaded("plain_function").to_dict() | {"version": 99}
    with pytest.raises(FormatError, match="version 99 is newer"):
        Capture.from_json(json.dumps(newer))
    broken = loaded("plain_function").to_dict()
    broken["compiles"][0]["frame"]["line"] = "seven"
    with pytest.raises(FormatError, match=r"\$\.compiles\[0\]\.frame\.line: expected int"):
        Capture.from_json(json.dumps(broken))


def test_unknown_fields_of_a_newer_writer_are_ignored(loaded):
    data = loaded("plain_function").to_dict()
    data["compiles"][0]["future_field"] = {"x": 1}
    assert Capture.from_json(json.dumps(data)) == loaded("plain_function")


def test_a_capture_saved_with_cell_numbers_on_frames_and_breaks_still_reads_them(loaded):
    # Before a cell's number was kept once (`cells`, by file), each frame wrote `cell` and
    # `cell_line`, and each graph break `cell`: such a file reads the same as before.
    cap = loaded("graph_break")
    data = cap.to_dict()
    c = next(c for c in data["compiles"] if c.get("graph_breaks"))
    frame_file, break_file = c["frame"]["file"], c["graph_breaks"][0]["location"]["file"]
    c["frame"] |= {"cell": 5, "cell_line": c["frame"]["line"]}
    c["graph_breaks"][0]["cell"] = 6 if break_file != frame_file else 5
    jsonschema.validate(data, json_schema())  # the old shape is still valid
    old = Capture.from_json(json.dumps(data))
    assert old.cells == {frame_file: 5, break_file: c["graph_breaks"][0]["cell"]}
    assert f"cell [{old.cells[break_file]}] line" in old.summary()
    assert "cell [5] line" in old.summary()
    # Written again, the numbers are in `cells` only.
    again = json.loads(old.to_json())
    assert again["cells"] == old.cells and "cell" not in again["compiles"][0]["frame"]
    assert Capture.from_json(old.to_json()) == old
