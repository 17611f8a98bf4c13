"""One rank's summary: its record as ranks are compared, small enough to merge hundreds of."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, cast

from ..serialize import FormatError, decode, encode
from .compare import RankRecord

SUMMARY_FORMAT = "compilescope.rank_summary"
SUMMARY_VERSION = 1


@dataclasses.dataclass(frozen=True)
class RankSummary:
    """What a rank report needs of one rank (`write_rank` writes it inside the job): its record,
    the world size it knew and its torch version. No graphs, kernels or code."""

    record: RankRecord
    world_size: int | None = None
    torch_version: str = ""

    def to_json(self) -> str:
        record = cast(dict[str, Any], encode(self.record))
        for name in ("partial", "damaged"):  # frozensets: sorted lists in JSON
            if name in record:
                record[name] = sorted(record[name])
        return json.dumps(
            {
                "format": SUMMARY_FORMAT,
                "version": SUMMARY_VERSION,
                "world_size": self.world_size,
                "torch_version": self.torch_version,
                "record": record,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> RankSummary:
        try:
            data = json.loads(text)
        except ValueError as error:
            raise FormatError(f"not JSON: {error}") from None
        if not isinstance(data, dict) or data.get("format") != SUMMARY_FORMAT:
            raise FormatError(f"not a {SUMMARY_FORMAT} document")
        if data.get("version") != SUMMARY_VERSION:
            raise FormatError(f"rank summary version {data.get('version')!r} is not readable")
        record = cast(RankRecord, decode(RankRecord, data.get("record"), "$.record"))
        record = dataclasses.replace(
            record, partial=frozenset(record.partial), damaged=frozenset(record.damaged)
        )
        size = data.get("world_size")
        return cls(record, size if isinstance(size, int) else None, str(data.get("torch_version")))
