"""Structured-trace events: one record of torch's `torch.__trace` log, from a file or live."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

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
    metadata: dict
    payload: str | None = None
    line: int | None = None  # 1-based line in the log file
    rank: int | None = None

    @property
    def body(self) -> dict:
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


def event_name(metadata: dict) -> str | None:
    """torch's name for a record: its first non-context key, or the artifact's name."""
    for key, value in metadata.items():
        if key in CONTEXT_KEYS:
            continue
        if key in _NAMED and isinstance(value, dict) and isinstance(value.get("name"), str):
            return value["name"]
        return key
    return None


@dataclass
class SkipCounter:
    """Counts what a reader could not use, by reason, with the first line of each."""

    counts: Counter = field(default_factory=Counter)
    first_line: dict = field(default_factory=dict)

    def add(self, reason: str, line: int | None) -> None:
        self.counts[reason] += 1
        self.first_line.setdefault(reason, line)


def parse_lines(
    lines: Iterable[str], skips: SkipCounter, rank: int | None = None
) -> Iterator[Event]:
    """Events of a TORCH_TRACE log; what cannot be read is counted in `skips`, never raised."""
    pending: tuple[int, dict] | None = None
    payload: list[str] = []

    def finish() -> Event | None:
        line_no, metadata = pending
        text = "\n".join(payload) if payload else None
        expected = metadata.get("has_payload")
        if isinstance(expected, str):
            if text is None:
                text = ""
            digest = hashlib.md5(text.encode("utf-8"), usedforsecurity=False).hexdigest()
            if digest != expected:
                skips.add("payload cut short or altered (checksum mismatch)", line_no)
                return None
        name = event_name(metadata)
        if name is None:
            skips.add("record names no event", line_no)
            return None
        return Event(name, metadata, text, line_no, rank)

    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if line.startswith("\t"):
            if pending is not None:
                payload.append(line[1:])
            else:
                skips.add("payload line without a record", line_no)
            continue
        if pending is not None:
            event = finish()
            if event is not None:
                yield event
            pending, payload = None, []
        if not line.strip():
            continue
        match = _PREFIX.match(line)
        start = match.end() if match else (0 if line.startswith("{") else -1)
        if start < 0:
            skips.add("not a structured-trace line", line_no)
            continue
        try:
            metadata = json.loads(line[start:])
        except ValueError:
            skips.add("record is not valid JSON", line_no)
            continue
        except RecursionError:  # json's decoder recurses once per nesting level
            skips.add("record nested too deep to read", line_no)
            continue
        if not isinstance(metadata, dict):
            skips.add("record is not a JSON object", line_no)
            continue
        pending = (line_no, metadata)
    if pending is not None:
        event = finish()
        if event is not None:
            yield event


def event_from_record(metadata: dict, payload: str | None) -> Event | None:
    """An event handed over live by the `torch.__trace` logger (record.metadata/payload)."""
    name = event_name(metadata)
    return None if name is None else Event(name, metadata, payload)
