"""Broken, foreign and missing logs: everything readable loads, the rest is counted, nothing raises."""

from __future__ import annotations

import gzip

import pytest
from compilescope import TraceError, load_trace
from conftest import FIXTURES


def plain_lines(name: str) -> list[str]:
    with gzip.open(FIXTURES / f"{name}.log.gz", "rt", encoding="utf-8") as handle:
        return handle.read().splitlines(keepends=True)


def test_truncated_log_keeps_whole_events(tmp_path):
    lines = plain_lines("module_backward")
    full = load_trace(FIXTURES / "module_backward.log.gz")
    # Cut inside the payload of the backward graph: the events before it survive.
    cut = next(i for i, line in enumerate(lines) if '"aot_backward_graph"' in line) + 3
    (tmp_path / "cut.log").write_text("".join(lines[:cut]))
    cap = load_trace(tmp_path / "cut.log")
    c = cap["0/0"]
    assert c.graph("aot_forward_graph") is not None
    assert c.graph("aot_backward_graph") is None
    assert full["0/0"].graph("aot_backward_graph") is not None
    (skip,) = cap.skipped
    assert "checksum" in skip.reason and skip.count == 1 and skip.first_line == cut - 3 + 1


def test_garbage_lines_are_counted(tmp_path):
    lines = plain_lines("plain_function")
    at = next(i for i in range(20, len(lines)) if lines[i].startswith("V"))  # between records
    noisy = ["garbage at the top\n"] + lines[:at] + ["\x00\x01 binary noise\n"] + lines[at:]
    noisy.append('V1122 05:35:21.786000 1 x.py:1] {"dynamo_start": {"stack": [}\n')
    (tmp_path / "noisy.log").write_text("".join(noisy))
    cap = load_trace(tmp_path / "noisy.log")
    assert cap.compile_ids == load_trace(FIXTURES / "plain_function.log.gz").compile_ids
    reasons = {s.reason: s.count for s in cap.skipped}
    assert reasons["not a structured-trace line"] == 2
    assert reasons["record is not valid JSON"] == 1
    assert "skipped 3 unreadable log entries" in cap.summary()


def test_deeply_nested_record_is_skipped_with_a_reason(tmp_path):
    # json's decoder recurses once per level: 100,000 levels used to raise RecursionError.
    deep = "V1122 05:35:21.786000 1 x.py:1] " + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "\n"
    deep_payload = (
        'V1122 05:35:21.786000 1 x.py:1] {"artifact": {"name": "x", "encoding": "json"}, '
        '"frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n\t' + "[" * 100_000 + "\n"
    )
    lines = plain_lines("plain_function")
    (tmp_path / "deep.log").write_text(deep + "".join(lines) + deep_payload)
    cap = load_trace(tmp_path / "deep.log")
    assert cap.compile_ids == load_trace(FIXTURES / "plain_function.log.gz").compile_ids
    assert {s.reason: (s.count, s.first_line) for s in cap.skipped} == {
        "record nested too deep to read": (1, 1)
    }


def test_events_of_a_newer_torch_load(tmp_path):
    lines = plain_lines("plain_function")
    future = (
        'V1122 05:35:21.786000 1 x.py:1] {"quantum_graph": {"qubits": 3}, "frame_id": 0, '
        '"frame_compile_id": 0, "attempt": 0}\n'
    )
    (tmp_path / "future.log").write_text("".join(lines) + future)
    cap = load_trace(tmp_path / "future.log")
    assert "quantum_graph" in cap["0/0"].artifacts
    assert not cap.skipped


def test_malformed_known_event_is_skipped_not_raised(tmp_path):
    bad = (
        'V1122 05:35:21.786000 1 x.py:1] {"dynamo_start": {"stack": "not a list of frames"}, '
        '"frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n'
        'V1122 05:35:21.786000 1 x.py:1] {"str": "should be a pair"}\n'
    )
    lines = plain_lines("plain_function")
    (tmp_path / "bad.log").write_text(bad + "".join(lines))
    cap = load_trace(tmp_path / "bad.log")
    assert cap["0/0"].graph("dynamo_output_graph") is not None
    assert any("unreadable str event" in s.reason for s in cap.skipped)


def test_cut_gzip_loads_what_came_before(tmp_path):
    data = (FIXTURES / "module_backward.log.gz").read_bytes()
    (tmp_path / "cut.log.gz").write_bytes(data[: len(data) // 2])
    cap = load_trace(tmp_path / "cut.log.gz")
    assert cap.compile_ids == ("0/0",)
    assert any("file ends early" in s.reason for s in cap.skipped)


def test_missing_path_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.log"):
        load_trace(tmp_path / "nope.log")


def test_folder_without_logs(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(TraceError, match="no TORCH_TRACE logs"):
        load_trace(tmp_path)


def test_file_that_is_not_a_trace(tmp_path):
    (tmp_path / "x.log").write_text("just\nsome\ntext\n")
    with pytest.raises(TraceError, match="holds no structured-trace events"):
        load_trace(tmp_path / "x.log")
