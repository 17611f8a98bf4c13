"""Structured-trace events: one record of torch's `torch.__trace` log, from a file or live."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from hashlib import md5
from typing import Any, Literal

# glog prefix TorchLogsFormatter(trace=True) writes: `V1122 05:35:21.786000 1952 path.py:28] `
_PREFIX = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]*\] ")
# Keys of a record that are context, not the event's name (torch/_logging/_internal.py).
CONTEXT_KEYS = frozenset(
    {"frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "rank", "has_payload",
     "stack", "subgraph_name"}
)  # fmt: skip
# Events whose metadata names the artifact: {"artifact": {"name": "recompile_reasons"}}.
_NAMED = ("artifact", "graph_dump")


@dataclass
class Event:
    """One structured-trace record: `name` is torch's event name (or the artifact's name)."""

    name: str
    metadata: dict[str, Any]  # the record's JSON object
    payload: str | None = None
    line: int | None = None  # 1-based line in the log file
    rank: int | None = None

    @property
    def body(self) -> dict[str, Any]:
        """The event's own metadata dict, e.g. record["dynamo_start"]."""
        for key, value in self.metadata.items():
            if key not in CONTEXT_KEYS:
                return value if isinstance(value, dict) else {"value": value}
        return {}

    def json_payload(self) -> object:
        """The payload decoded as JSON; None when absent or not JSON."""
        if not self.payload:
            return None
        try:
            return json.loads(self.payload)
        except (ValueError, RecursionError):
            return None


def event_name(metadata: dict[str, Any]) -> str | None:
    """torch's name for a record: its first non-context key, or the artifact's name."""
    for key, value in metadata.items():
        if key in CONTEXT_KEYS:
            continue
        if key in _NAMED and isinstance(value, dict):
            named = value.get("name")
            if isinstance(named, str):
                return named
        return key
    return None


@dataclass
class SkipCounter:
    """Counts what a reader could not use, by reason, with the first line of each."""

    counts: Counter[str] = field(default_factory=Counter)
    first_line: dict[str, int | None] = field(default_factory=dict)
    total: int = 0
    # Headers of records dropped for their payload (they still name their compile id), so a
    # rank report knows which compiles lost entries; a few hundred are enough to say which.
    dropped: list[dict[str, Any]] = field(default_factory=list)

    def add(self, reason: str, line: int | None) -> None:
        self.counts[reason] += 1
        self.total += 1
        self.first_line.setdefault(reason, line)


_DECODE = json.JSONDecoder().decode  # json.loads without its per-call checks

# The end of a payload block: a newline whose next line is not a payload line (`\t...`).
_BLOCK_END = re.compile(r"\n(?![\t])")


def parse_text(text: str, skips: SkipCounter, rank: int | None = None) -> Iterator[Event]:
    """Events of a TORCH_TRACE log; what cannot be read is counted in `skips`, never raised.

    A record is a header line and the tab-indented payload lines under it. Payload blocks are
    cut out whole (a regex search and one replace each) rather than line by line: most of a log
    is payload, and a Python step per line was most of the time to open a big one."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    size, pos, line_no = len(text), 0, 1
    while pos < size:
        end = text.find("\n", pos)
        if end < 0:
            end = size
        line = text[pos:end]
        payload: str | None = None
        payload_lines = 0
        after = end + 1
        if after < size and text[after] == "\t":
            block_end = _BLOCK_END.search(text, after)
            stop = block_end.start() if block_end else size
            # Every newline inside the block starts a payload line (`\t...`): split there once,
            # for the payload and its line count both.
            lines = text[after + 1 : stop].split("\n\t")
            payload = "\n".join(lines)
            payload_lines = len(lines)
            after = stop + 1
        header_no = line_no
        line_no += 1 + payload_lines
        pos = after
        if line.startswith("\t"):  # payload lines before any record
            _count(skips, "payload line without a record", header_no, 1 + payload_lines)
            continue
        if not line.strip():
            _count(skips, "payload line without a record", header_no + 1, payload_lines)
            continue
        event = _record(line, payload, header_no, skips, rank)
        if event is None:
            # The payload of a record that could not be read belongs to no record.
            _count(skips, "payload line without a record", header_no + 1, payload_lines)
        elif event is not False:
            yield event


def _count(skips: SkipCounter, reason: str, line: int, count: int) -> None:
    if count > 0:
        skips.counts[reason] += count
        skips.total += count
        skips.first_line.setdefault(reason, line)


def _record(
    line: str, payload: str | None, line_no: int, skips: SkipCounter, rank: int | None
) -> Event | Literal[False] | None:
    """The event of one header line and its payload; None when the header cannot be read
    (its payload is then counted apart), False when the event is dropped for its payload."""
    match = _PREFIX.match(line)
    start = match.end() if match else (0 if line.startswith("{") else -1)
    if start < 0:
        skips.add("not a structured-trace line", line_no)
        return None
    try:
        metadata = _DECODE(line[start:])
    except ValueError:
        skips.add("record is not valid JSON", line_no)
        return None
    except RecursionError:  # json's decoder recurses once per nesting level
        skips.add("record nested too deep to read", line_no)
        return None
    if not isinstance(metadata, dict):
        skips.add("record is not a JSON object", line_no)
        return None
    expected = metadata.get("has_payload")
    if isinstance(expected, str):
        text = payload or ""
        digest = md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()
        if digest != expected:
            skips.add("payload cut short or altered (checksum mismatch)", line_no)
            if len(skips.dropped) < 500:
                skips.dropped.append({**metadata, "line": line_no})
            return False
    name = event_name(metadata)
    if name is None:
        skips.add("record names no event", line_no)
        return False
    return Event(name, metadata, payload, line_no, rank)


def event_from_record(metadata: dict[str, Any], payload: str | None) -> Event | None:
    """An event handed over live by the `torch.__trace` logger (record.metadata/payload)."""
    name = event_name(metadata)
    return None if name is None else Event(name, metadata, payload)
