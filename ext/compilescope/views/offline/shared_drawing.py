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
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, BinaryIO

from ..stage_graphs import PendingGraph

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
        self._results: BinaryIO | None = None  # the file the helper writes its payloads to
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
        queue = b"".join(i.to_bytes(_TOKEN, "little") for i in order)
        try:
            # Not blocking: a pipe may hold less than 64 KiB (a user past pipe-user-pages-soft
            # gets one page), and a queue that does not fit is no queue.
            os.set_blocking(queue_write, False)
            whole = os.write(queue_write, queue) == len(queue)
        except OSError:
            whole = False
        finally:
            os.close(queue_write)  # an empty queue then reads as its end (b"")
        if not whole:
            os.close(queue_read)
            return self  # every job made here, in order
        self._queue = queue_read
        try:
            # A file with no name (gone when closed), not a pipe: the helper writes each
            # payload as it makes it and never waits for this process to read.
            where = os.environ.get("TMPDIR") or "/tmp"
            results = os.fdopen(os.open(where, os.O_TMPFILE | os.O_RDWR, 0o600), "w+b")
        except (OSError, AttributeError):  # no O_TMPFILE there: no helper
            return self
        try:
            parent = os.getpid()  # taken here: the helper may start after this process ended
            pid = os.fork()
        except OSError:
            results.close()
            return self  # no helper: this process takes every job from the queue
        if pid == 0:  # the helper: never returns, whatever happens in it
            try:
                self._helper_main(results, parent)
            finally:
                os._exit(1)
        self._results, self._helper = results, pid
        return self

    def _take(self) -> int | None:
        """The next job's number from the queue, None when it is empty. A pipe read is atomic:
        two processes reading 4 bytes at a time each get whole numbers."""
        if self._queue < 0:
            return None
        token = os.read(self._queue, _TOKEN)
        return int.from_bytes(token, "little") if len(token) == _TOKEN else None

    def _helper_main(self, results: BinaryIO, parent: int) -> None:
        """Make jobs until the queue is empty, each written as a `number\tjson` line (JSON
        text has no raw tab or newline), then end the process: nothing of the parent's runs
        here. A line cut short (the helper died writing it) is not taken (`_lines`)."""
        code = 1
        try:
            # The parent gone (it failed, or was stopped): its page will not be written.
            while os.getppid() == parent and (number := self._take()) is not None:
                text = payload_json(self.jobs[number]())
                results.write(b"%d\t%s\n" % (number, text.encode("ascii")))
            results.flush()
            code = 0
        except BaseException:  # noqa: BLE001 - whatever it did not write, the parent makes
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
        if self._results is not None:
            self._gather(self._results)
        return [
            text if text is not None else payload_json(job())
            for text, job in zip(self._texts, self.jobs, strict=True)
        ]

    def _gather(self, results: BinaryIO) -> None:
        os.waitpid(self._helper, 0)  # its writes are all in the file once it has ended
        self._helper, self._results = 0, None
        with results:
            results.seek(0)  # the helper moved the offset both processes share
            for number, text in _lines(results, len(self._texts)):
                self._texts[number] = text


def _lines(lines: Iterable[bytes], limit: int) -> Iterator[tuple[int, str]]:
    """The helper's `number\tjson` lines: job number and JSON text. A line with no newline at
    its end was cut short (the helper died writing it): not taken; nor a number not below
    `limit`."""
    for line in lines:
        if not line.endswith(b"\n"):
            continue
        number, tab, text = line[:-1].partition(b"\t")
        if tab and number.isdigit() and int(number) < limit:
            yield int(number), text.decode("ascii", errors="replace")
