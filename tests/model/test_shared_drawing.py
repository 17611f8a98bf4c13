"""The one-file report's graph payloads made by two processes (views/offline/shared_drawing.py): the
same page as one process makes, every job made once whatever the helper does, no fork where it
cannot help. Forks run in a fresh interpreter (`python -c`), never in pytest's own process."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
import time

import pytest
from compilescope.views.offline import shared_drawing
from compilescope.views.offline.shared_drawing import SharedDrawing, can_share
from conftest import FIXTURES

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux")

# Jobs that say which process made them, slow enough that both processes take some.
_JOBS = """
import json, os, sys, time
from compilescope.views.offline.shared_drawing import SharedDrawing, can_share

class Job:
    def __init__(self, number, size):
        self.number, self.size = number, size
    def __call__(self):
        time.sleep(0.03)  # 24 of them: the helper starts long before the parent could do all
        return {"number": self.number, "pid": os.getpid()}
"""


def _run(script: str) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-c", _JOBS + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_both_processes_make_jobs_and_the_texts_keep_the_jobs_order():
    made = _run(
        """
        jobs = [Job(i, size=i % 5) for i in range(24)]
        assert can_share(jobs)
        texts = SharedDrawing(jobs).start().texts()
        print(json.dumps([dict(json.loads(t), parent=os.getpid()) for t in texts]))
        """
    )
    assert [m["number"] for m in made] == list(range(24))
    parent = made[0]["parent"]
    makers = {m["pid"] for m in made}
    assert parent in makers and len(makers) == 2  # this process and one helper


def test_jobs_the_helper_does_not_send_are_made_here():
    """A helper that dies (here: at its first job) sends nothing; the parent makes them all."""
    made = _run(
        """
        parent = os.getpid()
        class Dying(Job):
            def __call__(self):
                if os.getpid() != parent:
                    os._exit(3)
                return super().__call__()
        jobs = [Dying(i, size=1) for i in range(6)]
        texts = SharedDrawing(jobs).start().texts()
        print(json.dumps([json.loads(t) for t in texts]))
        """
    )
    assert [m["number"] for m in made] == list(range(6))
    assert len({m["pid"] for m in made}) == 1


def test_a_helper_that_fails_at_once_never_runs_the_parents_code():
    """Whatever the helper raises, it ends there: it never returns into the report (which
    would then be written twice, by two processes). Here its loop is replaced by one that
    raises; the parent makes every job and prints once."""
    made = _run(
        """
        SharedDrawing._helper_main = lambda self, results, parent: int("not a number")
        jobs = [Job(i, size=1) for i in range(4)]
        try:
            drawing = SharedDrawing(jobs).start()
        except ValueError:  # as `compilescope report` catches it: an escaped helper goes on
            drawing = SharedDrawing(jobs)
        print(json.dumps([json.loads(t) for t in drawing.texts()]))
        """
    )
    assert [m["number"] for m in made] == [0, 1, 2, 3]


def test_the_helper_stops_when_its_parent_is_gone(tmp_path):
    """A report that fails after the fork leaves no helper making payloads for nobody: it stops
    after the job in hand (jobs log here what they made; 20 of 0.1 s each). Its parent's pid is
    taken before the fork: a helper that asked for it first thing could start after the parent
    ended, and take its new parent for the old one."""
    made = tmp_path / "made.txt"
    helper = _run(
        f"""
        class Logged(Job):
            def __call__(self):
                with open({str(made)!r}, "a") as out:
                    out.write(f"{{os.getpid()}}\\n")
                return super().__call__() | {{"slow": time.sleep(0.1)}}
        drawing = SharedDrawing([Logged(i, size=1) for i in range(20)]).start()
        print(json.dumps([drawing._helper]), flush=True)
        os._exit(0)  # the parent gone, none of the jobs taken here
        """
    )[0]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(helper):
        time.sleep(0.05)
    assert not _alive(helper)
    # It may see its parent gone before its first job (then it makes none): at most the job
    # in hand and the one it took as the parent ended; without the check, all 20.
    lines = made.read_text().split() if made.exists() else []
    assert set(lines) <= {str(helper)} and len(lines) <= 2


def _alive(pid: int) -> bool:
    """Running (an ended process no one reaped is a zombie: ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_a_line_cut_short_is_not_taken():
    """The helper writes `number\\tjson` lines; a line with no newline at its end was cut (the
    helper died writing it) and is left for the parent to make."""

    def lines(data: bytes) -> dict[int, str]:
        return dict(shared_drawing._lines(io.BytesIO(data), limit=5))

    assert lines(b'0\t{"a":1}\n1\t{"b":\n') == {0: '{"a":1}', 1: '{"b":'}
    assert lines(b'0\t{"a":1}\n1\t{"b"') == {0: '{"a":1}'}
    assert lines(b"") == {}
    assert lines(b"x\t{}\n7\t{}\n") == {}  # not a job number, or not one of the jobs


def test_a_queue_the_pipe_cannot_hold_means_no_helper(monkeypatch):
    """A pipe may hold less than the queue (a user past pipe-user-pages-soft gets one page):
    the write does not block, and every job is made here, in order."""

    class Job:
        size = 1

        def __call__(self):
            return {"made": True}

    monkeypatch.setattr(shared_drawing.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(shared_drawing.os, "write", lambda fd, data: len(data) // 2)
    forked = []

    def fork():  # recorded, never done: a fork inside pytest's own process is no test's job
        forked.append(1)
        raise OSError("not here")

    monkeypatch.setattr(shared_drawing.os, "fork", fork)
    drawing = SharedDrawing([Job(), Job(), Job()]).start()
    assert not forked and drawing.texts() == ['{"made":true}'] * 3


def test_no_helper_with_one_core_or_one_job(monkeypatch):
    class Job:
        size = 1

        def __call__(self):
            return {"made": True}

    monkeypatch.setattr(shared_drawing.os, "sched_getaffinity", lambda pid: {0})
    assert not can_share([Job(), Job()])
    drawing = SharedDrawing([Job(), Job()]).start()  # no fork: made here, in order
    assert drawing.texts() == ['{"made":true}', '{"made":true}']
    monkeypatch.setattr(shared_drawing.os, "sched_getaffinity", lambda pid: {0, 1})
    assert not can_share([Job()])
    assert can_share([Job(), Job()])


@pytest.mark.parametrize("log", ["gpt2.log.gz", "small_resnet.log.gz"])
def test_the_command_line_report_is_the_page_one_process_makes(tmp_path, log):
    """`compilescope report LOG` (the process is the command: a helper makes payloads) writes
    the same bytes as write_report in one process (every payload made here)."""
    from compilescope import findings, load_trace
    from compilescope.views.offline.report import write_report

    shared = tmp_path / "shared.html"
    out = subprocess.run(
        [sys.executable, "-m", "compilescope", "report", str(FIXTURES / log), "-o", str(shared)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    cap = load_trace(FIXTURES / log)
    alone = write_report(cap, tmp_path / "alone.html", found=findings(cap))
    assert shared.read_bytes() == alone.read_bytes()
