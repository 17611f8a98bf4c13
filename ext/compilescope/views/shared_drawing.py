"""A report's graph payloads made by two processes at once: this one and a forked helper (issue 34)."""

# The explorer payloads (grouping and laying out every stage's graph) are about half of a
# one-file report's work. Forked once the capture is read and its graphs parsed, a helper
# makes payloads while this process makes the findings, the summary and the rest of the page;
# then this process makes payloads too. Both take jobs from one queue, biggest first, so
# neither waits long for the other. The payloads are pure functions of the capture, so who
# made one does not change a byte of the page. Linux only, and only for the command line
# (`compilescope report`), where the process is the command: a notebook's kernel has threads,
# and forking it is unsafe.

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from .view_data import PendingGraph

_TOKEN = 4  # bytes per job number in the queue pipe
# A pipe holds 64 KiB: the queue is written whole before the fork, so it must fit.
_QUEUE_MAX = 65_536 // _TOKEN


def payload_json(payload: dict[str, Any]) -> str:
    """One payload as the page's JSON writes it (no spaces; no cycles to check)."""
    return json.dumps(payload, separators=(",", ":"), check_circular=False)


def can_share(jobs: Sequence[PendingGraph]) -> bool:
    """Whether a helper can make some of `jobs`: Linux, two cores or more, and a queue that
    fits a pipe."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    return 1 < len(jobs) <= _QUEUE_MAX and len(os.sched_getaffinity(0)) > 1


class SharedDrawing:
    """`jobs`' payloads as JSON texts, made here and in a forked helper (`start`), or all here
    when no helper could start. `texts()` returns them in the jobs' order."""

    def __init__(self, jobs: Sequence[PendingGraph]) -> None:
        self.jobs = jobs
        self._texts: list[str | None] = [None] * len(jobs)
        self._queue = -1  # read end of the queue pipe
        self._results = -1  # read end of the helper's results pipe
        self._helper = 0  # the helper's pid

    def start(self) -> SharedDrawing:
        """Queue the jobs (biggest first) and fork the helper; on any failure the jobs are
        simply all made here."""
        if not can_share(self.jobs):
            return self
        order = sorted(range(len(self.jobs)), key=lambda i: -self.jobs[i].size)
        try:
            queue_read, queue_write = os.pipe()
        except OSError:
            return self
        try:
            os.write(queue_write, b"".join(i.to_bytes(_TOKEN, "little") for i in order))
        finally:
            os.close(queue_write)  # an empty queue then reads as its end (b"")
        self._queue = queue_read
        try:
            results_read, results_write = os.pipe()
            pid = os.fork()
        except OSError:
            return self  # no helper: this process takes every job from the queue
        if pid == 0:  # the helper: never returns
            os.close(results_read)
            self._helper_main(results_write)
        os.close(results_write)
        self._results, self._helper = results_read, pid
        return self

    def _take(self) -> int | None:
        """The next job's number from the queue, None when it is empty. A pipe read is atomic:
        two processes reading 4 bytes at a time each get whole numbers."""
        if self._queue < 0:
            return None
        token = os.read(self._queue, _TOKEN)
        return int.from_bytes(token, "little") if len(token) == _TOKEN else None

    def _helper_main(self, results: int) -> None:
        """Make jobs until the queue is empty, then send `number\\tjson` lines (JSON text has
        no raw tab or newline) and end the process: nothing of the parent's runs here."""
        code = 1
        try:
            made = []
            while (number := self._take()) is not None:
                made.append(f"{number}\t{payload_json(self.jobs[number]())}\n")
            data = "".join(made).encode("ascii")
            view = memoryview(data)
            while view:
                view = view[os.write(results, view) :]
            code = 0
        except BaseException:  # noqa: BLE001 - whatever it did not send, the parent makes
            pass
        finally:
            os._exit(code)

    def texts(self) -> list[str]:
        """Every job's JSON text, in order: this process takes jobs until the queue is empty,
        then reads what the helper made and makes anything the helper did not send."""
        while (number := self._take()) is not None:
            self._texts[number] = payload_json(self.jobs[number]())
        if self._queue >= 0:
            os.close(self._queue)
            self._queue = -1
        if self._helper:
            self._gather()
        return [
            text if text is not None else payload_json(job())
            for text, job in zip(self._texts, self.jobs, strict=True)
        ]

    def _gather(self) -> None:
        chunks = []
        while chunk := os.read(self._results, 1 << 20):
            chunks.append(chunk)
        os.close(self._results)
        os.waitpid(self._helper, 0)
        self._helper = 0
        data = b"".join(chunks)
        chunks.clear()
        for number, text in _lines(data, len(self._texts)).items():
            self._texts[number] = text


def _lines(data: bytes, limit: int | None = None) -> dict[int, str]:
    """The helper's `number\tjson` lines: job number -> JSON text. A last line with no newline
    after it was cut short (the helper died writing it): not taken. `limit`: job numbers are
    below it."""
    lines = data.split(b"\n")
    lines.pop()  # after the last newline: b"", or a line cut short
    out = {}
    for line in lines:
        number, tab, text = line.partition(b"\t")
        if tab and number.isdigit() and (limit is None or int(number) < limit):
            out[int(number)] = text.decode("ascii", errors="replace")
    return out
